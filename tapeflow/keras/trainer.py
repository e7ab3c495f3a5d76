"""Keras' training API for models: ``compile``, ``fit``, ``evaluate``,
``predict``, ``save_weights`` / ``load_weights``, ``summary``.

``fit`` runs the same loop a user writes by hand — forward under a
``GradientTape``, ``tape.gradient(loss, model.trainable_variables)``,
``optimizer.apply_gradients`` — one batch at a time. The step runs under
``tf.function`` when graph mode is available (``compile(run_eagerly=False)``,
the default); ``run_eagerly=True`` or ``tapeflow.keras.trainer.USE_TF_FUNCTION
= False`` keeps it eager. If tracing the step fails, fit warns once and falls
back to the eager step.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np

from tapeflow.eager.backprop import GradientTape
from tapeflow.framework import distribution_hooks as dist_hooks
from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow.keras import callbacks as cbks
from tapeflow.keras import config as keras_config
from tapeflow.keras.layers.base import _ctx as _layer_ctx
from tapeflow.keras.py_dataset import PyDataset
from tapeflow.keras import losses as losses_mod
from tapeflow.keras import metrics as metrics_mod
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo
from tapeflow.ops import random_ops

__all__ = ["Trainer", "USE_TF_FUNCTION", "format_summary"]

# Global switch: compile the train/test steps with tf.function when available.
USE_TF_FUNCTION = True
_ACTUAL = object()  # a step's batch dimension is the batch's own (run eagerly, train_on_batch)


def _to_numpy(x: Any) -> Any:
    if isinstance(x, (Tensor, Variable)):
        return x.numpy()
    return x


def _log_value(result: Any) -> Any:
    """A metric's result in the logs: a float, or a NumPy array for a metric of several thresholds (Keras keeps
    ``Recall(thresholds=[0.3, 0.6])``'s array in ``history``; the progress bar prints its mean)."""
    v = np.asarray(result.numpy())
    return float(v) if v.ndim == 0 else v


def _pythonify_logs(logs: dict) -> dict:
    """Keras's ``pythonify_logs``: keys sorted, a nested dict (``CompileMetrics.result()`` in a custom step's
    logs) flattened into its items, values made floats where they can be."""
    out: dict = {}
    for key, value in sorted(logs.items()):
        if isinstance(value, dict):
            out.update(_pythonify_logs(value))
            continue
        try:
            out[key] = float(np.asarray(_to_numpy(value)))
        except (TypeError, ValueError):
            out[key] = value
    return out


def _is_sparse(v: Any) -> bool:
    from tapeflow.framework.sparse_tensor import SparseTensor

    return isinstance(v, SparseTensor)


def _rows(v: Any) -> int:
    return int(v.dense_shape.numpy()[0]) if _is_sparse(v) else int(np.shape(v)[0])


def _num_samples(x: Any) -> int:
    leaves = [v for v in nest.flatten(x) if v is not None]
    if not leaves:
        raise ValueError("fit/evaluate/predict: `x` is empty.")
    n = _rows(leaves[0])
    for v in leaves[1:]:
        if _rows(v) != n:
            raise ValueError(f"Data cardinality is ambiguous: arrays of {n} and {_rows(v)} samples. "
                             f"Make sure all arrays contain the same number of samples.")
    return n


def _sparse_take(v: Any, idx: Any) -> Any:
    """Rows ``idx`` (a slice or an index array) of a SparseTensor, renumbered from 0, in row-major order."""
    from tapeflow.framework.sparse_tensor import SparseTensor

    ind, vals, shape = v.indices.numpy(), v.values.numpy(), v.dense_shape.numpy()
    rows = np.arange(shape[0])[idx]
    pos = np.full(int(shape[0]), -1, np.int64)
    pos[rows] = np.arange(len(rows))
    new_row = pos[ind[:, 0]] if len(ind) else np.zeros(0, np.int64)
    keep = new_row >= 0
    out = np.concatenate([new_row[keep, None], ind[keep, 1:]], axis=1)
    order = np.lexsort(out.T[::-1]) if len(out) else np.zeros(0, np.int64)
    return SparseTensor(out[order], vals[keep][order], np.concatenate([[len(rows)], shape[1:]]).astype(np.int64))


def _take(x: Any, idx: Any) -> Any:
    return nest.map_structure(lambda v: None if v is None else _sparse_take(v, idx) if _is_sparse(v) else v[idx], x)


def _as_arrays(x: Any) -> Any:
    def conv(v):
        if v is None or _is_sparse(v):  # a SparseTensor stays one: its batches are row slices
            return v
        v = _to_numpy(v)
        return np.asarray(v)

    return nest.map_structure(conv, x)


