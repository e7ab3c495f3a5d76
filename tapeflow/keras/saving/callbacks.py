"""The callbacks that write files: ``ModelCheckpoint``, ``BackupAndRestore`` and ``CSVLogger``,
with Keras 3.15's rules, file names and printed messages."""

from __future__ import annotations

import collections
import csv
import json
import os
import shutil
import warnings
from typing import Any

import numpy as np

from tapeflow.keras.callbacks import Callback, _monitor_op
from tapeflow.keras.io_utils import print_msg
from tapeflow.train.checkpoint import _atomic_write, on_chief, writes_files

__all__ = ["ModelCheckpoint", "BackupAndRestore", "CSVLogger"]


class _BatchCounter:
    """Keras' ``_should_save_on_batch``: counts batches across epochs (zero-indexed ``batch``)."""

    def __init__(self, save_freq: Any, last: int | None) -> None:
        self.save_freq, self.seen, self.last = save_freq, 0, last

    def due(self, batch: int) -> bool:
        if self.save_freq == "epoch":
            return False
        if self.last is None or batch <= self.last:
            add = batch + 1
        else:
            add = batch - self.last
        self.seen += add
        self.last = batch
        if self.seen >= self.save_freq:
            self.seen = 0
            return True
        return False


class ModelCheckpoint(Callback):
    """Saves the model (``.keras``) or its weights (``save_weights_only=True``, ``.weights.h5``)
    every epoch or every ``save_freq`` batches, optionally only when ``monitor`` improves.

    ``filepath`` may hold ``{epoch:02d}``, ``{batch}`` and any log key (``{val_loss:.2f}``).

    >>> ck = tf.keras.callbacks.ModelCheckpoint("ckpt/best.keras", monitor="val_loss", save_best_only=True)
    """

    def __init__(
        self,
        filepath: Any,
        monitor: str = "val_loss",
        verbose: int = 0,
        save_best_only: bool = False,
        save_weights_only: bool = False,
        mode: str = "auto",
        save_freq: Any = "epoch",
        initial_value_threshold: float | None = None,
    ) -> None:
        super().__init__()
        self.monitor, self.verbose = monitor, verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self.save_freq = save_freq
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"ModelCheckpoint mode '{mode}' is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.mode = mode
        self.monitor_op, _ = _monitor_op(mode, monitor)
        self.best = initial_value_threshold
        self._counter = _BatchCounter(save_freq, None)
        self._current_epoch = 0
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or integer values")
        if save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise ValueError(
                    "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided "
                    "must end in `.weights.h5` (Keras weights format). Received: "
                    f"filepath={self.filepath}"
                )
        elif not self.filepath.endswith((".keras", ".h5")):
            raise ValueError(
                f"The filepath provided must end in `.keras` (Keras model format). Received: filepath={self.filepath}"
            )

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._current_epoch = epoch

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self._counter.due(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _file_path(self, epoch: int, batch: int | None, logs: dict) -> str:
        try:
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e}') from None

    def _should_save(self, epoch: int, logs: dict, filepath: str) -> bool:
        if not self.save_best_only:
            if self.verbose > 0:
                print_msg(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=3)
            return True
        if np.ndim(current) > 0:
            warnings.warn(
                f"Can save best model only when `monitor` is a scalar value. Received: {current}. "
                f"Falling back to `save_best_only=False`.",
                stacklevel=3,
            )
            return True
        best_str = "None" if self.best is None else f"{self.best:.5f}"
        if self.best is None or self.monitor_op(current, self.best):
            if self.verbose > 0:
                print_msg(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {best_str} to {current:.5f}, "
                    f"saving model to {filepath}"
                )
            self.best = current
            return True
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best_str}")
        return False

    def _save_model(self, epoch: int, batch: int | None, logs: dict | None) -> None:
        logs = logs or {}
        filepath = self._file_path(epoch, batch, logs)
        if os.path.isdir(filepath):
            raise OSError(
                "Please specify a non-directory filepath for ModelCheckpoint. Filepath used is an "
                f"existing directory: {filepath}"
            )
        if not self._should_save(epoch, logs, filepath):
            return
        folder = os.path.dirname(filepath)
        if folder:
            os.makedirs(folder, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")


class BackupAndRestore(Callback):
    """Backs training up to ``backup_dir`` (``latest.weights.h5`` + ``training_metadata.json``)
    every epoch (or every ``save_freq`` batches); a later ``fit`` with the same callback resumes
    from the last backup (weights, optimizer state and epoch), as Keras 3."""

    def __init__(
        self, backup_dir: Any, save_freq: Any = "epoch", double_checkpoint: bool = False, delete_checkpoint: bool = True
    ) -> None:
        super().__init__()
        self.save_freq, self.double_checkpoint, self.delete_checkpoint = save_freq, double_checkpoint, delete_checkpoint
        self._current_epoch = 0
        self._counter = _BatchCounter(save_freq, 0)
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        self.backup_dir = os.fspath(backup_dir)
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._training_metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._prev_weights_path = f"{self._weights_path}.bkp"
        self._prev_training_metadata_path = f"{self._training_metadata_path}.bkp"
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(
                f"Invalid value for argument `save_freq`. Received: save_freq={save_freq}. Expected "
                f"either 'epoch' or an integer value."
            )

    def on_train_begin(self, logs: dict | None = None) -> None:
        try:
            self._load_model()
        except (OSError, ValueError):
            if not os.path.exists(self._prev_weights_path):
                raise
            on_chief(self._restore_previous)  # several processes: rank 0 puts the files back, the others wait
            self._load_model()

    def _restore_previous(self) -> None:
        shutil.copy(self._prev_weights_path, self._weights_path)
        if os.path.exists(self._prev_training_metadata_path):
            shutil.copy(self._prev_training_metadata_path, self._training_metadata_path)
        elif os.path.exists(self._training_metadata_path):
            os.remove(self._training_metadata_path)

    def _load_model(self) -> None:
        if not self.model.built:
            raise ValueError(
                f"To use the BackupAndRestore callback, you model must be built before you call "
                f"`fit()`. Model {self.model} is unbuilt. You can build it beforehand by calling it on a "
                f"batch of data."
            )
        if os.path.exists(self._weights_path):
            opt = getattr(self.model, "optimizer", None)
            if opt is not None and not opt.built:
                opt.build(self.model.trainable_variables)
            self.model.load_weights(self._weights_path)
        if os.path.exists(self._training_metadata_path):
            with open(self._training_metadata_path) as f:
                self.model._initial_epoch = json.loads(f.read())["epoch"]

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._current_epoch = epoch + 1
        self._counter.last = 0
        if self.save_freq == "epoch":
            self._save_model()

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self._counter.due(batch):
            self._save_model()

    def _save_model(self) -> None:
        # Under several processes rank 0 alone copies and writes (save_weights too), the others wait for it.
        on_chief(self._keep_previous)
        self.model.save_weights(self._weights_path, overwrite=True)
        metadata = json.dumps({"epoch": self._current_epoch, "batch": self._counter.last})
        _atomic_write(self._training_metadata_path, metadata.encode())

    def _keep_previous(self) -> None:
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint and os.path.exists(self._weights_path):
            shutil.copy(self._weights_path, self._prev_weights_path)
        if self.double_checkpoint and os.path.exists(self._training_metadata_path):
            shutil.copy(self._training_metadata_path, self._prev_training_metadata_path)

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.delete_checkpoint:
            on_chief(self._delete)

    def _delete(self) -> None:
        if os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)


