"""``tf.keras.callbacks``: History, EarlyStopping, ModelCheckpoint,
LearningRateScheduler, LambdaCallback and the progress bar logger."""

from __future__ import annotations

import json
import warnings
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.keras.io_utils import print_msg

__all__ = ["Callback", "CallbackList", "History", "EarlyStopping", "ModelCheckpoint", "LearningRateScheduler",
           "LambdaCallback", "ProgbarLogger", "ReduceLROnPlateau", "TerminateOnNaN", "TensorBoard",
           "BackupAndRestore", "CSVLogger"]


class Callback:
    """Base class: override the ``on_*`` hooks; ``self.model`` is the model being trained."""

    def __init__(self) -> None:
        self.model = None
        self.params: dict = {}

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict) -> None:
        self.params = params

    def on_train_begin(self, logs: dict | None = None) -> None: ...
    def on_train_end(self, logs: dict | None = None) -> None: ...
    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None: ...
    def on_batch_begin(self, batch: int, logs: dict | None = None) -> None: ...
    def on_batch_end(self, batch: int, logs: dict | None = None) -> None: ...

    # Keras's aliases: a training batch's hooks call the older on_batch_begin/on_batch_end
    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.on_batch_end(batch, logs=logs)

    def on_test_begin(self, logs: dict | None = None) -> None: ...
    def on_test_end(self, logs: dict | None = None) -> None: ...
    def on_test_batch_begin(self, batch: int, logs: dict | None = None) -> None: ...
    def on_test_batch_end(self, batch: int, logs: dict | None = None) -> None: ...
    def on_predict_begin(self, logs: dict | None = None) -> None: ...
    def on_predict_end(self, logs: dict | None = None) -> None: ...
    def on_predict_batch_begin(self, batch: int, logs: dict | None = None) -> None: ...
    def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None: ...


class CallbackList:
    """Calls every callback's hook in order."""

    def __init__(self, callbacks: list, model: Any = None, **params: Any) -> None:
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            if model is not None:
                cb.set_model(model)
            cb.set_params(params)

    def __getattr__(self, hook: str) -> Callable:
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        # As Keras's CallbackList: ``logs`` is always passed (``{}`` when there are none), positionally to the
        # train/test/predict/epoch hooks and as ``logs=`` to the batch hooks (a user's ``on_train_begin(self,
        # logs)`` without a default works).
        batch_hook = hook.endswith(("_batch_begin", "_batch_end"))
        lead = 1 if batch_hook or hook.startswith("on_epoch_") else 0  # the batch or epoch number

        def call(*args: Any, logs: dict | None = None) -> None:
            head, rest = args[:lead], args[lead:]
            given = rest[0] if rest else logs
            logs = {} if given is None else given
            for cb in self.callbacks:
                if batch_hook:
                    getattr(cb, hook)(*head, logs=logs)
                else:
                    getattr(cb, hook)(*head, logs)

        return call


