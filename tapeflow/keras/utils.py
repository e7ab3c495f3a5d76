"""``tf.keras.utils``: seeding and label helpers."""

from __future__ import annotations

import re
import sys
import time
from typing import Any

import numpy as np

from tapeflow.keras.saving.serialization import (  # noqa: F401 - tf.keras.utils re-exports them, as TF's
    CustomObjectScope, custom_object_scope, deserialize_keras_object, get_custom_objects, get_registered_name,
    get_registered_object, register_keras_serializable, serialize_keras_object,
)

from tapeflow.keras.dataset_utils import (  # noqa: F401 - tf.keras.utils's
    audio_dataset_from_directory, split_dataset, text_dataset_from_directory)
from tapeflow.keras.backend import clear_session, is_keras_tensor, standardize_dtype  # noqa: F401 - as Keras's
from tapeflow.keras.file_utils import get_file  # noqa: F401 - tf.keras.utils's
from tapeflow.keras.saving import legacy_serialization as legacy  # noqa: F401 - tf.keras.utils.legacy
from tapeflow.keras.io_utils import (  # noqa: F401 - tf.keras.utils's
    disable_interactive_logging, enable_interactive_logging, is_interactive_logging_enabled, print_msg)
from tapeflow.keras.sequence_utils import (  # noqa: F401 - tf.keras.utils's
    get_source_inputs, normalize, pack_x_y_sample_weight, pad_sequences, timeseries_dataset_from_array,
    unpack_x_y_sample_weight)

__all__ = ["set_random_seed", "to_categorical", "Progbar", "register_keras_serializable", "get_registered_name",
           "text_dataset_from_directory", "audio_dataset_from_directory", "split_dataset",
           "get_registered_object", "get_custom_objects", "custom_object_scope", "CustomObjectScope",
           "serialize_keras_object", "deserialize_keras_object"]


def set_random_seed(seed: int) -> None:
    """Seeds Python, NumPy, tf.random and the Keras initializers/shuffling at once."""
    import random

    from tapeflow.keras import initializers

    from tapeflow.keras.random import reset_global_seed_generator

    reset_global_seed_generator()  # as Keras: the next unseeded keras.random draw makes a new one from `seed`
    random.seed(seed)
    np.random.seed(seed)
    initializers.set_seed(seed)
    try:
        import tapeflow.random as tfr

        tfr.set_seed(seed)
    except (ImportError, AttributeError):
        pass