def _from_pandas(x: Any) -> Any:
    """pandas inputs as Keras 3 takes them: a DataFrame's values, a Series as one column ``(n, 1)``."""
    def conv(v: Any) -> Any:
        mod = type(v).__module__
        if mod.startswith("pandas") and hasattr(v, "to_numpy"):
            arr = v.to_numpy()
            return arr[:, None] if arr.ndim == 1 else arr
        return v

    if isinstance(x, dict) and not hasattr(x, "to_numpy"):
        return {k: conv(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(conv(v) for v in x) if not hasattr(x, "_fields") else x
    return conv(x)


def _is_dataset(x: Any) -> bool:
    return x is not None and not isinstance(x, (np.ndarray, Tensor, Variable, list, tuple, dict)) and \
        hasattr(x, "__iter__")


def _step_tensor(v: Any) -> Any:
    if v is None or isinstance(v, Tensor) or _is_sparse(v):
        return v
    return convert_to_tensor(v)


def _unpack(batch: Any) -> tuple:
    if isinstance(batch, tuple):
        if len(batch) == 1:
            return batch[0], None, None
        if len(batch) == 2:
            return batch[0], batch[1], None
        if len(batch) == 3:
            return batch
    return batch, None, None


# -- multi-process hooks (tf.distribute.MultiWorkerMirroredStrategy under MPI) --------------------------
def _under_strategy(method):
    """Runs ``fit``/``evaluate``/``predict`` inside the multi-process strategy's scope, if there is one."""
    import functools

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if dist_hooks.strategy is None:
            return method(self, *args, **kwargs)
        for m in self._flat_metrics():
            m._sync_replicas = True  # the logs every rank sees are the metrics over all ranks
        with dist_hooks.strategy.scope():
            return method(self, *args, **kwargs)

    return run


def _is_chief() -> bool:
    return dist_hooks.strategy is None or dist_hooks.strategy._comm.rank == 0


def _split(data: Any) -> Any:
    """Each rank's slice of every global batch (one process: ``data`` itself)."""
    return data if dist_hooks.strategy is None else dist_hooks.strategy._split_batches(data)


def _spec_batch(ds: Any) -> int | None:
    """The batch dimension of a dataset's ``element_spec`` (its first component's), None when unknown."""
    try:
        spec = nest.flatten(ds.element_spec)[0]
        return spec.shape[0] if spec.shape.rank else None
    except (AttributeError, IndexError, TypeError, ValueError):
        return None


def _any_rank(flag: bool) -> bool:
    """Whether any rank wants per-batch logs (reading them is a collective: all ranks must, or none)."""
    if dist_hooks.strategy is None:
        return flag
    return bool(dist_hooks.strategy._comm.allreduce([np.array(int(flag))], "max")[0])


def _creation_strategy() -> Any:
    """The tf.distribute strategy whose scope is open (None outside any; tf.distribute not loaded: none)."""
    import sys

    strategies = sys.modules.get("tapeflow.distribute.strategies")
    if strategies is None or not strategies.has_strategy():
        return None
    return strategies.get_strategy()


def _unscale(loss: Any) -> Any:
    return loss if dist_hooks.strategy is None else losses_mod.unscale_loss_for_distribution(loss)


class _ArrayBatches:
    """Batches of in-memory arrays; reshuffled at each ``epoch()`` if asked."""

    def __init__(self, x: Any, y: Any, sw: Any, batch_size: int | None, shuffle: Any, steps: int | None = None) -> None:
        for leaf in nest.flatten((x, y, sw)):  # Keras's can_convert_arrays: a list of Python strings is not data
            if not (leaf is None or isinstance(leaf, (np.ndarray, Tensor, Variable)) or hasattr(leaf, "__array__")
                    or hasattr(leaf, "_type_spec")):
                raise ValueError(f"Unrecognized data type: x={x} (of type {type(x)})")
            # Keras's array slicing asks whether each array is a float (standardize_dtype): NumPy str/bytes
            # (and datetime) arrays are no Keras dtype; object arrays of strings are
            if isinstance(leaf, np.ndarray) and leaf.dtype.kind in "USMmV":
                raise ValueError(f"Invalid dtype: {leaf.dtype.name}")
        self.x, self.y, self.sw = _as_arrays(x), _as_arrays(y), _as_arrays(sw)
        self.n = _num_samples(self.x)
        for what, v in (("y", self.y), ("sample_weight", self.sw)):
            if v is not None and _num_samples(v) != self.n:
                raise ValueError(f"Data cardinality is ambiguous: x has {self.n} samples but {what} has "
                                 f"{_num_samples(v)}. Make sure all arrays contain the same number of samples.")
        # as Keras's ArrayDataAdapter: with no batch_size, `steps` batches cover the arrays (else 32 a batch)
        self.batch_size = int(batch_size) if batch_size else (math.ceil(self.n / steps) if steps else 32)
        self.shuffle = shuffle
        self.steps = math.ceil(self.n / self.batch_size)
        # the batch dimension Keras's dataset of these arrays declares: None when the last batch is partial
        self.static_batch = self.batch_size if self.n % self.batch_size == 0 else None

    def epoch(self):
        order = None
        if self.shuffle:
            # Keras 3 (TF backend) shuffles in a tf.data map function that each epoch's new iterator
            # instantiates afresh: with a global seed, every epoch (and every fit) of n samples takes the
            # same order, TF's RandomShuffle of range(n); shuffle="batch" shuffles within each batch
            sizes = [min(self.batch_size, self.n - i * self.batch_size) for i in range(self.steps)]
            if self.shuffle == "batch":
                order = np.concatenate([o + i * self.batch_size for i, o in
                                        enumerate(random_ops.fresh_shuffle_orders(sizes))]) if sizes else None
            else:
                order = random_ops.fresh_shuffle_orders([self.n])[0]
            if dist_hooks.strategy is not None:  # one order for all ranks: rank 0's
                order = dist_hooks.strategy._comm.broadcast([order])[0]
        for i in range(self.steps):
            sl = slice(i * self.batch_size, min((i + 1) * self.batch_size, self.n))
            idx = order[sl] if order is not None else sl
            yield _take(self.x, idx), _take(self.y, idx) if self.y is not None else None, \
                _take(self.sw, idx) if self.sw is not None else None


class _ArrayPasses:
    """``_ArrayBatches`` as an iterable of known length: each ``iter()`` is one (reshuffled) pass."""

    def __init__(self, data: _ArrayBatches) -> None:
        self._data = data

    def __len__(self) -> int:
        return self._data.steps

    def __iter__(self):
        return iter(self._data.epoch())


class _DatasetBatches:
    """Batches from an iterable (``tf.data.Dataset``) of ``(x, y[, sw])``, read as Keras 3's ``EpochIterator``
    reads them: a fresh iterator per epoch (one iterator on across epochs with ``steps_per_epoch``), and
    after a pass of a known number of batches the next pass's iterator is made at once (TF draws a
    reshuffling dataset's seeds then, so each epoch's shuffle order is TF's). Running out of data warns; a
    dataset of unknown length learns its length from its first pass, as Keras."""

    def __init__(self, ds: Any, steps: int | None) -> None:
        self.ds = ds
        self._steps_per_epoch = steps
        self._it, self._seen = None, 0
        try:
            card = ds.cardinality()
            card = int(card.numpy() if hasattr(card, "numpy") else card)
            self._num_batches = card if card >= 0 else None
        except (AttributeError, TypeError):
            try:
                self._num_batches = len(ds)
            except TypeError:
                self._num_batches = None
        self.steps = steps if steps is not None else self._num_batches
        self.static_batch = _spec_batch(ds)

    def build_peek(self) -> None:
        """Keras's symbolic build under a strategy: one batch of a fresh iterator, which is then dropped."""
        try:
            next(iter(self.ds))
        except StopIteration:
            pass
        self._it, self._seen = None, 0

    def epoch(self):
        steps = self._steps_per_epoch or self._num_batches
        if steps is None or steps < 0:  # unknown length: read to the end (0: an empty dataset, no batch)
            it, self._seen = iter(self.ds), 0
            while True:
                self._seen += 1
                try:
                    batch = next(it)
                except StopIteration:
                    self._ran_out()
                    return
                yield _unpack(batch)
        if self._it is None or self._steps_per_epoch is None:
            self._it, self._seen = iter(self.ds), 0
        for _ in range(steps):
            if self._num_batches and self._seen >= self._num_batches:
                if self._steps_per_epoch:
                    warnings.warn(_RAN_OUT, stacklevel=2)
                break
            self._seen += 1
            try:
                batch = next(self._it)
            except StopIteration:
                self._ran_out()
                return
            yield _unpack(batch)
        if self._num_batches and self._seen >= self._num_batches:
            self._it, self._seen = iter(self.ds), 0

    def _ran_out(self) -> None:
        if self._num_batches is None:
            self._num_batches = self._seen
        warnings.warn(_RAN_OUT, stacklevel=3)
        self._it = None


class _PyDatasetBatches:
    """Batches of a ``tf.keras.utils.PyDataset`` (an ``ImageDataGenerator`` iterator...), read as Keras 3's
    TF backend reads them: ``ds[i]`` in order (``random.shuffle``d per pass when ``shuffle``),
    ``on_epoch_begin``/``on_epoch_end`` around each epoch. Keras first reads two batches for the dataset's
    element spec and (in fit and evaluate) ends an epoch before the first: an iterator's draws and
    shuffles follow from that."""

    def __init__(self, ds: PyDataset, steps: int | None, shuffle: bool, reset: bool = True,
                 build_peek: bool = False) -> None:
        self.ds, self.shuffle = ds, bool(shuffle)
        self._num_batches = ds.num_batches
        if self._num_batches is None and shuffle:
            warnings.warn("`shuffle=True` was passed, but will be ignored since the data `x` was provided as an "
                          "infinite PyDataset. The PyDataset is expected to already be shuffled.", stacklevel=3)
        peek = 2 if self._num_batches is None else min(2, self._num_batches)
        batches = [self._standardize(ds[i]) for i in range(peek)]
        if not batches:
            raise ValueError("The PyDataset has length 0")
        self._explicit_steps = steps is not None
        self.steps = int(steps) if steps is not None else self._num_batches
        self._it, self._seen = None, 0
        if build_peek:
            self.build_peek()
        if reset:
            self.reset()

    def reset(self) -> None:
        self._it, self._seen = None, 0
        self.ds.on_epoch_end()

    def build_peek(self) -> None:
        """Keras's symbolic build under a strategy: an epoch begun and one batch read (``reset`` ends it)."""
        self.ds.on_epoch_begin()
        next(self._pass(), None)

    @staticmethod
    def _standardize(batch: Any) -> tuple:
        if isinstance(batch, dict):
            return (batch,)
        if isinstance(batch, np.ndarray):
            batch = (batch,)
        if isinstance(batch, list):
            batch = tuple(batch)
        if not isinstance(batch, tuple) or len(batch) not in {1, 2, 3}:
            raise ValueError("PyDataset.__getitem__() must return a tuple or a dict. If a tuple, it must be ordered "
                             "either (input,) or (inputs, targets) or (inputs, targets, sample_weights). Received: "
                             f"{str(batch)[:100]}... of type {type(batch)}")
        return batch

    def _pass(self):
        if self._num_batches is None:
            i = 0
            while True:
                yield self._standardize(self.ds[i])
                i += 1
        indices = list(range(self._num_batches))
        if self.shuffle:
            import random

            random.shuffle(indices)
        for i in indices:
            yield self._standardize(self.ds[i])

    def epoch(self):
        self.ds.on_epoch_begin()
        if self._it is None or not self._explicit_steps:
            self._it, self._seen = self._pass(), 0
        for _ in range(self.steps) if self.steps is not None else iter(int, 1):
            if self._num_batches and self._seen >= self._num_batches:
                if self._explicit_steps:
                    warnings.warn(_RAN_OUT, stacklevel=2)
                break
            self._seen += 1
            try:
                batch = next(self._it)
            except StopIteration:
                warnings.warn(_RAN_OUT, stacklevel=2)
                self._it = None
                break
            yield _unpack(batch)
        if self._num_batches and self._seen >= self._num_batches:
            self._it, self._seen = self._pass(), 0
        self.ds.on_epoch_end()


_RAN_OUT = ("Your input ran out of data; interrupting training. Make sure that your dataset or generator can "
            "generate at least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` function "
            "when building your dataset.")


class _AutoAccuracy(metrics_mod.Metric):
    """``metrics=["accuracy"]``: Keras 3 picks the accuracy from the shapes
    of the first batch (and the loss): binary when predictions have one
    column (or the loss is binary cross-entropy), sparse categorical when the
    labels have one axis less (or a last axis of 1), categorical otherwise."""

    def __init__(self, name: str, loss: Any) -> None:
        self._loss, self._inner = loss, None
        super().__init__(name=name)

    def reset_state(self) -> None:
        if self._inner is not None:
            self._inner.reset_state()

    def _pick(self, y_true: Any, y_pred: Any) -> metrics_mod.Metric:
        fn = getattr(self._loss, "fn", self._loss)
        loss_name = self._loss if isinstance(self._loss, str) else getattr(fn, "__name__", "")
        yt, yp = tuple(y_true._shape_tuple()), tuple(y_pred._shape_tuple())
        if (yp and yp[-1] == 1) or "binary_crossentropy" in loss_name:
            return metrics_mod.BinaryAccuracy(name=self.name)
        if len(yt) == len(yp) - 1 or (yt and yt[-1] == 1):
            return metrics_mod.SparseCategoricalAccuracy(name=self.name)
        return metrics_mod.CategoricalAccuracy(name=self.name)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if self._inner is None:
            self._inner = self._pick(y_true, y_pred)
        self._inner.update_state(y_true, y_pred, sample_weight=sample_weight)

    def result(self) -> Tensor:
        return self._inner.result() if self._inner is not None else convert_to_tensor(np.float32(0.0))

    @property
    def variables(self) -> list:
        return self._inner.variables if self._inner is not None else []


class CompileMetrics(metrics_mod.Metric):
    """Keras 3's holder of the metrics ``compile`` made: ``model.metrics`` is
    ``[<Mean name=loss>, <CompileMetrics name=compile_metrics>]`` and this
    one's ``metrics`` lists them (empty until the first batch, as Keras);
    its ``result()`` is a dict of theirs."""

    def __init__(self, members: list, update: Any = None) -> None:
        self._members = members  # every metric, built or not (the trainer updates, resets and syncs these)
        self._update = update  # the model's update of them (by output, weighted or not)
        self.built = False
        super().__init__(name="compile_metrics")

    @property
    def metrics(self) -> list:
        return list(self._members) if self.built else []

    @property
    def variables(self) -> list:
        return [v for m in self.metrics for v in m.variables]

    def reset_state(self) -> None:
        if not self.built:  # as Keras: a metric object shared with a model evaluated before keeps its state
            return  # until this model's first batch (TF's imbalanced_data tutorial shows it in epoch 1's logs)
        for m in self._members:
            m.reset_state()

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        """A custom ``train_step``'s ``metric.update_state(y, y_pred)``: every compiled metric, as fit's own step
        updates them (``weighted_metrics`` with ``sample_weight``)."""
        self._update(y_true, y_pred, sample_weight)

    def result(self) -> dict:
        return {m.name: m.result() for m in self.metrics}


def _resolve_metric(m: Any, loss: Any) -> metrics_mod.Metric:
    if isinstance(m, str) and m in ("accuracy", "acc"):
        return _AutoAccuracy(m, loss)
    metric = metrics_mod.get(m)
    if isinstance(m, str):
        metric.name = m  # Keras logs a metric under the string the user passed ("mae")
    return metric


class Trainer:
    """The training half of ``tf.keras.Model`` (a mixin)."""

    def __init__(self) -> None:
        self.optimizer = None
        self.loss = None
        self.compiled_metrics: list = []
        self.stop_training = False
        self.history = None
        self.run_eagerly = False
        self._compiled = False
        self._step_fns: dict = {}
        self._spec_batch: Any = _ACTUAL
        self._outputs_spec = None
        self._weighted_metrics: list = []
        self._compile_metrics = None
        self._distribute_strategy = _creation_strategy()  # as Keras: the strategy whose scope made the model

    @property
    def compiled(self) -> bool:
        """Whether ``compile()`` was called (Keras 3's ``Trainer.compiled``)."""
        return self._compiled

    @property
    def distribute_strategy(self) -> Any:
        """The tf.distribute strategy whose scope created the model, else the current one (Keras 3 with
        TensorFlow)."""
        if self._distribute_strategy is not None:
            return self._distribute_strategy
        from tapeflow.distribute import get_strategy

        return get_strategy()

    @compiled.setter
    def compiled(self, value: bool) -> None:
        self._compiled = value

    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, loss_weights: Any = None, metrics: Any = None,
                weighted_metrics: Any = None, run_eagerly: bool = False, steps_per_execution: int = 1,
                jit_compile: Any = "auto", auto_scale_loss: bool = True) -> None:
        """Sets the optimizer (instance or name), the loss (instance, function
        or name) and the metrics for ``fit``/``evaluate``."""
        from tapeflow.keras import optimizers

        keep_metrics = None
        if self._compiled:  # Keras 3: what a later compile() leaves None stays as the earlier compile() set it
            prev = self._compile_args
            if loss is None:
                loss, loss_weights = prev["loss"], prev["loss_weights"] if loss_weights is None else loss_weights
            if metrics is None and weighted_metrics is None:
                keep_metrics = (self.compiled_metrics, self._weighted_metrics, self._compile_metrics,
                                self._outputs_spec[3] if self._outputs_spec is not None else None)
        self._compile_args = {"loss": loss, "loss_weights": loss_weights, "metrics": metrics,  # for model.save
                              "weighted_metrics": weighted_metrics, "run_eagerly": run_eagerly,
                              "steps_per_execution": steps_per_execution}
        if keep_metrics is not None:
            self._compile_args.update(metrics=prev["metrics"], weighted_metrics=prev["weighted_metrics"])
        self.optimizer = optimizers.get(optimizer)
        if auto_scale_loss and self.optimizer is not None and self.dtype_policy.name == "mixed_float16" and \
                not isinstance(self.optimizer, optimizers.LossScaleOptimizer):
            self.optimizer = optimizers.LossScaleOptimizer(self.optimizer, name="loss_scale_optimizer")
        self.loss = loss
        self._outputs_spec = None  # (names, losses, weights, per-output metric lists) of a multi-output model
        names = self._output_names()
        if len(names) > 1 or isinstance(loss, (list, dict)):
            self._compile_multi_output(names, loss, loss_weights, metrics, weighted_metrics)
            metrics, weighted_metrics = [], []
            self._loss_fn = None
        else:
            if loss_weights is not None:
                raise ValueError("compile(loss_weights=...) needs a model with several outputs.")
            self._loss_fn = losses_mod._loss_object(loss)
        given = metrics is not None or weighted_metrics is not None
        metrics = metrics or []
        if isinstance(metrics, dict):
            raise ValueError("compile(metrics=<dict>) needs a model with several (named) outputs; pass a list")
        self.compiled_metrics = [_resolve_metric(m, loss) for m in metrics]
        # weighted_metrics see the sample (and class) weights; a name used by both gets a "weighted_" prefix
        self._weighted_metrics = [_resolve_metric(m, loss) for m in (weighted_metrics or [])]
        names = {m.name for m in self.compiled_metrics}
        for m in self._weighted_metrics:
            if m.name in names:
                m.name = "weighted_" + m.name
        per_output = [m for ms in self._outputs_spec[3] for m in ms] if self._outputs_spec is not None else []
        self._compile_metrics = (CompileMetrics(per_output + self.compiled_metrics + self._weighted_metrics,
                                                self._update_compiled_metrics) if given else None)
        if keep_metrics is not None:  # the same metric objects, as Keras keeps them
            self.compiled_metrics, self._weighted_metrics, self._compile_metrics, kept_outputs = keep_metrics
            if kept_outputs is not None and self._outputs_spec is not None:  # a multi-output model's, per output
                self._outputs_spec = self._outputs_spec[:3] + (kept_outputs,) + self._outputs_spec[4:]
        self.run_eagerly = run_eagerly
        self._loss_tracker = metrics_mod.Mean(name="loss")
        self._compiled = True
        self._step_fns = {}
        self.stop_training = False

    def _output_names(self) -> list:
        """Names of a functional model's outputs (their layers' names); [] otherwise."""
        outputs = getattr(self, "outputs", None)
        if not outputs:
            return []
        return [kt._keras_history[0].name if kt._keras_history else f"output_{i}" for i, kt in enumerate(outputs)]

    def _compile_multi_output(self, names: list, loss: Any, loss_weights: Any, metrics: Any,
                              weighted_metrics: Any) -> None:
        """Keras 3's multi-output compile: a loss (and metrics) per output,
        by position (lists) or by output name (dicts); ``loss_weights`` scale
        each output's loss in the total; logs get ``<output>_loss`` and
        ``<output>_<metric>``."""
        if weighted_metrics:
            raise NotImplementedError("compile(weighted_metrics=...) for multi-output models is not implemented")
        if not names:
            raise ValueError("compile(loss=<list or dict>) needs a functional model with several outputs "
                             "(tf.keras.Model(inputs, [out1, out2]))")

        def per_output(value: Any, what: str, default: Any) -> list:
            if value is None:
                return [default] * len(names)
            if isinstance(value, dict):
                unknown = sorted(set(value) - set(names))
                if unknown:
                    raise ValueError(f"compile({what}=...): unknown output name(s) {unknown}; the outputs are {names}")
                return [value.get(n, default) for n in names]
            if isinstance(value, (list, tuple)):
                if len(value) != len(names):
                    raise ValueError(f"compile({what}=...): the model has {len(names)} outputs {names} but {what} "
                                     f"has {len(value)} entries")
                return list(value)
            return [value] * len(names)

        losses = per_output(loss, "loss", None)
        weights = [1.0 if w is None else float(w) for w in per_output(loss_weights, "loss_weights", 1.0)]
        metric_lists = per_output(metrics, "metrics", [])
        out_metrics = []
        for name, lo, ms in zip(names, losses, metric_lists):
            ms = [] if ms is None else (list(ms) if isinstance(ms, (list, tuple)) else [ms])
            resolved = []
            for m in ms:
                metric = _resolve_metric(m, lo)
                metric.name = f"{name}_{metric.name}"
                resolved.append(metric)
            out_metrics.append(resolved)
        fns = [None if lo is None else losses_mod._loss_object(lo) for lo in losses]
        trackers = [metrics_mod.Mean(name=f"{n}_loss") if fn is not None else None for n, fn in zip(names, fns)]
        self._outputs_spec = (names, fns, weights, out_metrics, trackers)

    def _split_outputs(self, y: Any, y_pred: Any) -> tuple[list, list]:
        names = self._outputs_spec[0]
        preds = [y_pred[n] for n in names] if isinstance(y_pred, dict) else list(nest.flatten(y_pred))
        if isinstance(y, dict):
            ys = [y.get(n) for n in names]
        elif isinstance(y, (list, tuple)):
            ys = list(y)
        else:
            raise ValueError(f"This model has {len(names)} outputs {names}: pass y as a list or a dict by output name")
        if len(ys) != len(names) or len(preds) != len(names):
            raise ValueError(f"This model has {len(names)} outputs {names}; got {len(ys)} targets")
        return ys, preds

    @property
    def metrics(self) -> list:
        """Keras 3's order: the loss tracker, the ``CompileMetrics`` holding
        compile's metrics, each output's loss tracker."""
        if not self._compiled:
            return []
        out = [self._loss_tracker]
        compiled = getattr(self, "_compile_metrics", None)
        if compiled is not None:
            out.append(compiled)
        spec = getattr(self, "_outputs_spec", None)
        if spec is not None:
            out += [t for t in spec[4] if t is not None]
        return out

    def _flat_metrics(self) -> list:
        """``self.metrics`` (a subclass may override it) with each ``CompileMetrics`` replaced by its metrics."""
        out = []
        for m in self.metrics:
            out.extend(m._members if isinstance(m, CompileMetrics) else [m])
        return out

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def get_metrics_result(self) -> dict:
        """Every metric's result by name (a ``CompileMetrics``' dict merged in), as Keras 3."""
        out = {}
        for m in self.metrics:
            r = m.result()
            out.update(r) if isinstance(r, dict) else out.__setitem__(m.name, r)
        return out

    def _check_compiled(self, what: str) -> None:
        if not self._compiled:
            raise ValueError(f"You must call `compile()` before using the model (for {what}): "
                             "call `model.compile(optimizer, loss)` first.")

    # -- the steps ----------------------------------------------------------------
    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None,
                     training: bool = True) -> Tensor:
        """The compiled loss (weighted sum over outputs) plus ``self.losses`` (regularization, add_loss)."""
        return self._compute_losses(y, y_pred, sample_weight)[0]

    @staticmethod
    def _apply_loss(fn: Any, y: Any, y_pred: Any, sample_weight: Any) -> Tensor:
        if isinstance(fn, losses_mod.Loss):
            return fn(y, y_pred, sample_weight)
        return losses_mod.reduce_weighted_values(fn(y, y_pred), sample_weight, "sum_over_batch_size")

    def _compute_losses(self, y: Any, y_pred: Any, sample_weight: Any) -> tuple:
        """(total loss, [each output's unweighted loss or None])."""
        spec = getattr(self, "_outputs_spec", None)
        per_output: list = []
        if spec is not None:
            names, fns, weights, _, _ = spec
            ys, preds = self._split_outputs(y, y_pred)
            terms = []
            for fn, w, yt, yp in zip(fns, weights, ys, preds):
                if fn is None or yt is None:
                    per_output.append(None)
                    continue
                value = self._apply_loss(fn, yt, yp, sample_weight)
                per_output.append(value)
                terms.append(value if w == 1.0 else value * w)
            loss = None if not terms else terms[0] if len(terms) == 1 else mo.add_n(terms)
        else:
            loss = None if self._loss_fn is None else self._apply_loss(self._loss_fn, y, y_pred, sample_weight)
        extra = self.losses
        if loss is None and not extra:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        if extra:  # add_loss() values: with no compiled loss they are the whole loss, as in Keras
            dtype = loss.dtype if loss is not None else convert_to_tensor(extra[0]).dtype
            extra = [mo.cast(convert_to_tensor(v), dtype) for v in extra]
            if dist_hooks.strategy is not None:  # counted once over all replicas
                extra = [losses_mod.scale_loss_for_distribution(v) for v in extra]
            terms = extra if loss is None else [loss] + extra
            loss = terms[0] if len(terms) == 1 else mo.add_n(terms)
        return loss, per_output

    def train_step(self, data: Any) -> Any:
        """One optimisation step on a batch ``data`` = ``(x, y[, sample_weight])``,
        as Keras' ``train_step`` (override it to customise ``fit``; return a
        dict of logs, or None to report ``self.metrics``)."""
        x, y, sw = _unpack(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss, per_output = self._compute_losses(y, y_pred, sw)
            scaled = self.optimizer.scale_loss(loss)  # loss_scale_factor / LossScaleOptimizer, as Keras
        variables = self.trainable_variables
        if variables:
            grads = tape.gradient(scaled, variables)
            self.optimizer.apply_gradients(zip(grads, variables))
        elif not getattr(self, "_warned_no_weights", False):
            import warnings

            self._warned_no_weights = True
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        self._update_metrics(x, y, y_pred, sw, loss, per_output)
        return None

    def test_step(self, data: Any) -> Any:
        """Loss and metrics' update on one batch (``evaluate`` and validation)."""
        x, y, sw = _unpack(data)
        y_pred = self(x, training=False)
        loss, per_output = self._compute_losses(y, y_pred, sw)
        self._update_metrics(x, y, y_pred, sw, loss, per_output)
        return None

    def predict_step(self, data: Any) -> Any:
        x, _, _ = _unpack(data)
        return self(x, training=False)

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> dict:
        """Updates the compiled metrics and returns every metric's result (Keras 3)."""
        for m in self.compiled_metrics:
            m.update_state(y, y_pred)
        for m in self._weighted_metrics:
            m.update_state(y, y_pred, sample_weight=sample_weight)
        if getattr(self, "_compile_metrics", None) is not None:
            self._compile_metrics.built = True
        return {m.name: m.result() for m in self._flat_metrics()}

    def _step(self, kind: str, data: Any = None):
        """The step callable for ``kind``, under tf.function when enabled; one per batch spec of ``data``
        (Keras traces its steps on the dataset's element spec, whose batch dimension a step can read)."""
        spec = getattr(data, "static_batch", _ACTUAL)
        fn = self._step_fns.get((kind, spec))
        if fn is not None:
            return fn
        step = {"train": self.train_step, "test": self.test_step, "predict": self.predict_step}[kind]
        fn = eager = self._with_spec(step, _ACTUAL)
        if USE_TF_FUNCTION and not self.run_eagerly:
            try:
                from tapeflow.graph.function import function

                compiled = function(self._with_spec(step, spec))
            except (ImportError, AttributeError):
                compiled = None
            if compiled is not None:
                fn = self._guarded((kind, spec), compiled, eager)
        self._step_fns[(kind, spec)] = fn
        return fn

    def _with_spec(self, step: Any, spec: Any):
        def run(data):
            prev, self._spec_batch = self._spec_batch, spec
            try:
                return step(data)
            finally:
                self._spec_batch = prev

        return run

    def _guarded(self, key: tuple, compiled: Any, eager: Any):
        kind = key[0]
        state = {"ok": None}

        def run(*args):
            if state["ok"] is False:
                return eager(*args)
            try:
                out = compiled(*args)
            except Exception as e:  # noqa: BLE001 - trace failure: fall back to the eager step
                if state["ok"]:
                    raise
                out = eager(*args)  # a user error (bad shapes) raises here too, with no fallback warning
                state["ok"] = False
                warnings.warn(f"{kind} step could not run under tf.function ({type(e).__name__}: {e}); "
                              f"running it eagerly instead.", stacklevel=3)
                self._step_fns[key] = eager
                return out
            state["ok"] = True
            return out

        return run

    def _convert_batch(self, x: Any, y: Any, sw: Any) -> Any:
        """The batch as the ``data`` a step gets, as Keras's pack_x_y_sample_weight: ``(x, y)`` or
        ``(x, y, sw)`` of tensors; without targets ``x`` itself (``(x,)`` when ``x`` is a tuple or list)."""
        xs = nest.map_structure(_step_tensor, x)
        if y is None:
            return (xs,) if isinstance(x, (tuple, list)) else xs
        data = (xs, nest.map_structure(_step_tensor, y))
        if sw is not None:
            data += (_step_tensor(sw),)
        return data

    def _batch_logs(self, out: Any) -> dict:
        """Logs after a step: what a custom step returned, else every metric's result."""
        if isinstance(out, dict):
            logs = _pythonify_logs(out)
            if dist_hooks.strategy is not None:  # the same logs on every rank: metrics synced, the rest averaged
                ms = [m for m in self._flat_metrics() if m.name in logs]
                synced = {m.name: _log_value(r) for m, r in zip(ms, dist_hooks.strategy._synced_results(ms))}
                rest = [k for k in logs if k not in synced]
                means = dist_hooks.strategy._comm.allreduce([np.array([logs[k] for k in rest])], "mean")[0]
                logs.update(zip(rest, means.tolist()), **synced)
            return logs
        return self._logs()

    def _final_logs(self, out: Any) -> dict:
        """An epoch's (or evaluate's) logs: Keras 3's ``_get_metrics_result_or_logs``: the model's metric results
        when a custom step returned logs of the same keys (a train_step returning ``{'loss': ...}`` without
        updating the loss tracker shows its zero), else the last step's logs."""
        logs = self._batch_logs(out)
        if isinstance(out, dict):
            metric_logs = self._logs()
            if set(logs) == set(metric_logs):
                return metric_logs
        return logs

    def _update_metrics(self, x: Any, y: Any, y_pred: Any, sw: Any, loss: Tensor, per_output: Any = None) -> None:
        # The loss is averaged over batches weighted by their size (Keras 3's loss tracker).
        first = nest.flatten(x)[0]
        if _is_sparse(first):  # a SparseTensor batch: its size is dense_shape[0]
            batch_size = mo.cast(first.dense_shape[0], loss.dtype)
        else:
            n = first._shape_tuple()[0]
            batch_size = float(n) if n is not None else mo.cast(ao.shape(first)[0], loss.dtype)
        self._loss_tracker.update_state(_unscale(loss), sample_weight=batch_size)
        spec = self._outputs_spec
        if spec is not None and y is not None:
            ys, preds = self._split_outputs(y, y_pred)
            for tracker, value, yp in zip(spec[4], per_output or [None] * len(ys), preds):
                if tracker is not None and value is not None:
                    # Keras weights each output's loss by its batch dimension as the traced step knows it, from
                    # the data's spec: None (each batch counts once) when the last batch of arrays is partial and
                    # for datasets of unknown batch size; run eagerly, the batch's size
                    n = self._spec_batch if self._spec_batch is not _ACTUAL else nest.flatten(yp)[0]._shape_tuple()[0]
                    tracker.update_state(_unscale(value), sample_weight=None if n is None else float(n))
        self._update_compiled_metrics(y, y_pred, sw)

    def _update_compiled_metrics(self, y: Any, y_pred: Any, sw: Any) -> None:
        """compile()'s metrics (each output's, then the model's): Keras's ``CompileMetrics.update_state``."""
        if y is None:
            return
        spec = self._outputs_spec
        if spec is not None:
            ys, preds = self._split_outputs(y, y_pred)
            for ms, yt, yp in zip(spec[3], ys, preds):
                if yt is not None:
                    for m in ms:
                        m.update_state(yt, yp)
        if self._compile_metrics is not None:
            self._compile_metrics.built = True
        for m in self.compiled_metrics:
            m.update_state(y, y_pred)  # compile(metrics=...) are unweighted in Keras 3 (weighted_metrics are not)
        for m in self._weighted_metrics:
            m.update_state(y, y_pred, sample_weight=sw)

    def _logs(self) -> dict:
        # Keras 3 reports the logs sorted by name
        ms = self._flat_metrics()
        if dist_hooks.strategy is not None:  # every metric over all ranks, in one collective
            return dict(sorted((m.name, _log_value(r)) for m, r in zip(ms, dist_hooks.strategy._synced_results(ms))))
        return dict(sorted((m.name, _log_value(m.result())) for m in ms))

    def _reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def reset_metrics(self) -> None:
        self._reset_metrics()

    # -- fit / evaluate / predict ---------------------------------------------------
    def _batches(self, x, y, sample_weight, batch_size, steps, shuffle, reset=True, build_peek=False):
        cap = keras_config.max_steps_per_epoch()
        if cap and (not steps or cap < steps):  # where Keras's EpochIterator applies it
            warnings.warn(f"Limiting steps_per_epoch to {int(cap)}", stacklevel=3)
            steps = cap
        if isinstance(x, PyDataset):
            for arg, what, v in (("y", "the targets", y), ("sample_weights", "the sample weights", sample_weight)):
                if v is not None:
                    raise ValueError(f"When providing `x` as a PyDataset, `{arg}` should not be passed. Instead, "
                                     f"{what} should be included as part of the PyDataset.")
            return _split(_PyDatasetBatches(x, steps, shuffle, reset, build_peek))
        if _is_dataset(x):
            if y is not None:
                raise ValueError("`y` argument is not supported when using a dataset as input; the dataset "
                                 "must yield (x, y) pairs.")
            if shuffle:
                warnings.warn("`shuffle=True` was passed, but will be ignored since the data `x` was provided as a "
                              "tf.data.Dataset. The Dataset is expected to already be shuffled (via "
                              "`.shuffle(buffer_size)`).", stacklevel=3)
            if dist_hooks.strategy is not None and dist_hooks.strategy._whole_dataset_per_rank(x):
                # AutoShardPolicy.OFF: every rank gets all of it, a piece of each global batch per step (as TF)
                data = _DatasetBatches(dist_hooks.strategy.experimental_distribute_dataset(x), steps)
                if build_peek:
                    data.build_peek()
                return data
            data = _DatasetBatches(x, steps)
            if build_peek:
                data.build_peek()
            return _split(data)
        if x is None:
            raise ValueError("fit/evaluate/predict: `x` is required.")
        data = _ArrayBatches(x, y, sample_weight, batch_size, shuffle, steps)
        if steps is not None:  # as Keras's EpochIterator: one pass over the arrays goes on across epochs
            passes = _DatasetBatches(_ArrayPasses(data), int(steps))
            passes.static_batch = data.static_batch
            return _split(passes)
        return _split(data)

    @_under_strategy
    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1, verbose: Any = "auto",
            callbacks: list | None = None, validation_split: float = 0.0, validation_data: Any = None,
            shuffle: bool = True, class_weight: Any = None, sample_weight: Any = None, initial_epoch: int = 0,
            steps_per_epoch: int | None = None, validation_steps: int | None = None, validation_batch_size: Any = None,
            validation_freq: int = 1) -> cbks.History:
        """Trains for ``epochs`` epochs; returns a ``History`` (``history.history["loss"]`` ...)."""
        self._check_compiled("training/testing")
        cap = keras_config.max_epochs()
        if cap and cap < epochs:
            warnings.warn(f"Limiting epochs to {int(cap)}", stacklevel=3)
            epochs = cap
        x, y, sample_weight = _from_pandas(x), _from_pandas(y), _from_pandas(sample_weight)
        if isinstance(validation_data, (tuple, list)):
            validation_data = tuple(_from_pandas(v) for v in validation_data)
        if class_weight is not None:
            if _is_dataset(x):
                x = x.map(_class_weight_map_fn(class_weight))
            elif sample_weight is not None:
                raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
            else:
                sample_weight = _class_weights_to_sample_weights(y, class_weight)
        if validation_split and validation_data is None:
            if _is_dataset(x):
                raise ValueError("`validation_split` is only supported for arrays, not datasets.")
            x_arr, y_arr, sw_arr = _as_arrays(x), _as_arrays(y), _as_arrays(sample_weight)
            n = _num_samples(x_arr)
            split = int(math.floor(n * (1.0 - validation_split)))
            if split == 0 or split == n:
                raise ValueError(f"validation_split={validation_split} leaves an empty training or validation set "
                                 f"for {n} samples.")
            tr, va = slice(0, split), slice(split, n)
            validation_data = (_take(x_arr, va), _take(y_arr, va)) if sw_arr is None else \
                (_take(x_arr, va), _take(y_arr, va), sw_arr[va])
            x, y = _take(x_arr, tr), _take(y_arr, tr)
            sample_weight = None if sw_arr is None else sw_arr[tr]
        under_strategy = self._distribute_strategy is not None  # Keras then builds on one batch first
        data = self._batches(x, y, sample_weight, batch_size, steps_per_epoch, shuffle, build_peek=under_strategy)
        verbose = 1 if verbose == "auto" else int(verbose)
        history = cbks.History()
        cb_list = _callback_list(callbacks)
        if verbose and _is_chief():
            cb_list.append(cbks.ProgbarLogger(verbose))
        cb_list.append(history)
        callbacks_ = cbks.CallbackList(cb_list, model=self, verbose=verbose, epochs=epochs, steps=data.steps)
        self.stop_training = False
        step = self._step("train", data)
        batch_logs = _any_rank(_wants_batch_logs(cb_list, "on_train_batch_end"))
        self._initial_epoch = None
        callbacks_.on_train_begin()
        initial_epoch = self._initial_epoch or initial_epoch  # BackupAndRestore resumes here, as in Keras
        logs: dict = {}
        training_logs: dict = {}  # the last epoch's logs, validation included: on_train_end's (as Keras)
        first_step = True
        val_batches = None
        for epoch in range(initial_epoch, epochs):
            self._reset_metrics()
            callbacks_.on_epoch_begin(epoch)
            i = -1
            for i, (xb, yb, swb) in enumerate(data.epoch()):
                self._current_train_batch = (xb, yb, swb)  # for callbacks that look at the data (TrainingDoctor)
                callbacks_.on_train_batch_begin(i)
                if first_step:  # layers first called here show batch None in summary(), as Keras
                    _layer_ctx.unknown_batch, first_step = True, False
                    try:
                        out = step(self._convert_batch(xb, yb, swb))
                    finally:
                        _layer_ctx.unknown_batch = False
                else:
                    out = step(self._convert_batch(xb, yb, swb))
                # reading the metrics costs a little per step: only when a callback looks at batch logs
                callbacks_.on_train_batch_end(i, self._batch_logs(out) if batch_logs else {})
                if self.stop_training:
                    break
            if i < 0:  # no batch at all (0 samples): Keras warns and stops
                warnings.warn(_RAN_OUT, stacklevel=2)
                break
            logs = self._final_logs(out)
            epoch_logs = dict(logs)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                vx, vy, vsw = _unpack(tuple(validation_data)) if isinstance(validation_data, (tuple, list)) \
                    else (validation_data, None, None)
                if isinstance(vx, PyDataset) and val_batches is None:
                    val_batches = self._batches(vx, vy, vsw, None, validation_steps, False, reset=False)
                val = self.evaluate(vx, vy, batch_size=validation_batch_size or batch_size, sample_weight=vsw,
                                    steps=validation_steps, verbose=0, callbacks=callbacks_, return_dict=True,
                                    _in_fit=True, _data=val_batches)
                epoch_logs.update({f"val_{k}": v for k, v in val.items()})
                epoch_logs = dict(sorted(epoch_logs.items()))  # Keras 3 orders all keys by name
            callbacks_.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        if epochs > 0 and hasattr(self.optimizer, "finalize_variable_values"):  # with use_ema: the averages
            self.optimizer.finalize_variable_values(self.trainable_weights)
        callbacks_.on_train_end(training_logs)
        self.history = history
        return history

    @_under_strategy
    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None, verbose: Any = "auto",
                 sample_weight: Any = None, steps: int | None = None, callbacks: list | None = None,
                 return_dict: bool = False, _in_fit: bool = False, _data: Any = None, **kwargs: Any) -> Any:
        """Loss and metrics on the data: a scalar (loss only), a list, or a dict with ``return_dict``."""
        self._check_compiled("training/testing")
        x, y, sample_weight = _from_pandas(x), _from_pandas(y), _from_pandas(sample_weight)
        under_strategy = self._distribute_strategy is not None  # Keras then builds on one batch first
        if _data is not None:  # fit's validation PyDataset, read once for its spec (Keras caches its iterator)
            if under_strategy:
                _data.build_peek()
            _data.reset()
            data = _data
        else:
            data = self._batches(x, y, sample_weight, batch_size, steps, False, build_peek=under_strategy)
        step = self._step("test", data)
        self._reset_metrics()  # inside fit too: the epoch's training logs were read before
        # Inside fit, fit's own callbacks see the validation (on_test_*), as in Keras.
        verbose = 1 if verbose == "auto" else int(verbose)
        if isinstance(callbacks, cbks.CallbackList):
            cb = callbacks
        else:
            cb_list = _callback_list(callbacks)
            if verbose and not _in_fit and _is_chief():
                cb_list.append(cbks.ProgbarLogger(verbose))
            cb = cbks.CallbackList(cb_list, model=self, verbose=verbose, epochs=1, steps=data.steps)
        cb.on_test_begin()
        batch_logs = _any_rank(_wants_batch_logs(cb.callbacks, "on_test_batch_end"))
        out, ran = None, False
        for i, (xb, yb, swb) in enumerate(data.epoch()):
            cb.on_test_batch_begin(i)
            out = step(self._convert_batch(xb, yb, swb))
            ran = True
            cb.on_test_batch_end(i, self._batch_logs(out) if batch_logs else {})
        logs = self._final_logs(out) if ran else {}  # no batch (an empty dataset): no logs, as Keras
        cb.on_test_end(logs)
        if return_dict:
            return logs
        return self._ordered(logs) if logs else []

    def _ordered(self, logs: dict) -> Any:
        """Keras' list order: the loss, each output's loss, then the metrics
        (in compile order; by name for multi-output models)."""
        if self._outputs_spec is not None:
            first = ["loss"] + [t.name for t in self._outputs_spec[4] if t is not None]
            keys = first + sorted(k for k in logs if k not in first)
        else:  # Keras's _flatten_metrics_in_order: the metrics' names, then any other logs by name
            names = [m.name for m in self._flat_metrics()]
            keys = [k for k in names if k in logs] + sorted(k for k in logs if k not in names)
        values = [logs[k] for k in keys]
        return values[0] if len(values) == 1 else values

    @_under_strategy
    def predict(self, x: Any, batch_size: int | None = None, verbose: Any = "auto", steps: int | None = None,
                callbacks: list | None = None) -> Any:
        """The model's outputs on ``x`` (NumPy arrays), batch by batch."""
        data = self._batches(_from_pandas(x), None, None, batch_size, steps, False, reset=False)
        step = self._step("predict", data)
        outs = []
        verbose = 1 if verbose == "auto" else int(verbose)
        cb_list = _callback_list(callbacks)
        if verbose and _is_chief():
            cb_list.append(cbks.ProgbarLogger(verbose))
        cb = cbks.CallbackList(cb_list, model=self, verbose=verbose, epochs=1, steps=data.steps)
        cb.on_predict_begin()
        for i, (xb, _, _) in enumerate(data.epoch()):
            cb.on_predict_batch_begin(i)
            out = nest.map_structure(_to_numpy, step(self._convert_batch(xb, None, None)))
            cb.on_predict_batch_end(i, {"outputs": out})
            if dist_hooks.strategy is not None:  # every rank gets the whole batch's predictions
                out = nest.map_structure(dist_hooks.strategy._comm.allgather, out)
            outs.append(out)
        cb.on_predict_end()
        if not outs:
            raise ValueError("predict: no data (empty input or steps=0).")
        first = outs[0]
        if nest.is_nested(first):
            flat = [np.concatenate([nest.flatten(o)[i] for o in outs]) for i in range(len(nest.flatten(first)))]
            return nest.pack_sequence_as(first, flat)
        return np.concatenate(outs)

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None, class_weight: Any = None,
                       return_dict: bool = False) -> Any:
        """One optimisation step on one batch; the metrics start afresh (Keras 3)."""
        self._check_compiled("training/testing")
        if class_weight is not None:
            if sample_weight is not None:
                raise ValueError("Arguments `sample_weight` and `class_weight` cannot be specified at the same time. "
                                 f"Received: sample_weight={sample_weight}, class_weight={class_weight}")
            sample_weight = _class_weights_to_sample_weights(y, class_weight)
        return self._on_batch("train", x, y, sample_weight, return_dict)

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None, return_dict: bool = False) -> Any:
        """Loss and metrics of one batch; the metrics start afresh (Keras 3)."""
        self._check_compiled("training/testing")
        return self._on_batch("test", x, y, sample_weight, return_dict)

    def _on_batch(self, kind: str, x: Any, y: Any, sample_weight: Any, return_dict: bool) -> Any:
        self._reset_metrics()
        # a step gets (x, y, sample_weight), as Keras's *_on_batch pass it
        data = tuple(nest.map_structure(_step_tensor, v) for v in (x, y, sample_weight))
        logs = self._batch_logs(self._step(kind)(data))
        if return_dict:
            return logs
        return self._ordered(logs)

    def predict_on_batch(self, x: Any) -> Any:
        return nest.map_structure(_to_numpy, self(x, training=False))

    # -- weights files ------------------------------------------------------------
    def save_weights(self, filepath: str, overwrite: bool = True, max_shard_size: Any = None) -> None:
        """Writes the weights (and the optimizer's variables) to ``filepath``: Keras 3's HDF5
        ``.weights.h5`` layout (needs h5py), or a ``.safetensors`` file (tapeflow's checkpoint format)."""
        from tapeflow.keras.saving import weights_h5
        from tapeflow.train import checkpoint

        filepath = os.fspath(filepath)
        if max_shard_size is not None:
            raise NotImplementedError("save_weights(max_shard_size=...) (sharded .weights.json) is not implemented")
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"{filepath} exists and overwrite=False")
        if filepath.endswith(".weights.h5"):
            weights_h5.save_weights_h5(self, filepath)
        elif filepath.endswith(".safetensors"):
            checkpoint.save_weights(self, filepath)
        else:
            raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={filepath} "
                             f"(tapeflow also writes `.safetensors`)")

    def export(self, filepath: Any, format: str = "tf_saved_model", verbose: bool | None = None,  # noqa: A002
               input_signature: Any = None, **kwargs: Any) -> None:
        """Keras 3's ``model.export``: a SavedModel (tapeflow's format) with the forward pass as its ``serve``
        endpoint and ``serving_default`` signature, reloadable by ``tf.saved_model.load`` without this code."""
        if format in ("tf_saved_model", "tf"):
            from tapeflow.keras.export import export_saved_model

            return export_saved_model(self, filepath, verbose=verbose, input_signature=input_signature, **kwargs)
        if format in ("onnx", "openvino", "litert", "tflite"):
            raise NotImplementedError(f"Model.export(format='{format}') is not implemented in tapeflow; "
                                      "format='tf_saved_model' is")
        raise ValueError("Unrecognized format=" + str(format) + ". Supported formats are: 'tf_saved_model', "
                         "'onnx', 'openvino', 'litert'.")

    def save(self, filepath: str, overwrite: bool = True, zipped: bool | None = None, **kwargs: Any) -> None:
        """Saves architecture, weights, compile state and optimizer variables to a ``.keras`` file
        (Keras 3's zip archive; ``tf.keras.models.load_model`` reads it, and so does real Keras)."""
        from tapeflow.keras.saving import saving_lib

        saving_lib.save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def load_weights(self, filepath: str, skip_mismatch: bool = False, **kwargs: Any) -> None:
        """Loads weights from a ``.weights.h5``/``.keras`` file (Keras 3's, or tapeflow's) or a
        ``.safetensors`` file; checks every shape first, and on a mismatch raises and changes nothing."""
        from tapeflow.keras.saving import weights_h5
        from tapeflow.train import checkpoint

        filepath = os.fspath(filepath)
        if kwargs:
            raise ValueError(f"Invalid keyword arguments: {kwargs}")
        if not getattr(self, "built", False) or not self.weights:
            raise ValueError(f"load_weights: model '{self.name}' has no weights yet; build it first (call it on a "
                             f"batch, or start it with tf.keras.Input) so the weights exist.")
        if filepath.endswith((".weights.h5", ".keras")) or _is_hdf5(filepath):
            return weights_h5.load_weights_h5(self, filepath, skip_mismatch=skip_mismatch)
        return checkpoint.load_weights(self, filepath, skip_mismatch=skip_mismatch)


