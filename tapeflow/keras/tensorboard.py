"""``tf.keras.callbacks.TensorBoard``: Keras 3's event files for ``fit``.

Writes what Keras 3 writes, with the same tags and steps: ``epoch_<metric>``
(and ``epoch_learning_rate``) under ``log_dir/train`` and ``log_dir/validation``,
``batch_<metric>`` every ``update_freq`` batches, ``evaluation_<metric>_vs_iterations``
after each validation, weight histograms/images every ``histogram_freq`` epochs,
and the model's JSON config for the graph tab.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

import numpy as np

from tapeflow.keras.callbacks import Callback


class TensorBoard(Callback):
    """Logs training to TensorBoard: ``tensorboard --logdir LOG_DIR`` shows it.

    >>> model.fit(x, y, epochs=5, callbacks=[tf.keras.callbacks.TensorBoard("logs", histogram_freq=1)])
    """

    def __init__(self, log_dir: str = "logs", histogram_freq: int = 0, write_graph: bool = True,
                 write_images: bool = False, write_steps_per_second: bool = False, update_freq: Any = "epoch",
                 profile_batch: Any = 0, embeddings_freq: int = 0, embeddings_metadata: Any = None) -> None:
        super().__init__()
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        if profile_batch not in (0, "0", None, (0, 0)):
            warnings.warn("TensorBoard(profile_batch=...): tapeflow has no profiler; no profile is written "
                          "(scalars, histograms and graphs are).", stacklevel=2)
        self._writers: dict = {}
        self._contexts: list = []
        self._global_train_batch = 0
        self._global_test_batch = 0
        self._batch_start = 0.0
        self._epoch_start = 0.0
        self._epoch_start_iterations = 0.0

    # -- writers ---------------------------------------------------------------------
    def _writer(self, kind: str) -> Any:
        from tapeflow import summary

        if kind not in self._writers:
            sub = "train" if kind == "train" else "validation"
            self._writers[kind] = summary.create_file_writer(os.path.join(self.log_dir, sub))
        return self._writers[kind]

    def _push_writer(self, kind: str, step: int) -> None:
        # Batch-level summaries (the callback's and the user's own tf.summary calls
        # inside the model) go to this writer, recorded every update_freq batches.
        if self.update_freq == "epoch":
            return
        from tapeflow import summary

        freq = int(self.update_freq)
        contexts = (self._writer(kind).as_default(step), summary.record_if(lambda: step % freq == 0))
        for c in contexts:
            c.__enter__()
        self._contexts.append(contexts)

    def _pop_writer(self) -> None:
        if self.update_freq == "epoch" or not self._contexts:
            return
        for c in reversed(self._contexts.pop()):
            c.__exit__(None, None, None)

    def set_model(self, model: Any) -> None:
        self.model = model
        self._writers = {}
        if self.write_graph and type(model).__name__ in ("Sequential", "Functional", "Model"):
            self._write_model_config()
        if self.embeddings_freq:
            self._write_projector_config()

    def _write_model_config(self) -> None:
        from tensorboard.compat.proto import summary_pb2

        from tapeflow import summary

        to_json = getattr(self.model, "to_json", None)
        try:
            if to_json is None:
                raise NotImplementedError(f"{type(self.model).__name__}.to_json is not available")
            config = to_json()
        except Exception as exc:  # Keras: a model that cannot serialize only warns
            warnings.warn(f"Model failed to serialize as JSON. Ignoring... {exc}", stacklevel=3)
            return
        meta = summary_pb2.SummaryMetadata()
        meta.plugin_data.plugin_name = "graph_keras_model"
        meta.plugin_data.content = b"1"
        with self._writer("train").as_default():
            summary.write("keras", config, step=0, metadata=meta)

    def _write_projector_config(self) -> None:
        from tapeflow.keras.layers import Embedding

        lines = []
        for layer in self.model.layers:
            if isinstance(layer, Embedding):
                lines.append('embeddings {\n  tensor_name: "layer_with_weights-0/embeddings/.ATTRIBUTES/'
                             'VARIABLE_VALUE"\n')
                meta = self.embeddings_metadata
                if isinstance(meta, dict):
                    meta = meta.pop(layer.name, None)
                if meta is not None:
                    lines.append(f'  metadata_path: "{meta}"\n')
                lines.append("}\n")
        if isinstance(self.embeddings_metadata, dict) and self.embeddings_metadata:
            raise ValueError("Unrecognized `Embedding` layer names passed to `keras.callbacks.TensorBoard` "
                             f"`embeddings_metadata` argument: {self.embeddings_metadata.keys()}")
        os.makedirs(self.log_dir, exist_ok=True)
        with open(os.path.join(self.log_dir, "projector_config.pbtxt"), "w") as f:
            f.write("".join(lines))

    # -- hooks -------------------------------------------------------------------------
    def on_train_begin(self, logs: dict | None = None) -> None:
        self._global_train_batch = 0
        self._push_writer("train", 0)

    def on_train_end(self, logs: dict | None = None) -> None:
        self._pop_writer()
        for w in self._writers.values():
            w.close()
        self._writers = {}

    def on_test_begin(self, logs: dict | None = None) -> None:
        self._push_writer("val", self._global_test_batch)

    def on_test_end(self, logs: dict | None = None) -> None:
        from tapeflow import summary

        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations") and logs:
            with self._writer("val").as_default():
                for name, value in logs.items():
                    summary.scalar(f"evaluation_{name}_vs_iterations", value, step=optimizer.iterations)
        self._pop_writer()

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self._global_train_batch += 1
        if self.update_freq != "epoch":
            self._pop_writer()
            self._push_writer("train", self._global_train_batch)
        if self.write_steps_per_second:
            self._batch_start = time.time()

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        from tapeflow import summary

        if self.write_steps_per_second:
            summary.scalar("batch_steps_per_second", 1.0 / max(time.time() - self._batch_start, 1e-9),
                           step=self._global_train_batch)
        if isinstance(logs, dict):
            for name, value in logs.items():
                summary.scalar(f"batch_{name}", value, step=self._global_train_batch)

    def on_test_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self._global_test_batch += 1
        if self.update_freq != "epoch":
            self._pop_writer()
            self._push_writer("val", self._global_test_batch)

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        if self.write_steps_per_second:
            self._epoch_start_iterations = float(np.asarray(self.model.optimizer.iterations))
            self._epoch_start = time.time()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        if self.embeddings_freq and epoch % self.embeddings_freq == 0:
            self.model.save_weights(os.path.join(self.log_dir, "train",
                                                 f"keras_embedding.ckpt-{epoch}.weights.h5"))

    # -- what is written -----------------------------------------------------------------
    def _learning_rates(self, logs: dict) -> dict:
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)
        if optimizer is None:
            return logs
        if hasattr(optimizer, "optimizers"):
            for opt in optimizer.optimizers:
                logs[f"learning_rate_{opt.name}"] = float(np.asarray(opt.learning_rate))
        elif hasattr(optimizer, "learning_rate"):
            logs["learning_rate"] = float(np.asarray(optimizer.learning_rate))
        return logs

    def _log_epoch_metrics(self, epoch: int, logs: dict | None) -> None:
        from tapeflow import summary

        if not logs:
            return
        train = self._learning_rates({k: v for k, v in logs.items() if not k.startswith("val_")})
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        if self.write_steps_per_second:
            done = float(np.asarray(self.model.optimizer.iterations)) - self._epoch_start_iterations
            train["steps_per_second"] = done / max(time.time() - self._epoch_start, 1e-9)
        for kind, values in (("train", train), ("val", val)):
            if values:
                with self._writer(kind).as_default():
                    for name, value in values.items():
                        summary.scalar(f"epoch_{name}", value, step=epoch)

    def _log_weights(self, epoch: int) -> None:
        from tapeflow import summary

        writer = self._writer("train")
        with writer.as_default():
            for layer in self.model.layers:
                for weight in layer.weights:
                    name = str(getattr(weight, "path", None) or weight.name).replace(":", "_")
                    summary.histogram(f"{name}/histogram", weight, step=epoch)
                    if self.write_images:
                        self._log_weight_image(weight, f"{name}/image", epoch)
        writer.flush()

    def _log_weight_image(self, weight: Any, tag: str, epoch: int) -> None:
        from tapeflow import summary

        w = np.squeeze(np.asarray(weight))
        if w.ndim == 1:  # a bias
            w = w.reshape(1, w.shape[0], 1, 1)
        elif w.ndim == 2:  # a Dense kernel, wide side across
            if w.shape[0] > w.shape[1]:
                w = w.T
            w = w.reshape(1, w.shape[0], w.shape[1], 1)
        elif w.ndim == 3:  # a conv kernel: one image per output channel
            w = np.transpose(w, (2, 0, 1))
            w = w.reshape(w.shape[0], w.shape[1], w.shape[2], 1)
        if w.ndim == 4 and w.shape[-1] in (1, 3, 4):
            summary.image(tag, w, step=epoch)