def to_categorical(x: Any, num_classes: int | None = None) -> Any:
    """One-hot encodes integer labels, as Keras 3: NumPy labels (or lists) give a float64 NumPy array, a
    tensor gives a float32 tensor (``one_hot``); a trailing dimension of 1 is dropped."""
    from tapeflow.framework.tensor import Tensor

    if isinstance(x, Tensor):
        if len(x.shape) > 1 and x.shape[-1] == 1:
            from tapeflow.ops import array_ops

            x = array_ops.reshape(x, tuple(x.shape)[:-1])
        from tapeflow.ops.indexing_ops import one_hot

        return one_hot(x, num_classes)
    x = np.array(x, dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    n = num_classes or int(x.max()) + 1
    out = np.zeros((x.size, n))
    out[np.arange(x.size), x] = 1
    return out.reshape(shape + (n,))


class Progbar:
    """Keras 3's progress bar (``tf.keras.utils.Progbar``), on stdout. On a terminal it redraws one line
    (``19/19 ━━━━━━━━━━━━━━━━━━━━ 1s 2ms/step - accuracy: 0.1133 - loss: 2.5342``, Keras's colours); when stdout
    is a pipe or a file it writes only each finished bar's line, without colour codes. ``verbose=2`` writes one
    line when the bar finishes (``4/4 - 0s - 22ms/step - loss: ...``). Values are averaged over steps unless
    named in ``stateful_metrics``, as in Keras."""

    def __init__(self, target: int | None, width: int = 20, verbose: int = 1, interval: float = 0.05,
                 stateful_metrics: Any = None, stateless_metrics: Any = None, unit_name: str = "step") -> None:
        self.target, self.width, self.verbose, self.interval, self.unit_name = target, width, verbose, interval, \
            unit_name
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be provided.")
        self.stateful_metrics = set(stateful_metrics or ())
        self.stateless_metrics = None if stateless_metrics is None else set(stateless_metrics)
        self._values: dict = {}
        self._seen_so_far = 0
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first_step: float | None = None
        self._prev_total_width = 0

    @staticmethod
    def _dynamic() -> bool:
        return hasattr(sys.stdout, "isatty") and sys.stdout.isatty()

    def update(self, current: int, values: Any = None, finalize: bool | None = None) -> None:
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for k, v in values or []:
            stateless = k in self.stateless_metrics if self.stateless_metrics is not None else \
                k not in self.stateful_metrics
            if not stateless or finalize:
                self._values[k] = [v, 1]
            else:
                base = max(current - self._seen_so_far, 1)
                s = self._values.setdefault(k, [0.0, 0])
                s[0] += v * base
                s[1] += base
        self._seen_so_far = current
        now = time.time()
        per_unit = self._step_duration(current, now)
        if self.verbose == 1:
            dynamic = self._dynamic()
            if not finalize and (not dynamic or now - self._last_update < self.interval):
                return
            self._write(self._line(current, now, per_unit, finalize, dynamic), dynamic, finalize)
        elif self.verbose == 2 and finalize and self.target:
            count = f"{current:{len(str(self.target))}d}/{self.target}"
            print_msg(f"{count} - {now - self._start:.0f}s -{_format_time(per_unit, self.unit_name)}"
                      f"{self._metrics_text(verbose2=True)}")
        self._last_update = now

    def add(self, n: int, values: Any = None) -> None:
        self.update(self._seen_so_far + n, values)

    def _metrics_text(self, verbose2: bool = False) -> str:
        out = ""
        for k, (total, count) in self._values.items():
            avg = float(np.mean(total)) / max(1, count)
            big = avg > 1e-3 if verbose2 else abs(avg) > 1e-3  # Keras's two bars differ here
            out += f" - {k}: {avg:.4f}" if big else f" - {k}: {avg:.4e}"
        return out

    def _line(self, current: int, now: float, per_unit: float, finalize: bool, color: bool) -> tuple:
        def c(code: str, s: str) -> str:
            return f"{code}{s}\x1b[0m" if color else s

        if self.target:
            count = f"{current:{len(str(self.target))}d}/{self.target}"
            filled = int(self.width * current / self.target)
            bar = c("\x1b[1m", count) + " " + (c("\33[32m", "━" * filled) if filled > 0 else "") + \
                c("\33[37m", "━" * (self.width - filled))
        else:
            bar = f"{current:7d}/Unknown"
        if self.target and not finalize:
            eta = per_unit * (self.target - current)
            e = int(eta)
            when = f"{e // 3600}:{e % 3600 // 60:02d}:{e % 60:02d}" if eta > 3600 else \
                f"{e // 60}:{e % 60:02d}" if eta > 60 else f"{e}s"
        else:
            when = f"{now - self._start:.0f}s"
        line = bar + " " + c("\x1b[1m", when) + _format_time(per_unit, self.unit_name) + self._metrics_text()
        return line, len(_ANSI.sub("", line))

    def _write(self, line_width: tuple, dynamic: bool, finalize: bool) -> None:
        line, width = line_width
        if dynamic:
            msg = "\b" * self._prev_total_width + "\r" + line
            if self._prev_total_width > width:
                msg += " " * (self._prev_total_width - width)
            self._prev_total_width = width
        else:
            msg = line
        print_msg(msg, line_break=finalize)

    def _step_duration(self, current: int, now: float) -> float:
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_unit


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _format_time(per_unit: float, unit_name: str) -> str:
    if per_unit >= 1 or per_unit == 0:
        return f" {per_unit:.0f}s/{unit_name}"
    if per_unit >= 1e-3:
        return f" {per_unit * 1000.0:.0f}ms/{unit_name}"
    return f" {per_unit * 1000000.0:.0f}us/{unit_name}"


def plot_model(model: Any, to_file: str = "model.png", show_shapes: bool = False, show_dtype: bool = False,
               show_layer_names: bool = False, rankdir: str = "TB", expand_nested: bool = False, dpi: int = 200,
               show_layer_activations: bool = False, show_trainable: bool = False, splines: str = "ortho",
               **kwargs: Any) -> Any:
    """Keras 3's checks before drawing: an unbuilt model is a ValueError, a missing pydot an ImportError
    (in IPython a printed message, as Keras). The drawing itself (pydot/graphviz) is not implemented."""
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by "
                         "calling the model on a batch of data.")
    try:
        import pydot  # noqa: F401
    except ImportError:
        message = "You must install pydot (`pip install pydot`) for `plot_model` to work."
        if "IPython.core.magics.namespace" in sys.modules:
            print(message)
            return None
        raise ImportError(message) from None
    raise NotImplementedError("tf.keras.utils.plot_model: drawing the model with pydot/graphviz is not implemented "
                              "in tapeflow; model.summary() prints its layers")


# Keras utilities tapeflow lacks: NotImplementedError naming them (also an AttributeError, for hasattr)
from tapeflow.keras._missing import module_getattr as _module_getattr  # noqa: E402

_missing_getattr = _module_getattr("tf.keras.utils", frozenset((
    "model_to_dot"
).split()))

# loaded on first use: the image helpers need Pillow only when called
_LAZY = {"load_img": "tapeflow.keras.preprocessing.image", "save_img": "tapeflow.keras.preprocessing.image",
         "img_to_array": "tapeflow.keras.preprocessing.image", "array_to_img": "tapeflow.keras.preprocessing.image",
         "PyDataset": "tapeflow.keras.py_dataset", "Sequence": "tapeflow.keras.py_dataset",
         "image_dataset_from_directory": "tapeflow.keras.preprocessing.image_dataset",
         "FeatureSpace": "tapeflow.keras.layers.feature_space", "Config": "tapeflow.keras.utils_config"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), "PyDataset" if name == "Sequence" else name)
        globals()[name] = value
        return value
    return _missing_getattr(name)