class History(Callback):
    """Records every epoch's logs: ``history.history["loss"]`` is a list per epoch."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


def _monitor_op(mode: str, monitor: str) -> tuple[Callable, bool]:
    """(better(a, b), higher_is_better) for ``mode`` min/max/auto."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"mode {mode!r} is unknown, fallback to auto mode.", stacklevel=3)
        mode = "auto"
    if mode == "auto":
        name = monitor.removeprefix("val_")
        mode = "max" if name.endswith(("acc", "accuracy", "auc")) or name.startswith(("acc", "auc")) else "min"
    if mode == "max":
        return np.greater, True
    return np.less, False


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has not improved by ``min_delta`` for
    ``patience`` epochs; optionally restores the best weights."""

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0, patience: int = 0, verbose: int = 0,
                 mode: str = "auto", baseline: float | None = None, restore_best_weights: bool = False,
                 start_from_epoch: int = 0) -> None:
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, patience, verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.monitor_op, higher = _monitor_op(mode, monitor)
        self.min_delta = abs(min_delta) * (1 if higher else -1)
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.wait, self.stopped_epoch, self.best_weights, self.best_epoch = 0, 0, None, 0
        self.best = None

    def _improved(self, current: float, reference: float | None) -> bool:
        if reference is None:
            return True
        return bool(self.monitor_op(current - self.min_delta, reference))

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                          f"Available metrics are: {','.join((logs or {}).keys())}", stacklevel=2)
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._improved(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improved(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            print_msg(f"Epoch {self.stopped_epoch + 1}: early stopping")
        # Keras 3 restores the best weights at the end of training, stopped early or not
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print_msg(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at each epoch start to
    ``schedule(epoch, lr)`` (or ``schedule(epoch)``)."""

    def __init__(self, schedule: Callable, verbose: int = 0) -> None:
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        opt = self.model.optimizer
        if not hasattr(opt, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        lr = float(np.asarray(opt.learning_rate.numpy() if hasattr(opt.learning_rate, "numpy") else opt.learning_rate))
        try:
            new = self.schedule(epoch, lr)
        except TypeError:
            new = self.schedule(epoch)
        new = float(new.numpy() if hasattr(new, "numpy") else new)
        if not np.isfinite(new):
            raise ValueError(f'The output of the "schedule" function should be a finite float. Got: {new}')
        opt.learning_rate = new
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {new}.")

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is not None:
            lr = self.model.optimizer.learning_rate
            logs["learning_rate"] = float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))