class CSVLogger(Callback):
    """Writes one CSV row per epoch: ``epoch`` then the logs' keys in sorted order (Keras 3's file)."""

    def __init__(self, filename: Any, separator: str = ",", append: bool = False) -> None:
        super().__init__()
        self.sep, self.filename, self.append = separator, os.fspath(filename), append
        self.writer = None
        self.keys: list | None = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs: dict | None = None) -> None:
        if not writes_files():  # several processes: rank 0 writes the file (every rank has the same logs)
            return
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")  # noqa: SIM115 - open across the hooks
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.csv_file is None:  # not this process's file
            return
        logs = logs or {}

        def handle_value(k: Any) -> Any:
            if isinstance(k, str):
                return k
            if isinstance(k, collections.abc.Iterable) and not (isinstance(k, np.ndarray) and k.ndim == 0):
                return f'"[{", ".join(map(str, k))}]"'
            return k

        if self.keys is None:
            self.keys = sorted(logs.keys())
            if not any(key.startswith("val_") for key in self.keys) and self.keys:
                self.keys.extend([f"val_{k}" for k in self.keys])
        if not self.writer:
            sep = self.sep

            class CustomDialect(csv.excel):
                delimiter = sep

            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + (self.keys or []), dialect=CustomDialect)
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict({"epoch": epoch})
        row.update((key, handle_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None