def _is_hdf5(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"\x89HDF\r\n\x1a\n"
    except OSError:
        return False


def _class_weights_to_sample_weights(y: Any, class_weight: dict) -> np.ndarray:
    """Keras 3's class_weight_to_sample_weights: per-sample ``class_weight.get(label, 1.0)``; labels are
    integers, one-hot rows (argmax) or ``(n, 1)`` columns (rounded)."""
    if nest.is_nested(y):
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    labels = np.asarray(_to_numpy(y))
    if labels.ndim > 1:
        labels = labels.argmax(-1) if labels.shape[-1] != 1 else labels.squeeze(-1)
    labels = np.round(labels).astype(np.int32)
    return np.asarray([class_weight.get(int(c), 1.0) for c in labels], np.float32)


def _class_weight_map_fn(class_weight: dict) -> Any:
    """Keras 3's make_class_weight_map_fn: a ``Dataset.map`` function adding ``class_weight[label]`` as the sample
    weights (per pixel for dense targets); a label past the largest key fails the element, as TF's gather."""
    from tapeflow.keras.sequence_utils import unpack_x_y_sample_weight

    table = convert_to_tensor(np.asarray([class_weight.get(c, 1.0) for c in range(max(class_weight) + 1)],
                                         np.float32))

    def add_weights(*data: Any) -> tuple:
        x, y, sw = unpack_x_y_sample_weight(data)
        if sw is not None:
            raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
        if nest.is_nested(y):
            raise ValueError("`class_weight` is only supported for Models with a single output.")
        y = convert_to_tensor(y)
        if y.shape.rank is not None and y.shape.rank >= 2:
            if y.shape[-1] is None:
                raise NotImplementedError("class_weight with a dataset whose targets' last dimension is unknown")
            classes = (ao.argmax(y, axis=-1, output_type="int32") if y.shape[-1] > 1 else
                       mo.cast(mo.round(ao.squeeze(y, axis=-1)), "int32"))
        else:
            classes = mo.cast(mo.round(y), "int32")
        return x, y, ao.gather(table, classes)

    return add_weights


def _callback_list(callbacks: Any) -> list:
    """``callbacks=`` as Keras's CallbackList takes it: a list (nested lists flattened), or one callback."""
    if not callbacks:
        return []
    if isinstance(callbacks, (list, tuple)):
        return [c for item in callbacks for c in _callback_list(item)] if any(
            isinstance(c, (list, tuple)) for c in callbacks) else list(callbacks)
    return [callbacks]


def _wants_batch_logs(callbacks: list, hook: str) -> bool:
    """Whether a callback overrides ``hook`` (so per-batch logs must be computed)."""
    hooks = (hook, "on_batch_end") if hook == "on_train_batch_end" else (hook,)  # (Keras's alias of it)
    return any(getattr(type(c), h, None) is not getattr(cbks.Callback, h) for c in callbacks for h in hooks)


def _readable_size(n_bytes: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n_bytes / 1024 < 1:
            return f"{n_bytes:.2f} {unit}"
        n_bytes /= 1024
    return f"{n_bytes:.2f} PB"


def _connections(model: Any, layer: Any) -> str:
    """Keras' "Connected to" cell: ``name[node][tensor]`` of each input of the layer's calls in the model."""
    from tapeflow.framework import nest

    nodes = {id(n) for n in model._nodes}
    cells = []
    for node in layer._inbound_nodes:
        if id(node) not in nodes:
            continue
        for kt in node.input_tensors:
            src, src_node = kt._keras_history
            if src_node is None:
                cells.append(f"{src.name}[0][0]")
                continue
            ni = next(i for i, n in enumerate(src._inbound_nodes) if n is src_node)
            ti = next(i for i, t in enumerate(nest.flatten(src_node.outputs)) if t is kt)
            cells.append(f"{src.name}[{ni}][{ti}]")
    return ", ".join(cells) or "-"


def _user_layer_without_output_shape(layer: Any) -> bool:
    """A user's layer class (not a functional or Sequential model) that inherits ``compute_output_shape`` from
    Keras's base Layer/Model: Keras 3's summary shows its shape as "?" unless it has a symbolic node."""
    if type(layer).__module__.startswith("tapeflow.") or getattr(layer, "_functional", None) is not None:
        return False
    owner = next(c for c in type(layer).__mro__ if "compute_output_shape" in c.__dict__)
    return owner.__module__.startswith("tapeflow.") and owner.__name__ in ("Layer", "Model")


def _layer_range_bounds(layers: list, layer_range: Any) -> tuple:
    """Keras's get_layer_index_bound_by_layer_name: the rows from the first layer whose name matches
    ``layer_range[0]`` to the last matching ``layer_range[1]`` (regular expressions)."""
    import re

    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2:
        raise ValueError("layer_range must be a list or tuple of length 2. Received: "
                         f"layer_range = {layer_range} of length {len(layer_range)}")
    if not isinstance(layer_range[0], str) or not isinstance(layer_range[1], str):
        raise ValueError(f"layer_range should contain string type only. Received: {layer_range}")
    lower = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    upper = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not lower or not upper:
        raise ValueError(f"Passed layer_names do not match the layer names in the model. Received: {layer_range}")
    if min(lower) > max(upper):
        return min(upper), max(lower) + 1
    return min(lower), max(upper) + 1


def format_summary(model: Any, expand_nested: bool = False, show_trainable: bool = False,
                   layer_range: Any = None) -> str:
    """Keras 3's table: layer (type), output shape, parameter count, totals with sizes; with ``expand_nested``
    a nested model's layers follow it, each level indented by three spaces and "└ "; ``show_trainable`` adds
    Keras's Trainable column (Y / N, "-" for a layer without weights), ``layer_range`` keeps the rows between
    two layer-name patterns."""
    rows: list = []
    layers = model._summary_layers() if hasattr(model, "_summary_layers") else model.layers
    lo, hi = _layer_range_bounds(layers, layer_range)
    layers = layers[lo:hi]
    chain = getattr(model, "_functional", None) is None or getattr(model, "_sequential_like", True)

    def levels(layer: Any, level: int) -> list:
        out = [(layer, level)]
        inner = getattr(layer, "layers", None) if expand_nested else None
        for sub in inner or ():
            out += levels(sub, level + 1)
        return out

    for layer, level in [x for top in layers for x in levels(top, 0)]:
        if type(layer).__name__ == "InputLayer":
            shape: Any = layer.batch_shape
        elif getattr(layer, "_inbound_nodes", None):  # Keras's format_layer_shape: its last symbolic call's
            shapes = [k.shape for k in nest.flatten(layer._inbound_nodes[-1].outputs)]  # the node's flat list
            shape = shapes[0] if len(shapes) == 1 else shapes
        elif _user_layer_without_output_shape(layer):
            shape = "?"  # Keras's compute_output_shape of a layer that does not implement it
        else:
            try:
                shape = layer.output_shape
            except AttributeError:
                shape = "?"
        n = int(sum(np.prod(v.shape.as_list(), dtype=np.int64) for v in layer.weights)) if layer.built else 0
        kind = getattr(layer, "_op_class", None) or type(layer).__name__
        prefix = "   " * level + "└ " if level else ""
        rows.append((f"{prefix}{layer.name} ({kind})", str(shape), f"{n:,}" if layer.built else "0 (unbuilt)"))
        if not chain:
            rows[-1] += (_connections(model, layer),)
        if show_trainable:
            rows[-1] += (("Y" if layer.trainable else "N") if layer.weights else "-",)
    # Keras' column widths (an 80-column console); longer cells wrap onto more lines (as rich does)
    w = {(True, False): [31, 22, 13], (False, False): [19, 17, 10, 17], (True, True): [27, 21, 10, 5],
         (False, True): [17, 15, 9, 14, 5]}[(bool(chain), bool(show_trainable))]
    trainable_col = len(w) - 1 if show_trainable else -1

    def line(left: str, mid: str, right: str, fill: str) -> str:
        return left + mid.join(fill * (x + 2) for x in w) + right

    def wrap(text: str, width: int) -> list:
        # rich's wrapping: words fill lines greedily; a word longer than the column is cut with "…"
        lines: list = []
        lead = text[:len(text) - len(text.lstrip(" "))]  # a nested row's indent stays (rich keeps it)
        for word in text.split():
            if lead:
                word, lead = lead + word, ""
            if len(word) > width:
                word = word[:width - 1] + "…"
            if lines and len(lines[-1]) + 1 + len(word) <= width:
                lines[-1] += " " + word
            else:
                lines.append(word)
        return lines or [""]

    def row(cells: tuple, bar: str) -> str:
        wrapped = [wrap(c, x) for c, x in zip(cells, w)]
        lines = []
        for k in range(max(len(c) for c in wrapped)):
            parts = [c[k] if k < len(c) else "" for c in wrapped]
            lines.append(bar + bar.join(f" {c.rjust(x)} " if i == 2 else f" {c.center(x)} " if i == trainable_col
                                        else f" {c.ljust(x)} " for i, (c, x) in enumerate(zip(parts, w))) + bar)
        return "\n".join(lines)

    head = ("Layer (type)", "Output Shape", "Param #") + (() if chain else ("Connected to",)) + (
        ("Trainable",) if show_trainable else ())
    out = [f'Model: "{model.name}"', line("┏", "┳", "┓", "━"), row(head, "┃"), line("┡", "╇", "┩", "━")]
    for i, r in enumerate(rows):
        if i:
            out.append(line("├", "┼", "┤", "─"))
        out.append(row(r, "│"))
    out.append(line("└", "┴", "┘", "─"))

    def count(vs):
        return int(sum(np.prod(v.shape.as_list(), dtype=np.int64) for v in vs))

    def size(vs):
        return sum(int(np.prod(v.shape.as_list(), dtype=np.int64)) * v.dtype.as_numpy_dtype().itemsize for v in vs)

    trainable = model.trainable_weights
    frozen = [v for v in model.weights if not any(v is t for t in trainable)]
    opt = getattr(model, "optimizer", None)
    opt_vars = list(opt.variables) if opt is not None and getattr(opt, "built", False) else []
    out += [f" Total params: {count(model.weights) + count(opt_vars):,} "
            f"({_readable_size(size(model.weights) + size(opt_vars))})",
            f" Trainable params: {count(trainable):,} ({_readable_size(size(trainable))})",
            f" Non-trainable params: {count(frozen):,} ({_readable_size(size(frozen))})"]
    if opt_vars:  # Keras counts a built optimizer's variables too
        out.append(f" Optimizer params: {count(opt_vars):,} ({_readable_size(size(opt_vars))})")
    return "\n".join(out)