def _lr_value(opt: Any) -> float:
    lr = opt.learning_rate
    return float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` once ``monitor`` has not improved by ``min_delta``
    for ``patience`` epochs (then waits ``cooldown`` epochs); never below ``min_lr`` (Keras 3's rule)."""

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10, verbose: int = 0,
                 mode: str = "auto", min_delta: float = 1e-4, cooldown: int = 0, min_lr: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        self.monitor, self.factor, self.min_lr, self.patience = monitor, factor, min_lr, patience
        self.verbose, self.cooldown = verbose, cooldown
        self.monitor_op, higher = _monitor_op(mode, monitor)
        self.min_delta = abs(min_delta) * (1 if higher else -1)
        self.best = None
        self.cooldown_counter = self.wait = 0

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.best, self.cooldown_counter, self.wait = None, 0, 0

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs if logs is not None else {}
        opt = self.model.optimizer
        logs["learning_rate"] = _lr_value(opt)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs.keys())}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.best is None or self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = _lr_value(opt)
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    opt.learning_rate = new_lr
                    if self.verbose > 0:
                        print_msg(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class TerminateOnNaN(Callback):
    """Stops training (or raises, with ``raise_error=True``) when a batch's loss is NaN or Inf."""

    def __init__(self, raise_error: bool = False) -> None:
        super().__init__()
        self.raise_error = raise_error

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        loss = (logs or {}).get("loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            if self.raise_error:
                raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss}. "
                                   f"Terminating training immediately.")
            print_msg(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback from plain functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    def __init__(self, **hooks: Callable) -> None:
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_"):
                raise TypeError(f"LambdaCallback got an unknown hook {name!r}")
            setattr(self, name, fn)


class ProgbarLogger(Callback):
    """Keras 3's progress bars on stdout for ``fit`` (one per epoch, ``Epoch 1/N`` above it when N > 1),
    ``evaluate`` and ``predict`` (``tf.keras.utils.Progbar``; ``verbose=2``: one line per epoch). Inside ``fit``
    the validation is silent."""

    def __init__(self, verbose: int = 1) -> None:
        super().__init__()
        self.verbose, self.epochs, self.target, self.seen, self.progbar = verbose, 1, None, 0, None
        self._called_in_fit = False

    def set_params(self, params: dict) -> None:
        super().set_params(params)
        verbose = params.get("verbose", self.verbose)
        self.verbose = 1 if verbose == "auto" else int(verbose)
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def _new_bar(self) -> None:
        from tapeflow.keras.utils import Progbar

        self.seen = 0
        self.progbar = Progbar(self.target, verbose=self.verbose, stateless_metrics=())

    def _update(self, batch: int, logs: dict | None) -> None:
        if self.progbar is None:
            self._new_bar()
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs: dict | None) -> None:
        if self.progbar is None:
            self._new_bar()
        if self.target is None:
            self.target = self.progbar.target = self.seen
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._called_in_fit = True

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._new_bar()
        if self.verbose and self.epochs > 1:
            print_msg(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._update(batch, logs)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._finalize(logs)

    def on_test_begin(self, logs: dict | None = None) -> None:
        if not self._called_in_fit:
            self._new_bar()

    def on_test_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_test_end(self, logs: dict | None = None) -> None:
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_begin(self, logs: dict | None = None) -> None:
        self._new_bar()

    def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._update(batch, None)

    def on_predict_end(self, logs: dict | None = None) -> None:
        self._finalize(logs)


class SwapEMAWeights(Callback):
    """Puts the optimizer's moving averages (``use_ema=True``) into the model for evaluation and prediction,
    and the trained weights back after (also around each epoch's end with ``swap_on_epoch``), as Keras 3.15:
    in place, by TF's add-and-subtract swap."""

    def __init__(self, swap_on_epoch: bool = False) -> None:
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _optimizers(self) -> list:
        opt = getattr(self.model.optimizer, "inner_optimizer", self.model.optimizer)
        if not hasattr(opt, "_model_variables_moving_average"):
            raise ValueError(f"SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. Received: "
                             f"use_ema={opt.use_ema}")
        return [opt]

    def _swap_variables(self) -> None:
        for opt in self._optimizers():
            for var, avg in zip(opt._trainable_variables, opt._model_variables_moving_average):
                var.assign_add(avg)  # (TF's swap: its float rounding included)
                avg.assign(var - avg)
                var.assign(var - avg)

    def _finalize_ema_values(self) -> None:
        for opt in self._optimizers():
            for var, avg in zip(opt._trainable_variables, opt._model_variables_moving_average):
                avg.assign(var)

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True
            if epoch == self.params["epochs"] - 1:  # fit's finalize_variable_values then keeps these weights
                self._finalize_ema_values()

    def on_test_begin(self, logs: Any = None) -> None:
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs: Any = None) -> None:
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    on_predict_begin = on_test_begin

    def on_predict_end(self, logs: Any = None) -> None:
        if not self._ema_weights_in_model:  # (Keras 3.15's test: the averages stay in the model after predict)
            self._swap_variables()
            self._ema_weights_in_model = False

class RemoteMonitor(Callback):
    """Posts each epoch's logs to a server (Keras 3.15's): ``root + path``, the JSON in form field ``field`` or,
    with ``send_as_json``, as the JSON body. Needs the ``requests`` package; an unreachable server warns."""

    def __init__(self, root: str = "http://localhost:9000", path: str = "/publish/epoch/end/", field: str = "data",
                 headers: Any = None, send_as_json: bool = False) -> None:
        super().__init__()
        self.root, self.path, self.field = root, path, field
        self.headers, self.send_as_json = headers, send_as_json

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        try:
            import requests
        except ImportError:
            raise ImportError("RemoteMonitor requires the `requests` library.") from None
        send = {"epoch": epoch}
        for k, v in (logs or {}).items():
            send[k] = v.item() if isinstance(v, (np.ndarray, np.generic)) else v
        try:
            if self.send_as_json:
                requests.post(self.root + self.path, json=send, headers=self.headers)
            else:
                requests.post(self.root + self.path, {self.field: json.dumps(send)}, headers=self.headers)
        except requests.exceptions.RequestException:
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}", stacklevel=2)

from tapeflow.keras.tensorboard import TensorBoard  # noqa: E402 - subclasses Callback above
from tapeflow.keras.saving.callbacks import BackupAndRestore, CSVLogger, ModelCheckpoint  # noqa: E402, F401

# Keras names tapeflow lacks: NotImplementedError (also an AttributeError, for hasattr)
from tapeflow.keras._missing import module_getattr as _module_getattr  # noqa: E402

_missing_getattr = _module_getattr("tf.keras.callbacks", frozenset())


def __getattr__(name: str):
    if name == "TrainingDoctor":  # tapeflow extension: lives with tf.debugging.diagnose_training_step
        from tapeflow.keras.training_doctor import TrainingDoctor

        return TrainingDoctor
    return _missing_getattr(name)
