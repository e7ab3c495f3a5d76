"""``tf.keras.utils`` helpers for sequences, arrays and data tuples, with Keras 3.15's semantics:
``pad_sequences``, ``normalize``, ``timeseries_dataset_from_array``, ``pack_x_y_sample_weight`` /
``unpack_x_y_sample_weight``, ``get_source_inputs``."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["pad_sequences", "normalize", "timeseries_dataset_from_array", "pack_x_y_sample_weight",
           "unpack_x_y_sample_weight", "get_source_inputs"]


def pad_sequences(sequences: Any, maxlen: int | None = None, dtype: Any = "int32", padding: str = "pre",
                  truncating: str = "pre", value: Any = 0.0) -> np.ndarray:
    """A (num_samples, maxlen, ...) array of ``sequences``, each cut to its last (``truncating="pre"``) or first
    ``maxlen`` items and filled with ``value`` before (``padding="pre"``) or after them."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, sample_shape, found = [], (), False
    for x in sequences:
        try:
            lengths.append(len(x))
        except TypeError as e:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {x}") from e
        if not found and len(x):
            sample_shape, found = np.asarray(x).shape[1:], True
    if maxlen is None:
        maxlen = np.max(lengths)
    is_str = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not is_str:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\nYou should set "
                         "`dtype=object` for variable length strings.")
    out = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            kept = s[-maxlen:]
        elif truncating == "post":
            kept = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            out[i, :len(kept)] = kept
        elif padding == "pre":
            out[i, -len(kept):] = kept
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out


def normalize(x: Any, axis: int = -1, order: int = 2) -> Any:
    """``x`` divided by its ``order``-norm along ``axis``: a NumPy array for NumPy input (zero norms left as 1),
    a tensor for a tensor (``x / max(norm, 1e-7)``; L2 as ``x * min(rsqrt(sum x**2), 1e7)``)."""
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        return x / np.expand_dims(norm, axis or -1)
    from tapeflow.framework import namespaces

    tf = namespaces.get("tapeflow")  # the public namespace (tapeflow.keras may not import the package root)

    if not isinstance(order, int) or not order >= 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = tf.convert_to_tensor(x)
    if x.shape.rank == 0:
        x = tf.expand_dims(x, 0)
    if order == 2:
        inv = tf.math.rsqrt(tf.reduce_sum(tf.square(x), axis=axis, keepdims=True))
        return x * tf.minimum(inv, 1.0 / 1e-7)
    norm = tf.reduce_sum(tf.abs(x) ** order, axis=axis, keepdims=True) ** (1.0 / order)
    return x / tf.maximum(norm, 1e-7)


def timeseries_dataset_from_array(data: Any, targets: Any, sequence_length: int, sequence_stride: int = 1,
                                  sampling_rate: int = 1, batch_size: int | None = 128, shuffle: bool = False,
                                  seed: int | None = None, start_index: int | None = None,
                                  end_index: int | None = None, format: str = "tf") -> Any:  # noqa: A002
    """A ``tf.data.Dataset`` of sliding windows over ``data``: window ``i`` holds the rows
    ``start + i * sequence_stride + k * sampling_rate`` (``k < sequence_length``), paired with ``targets`` at the
    window's first row when given; batched by ``batch_size`` and optionally shuffled (Keras's NumPy draw of the
    start positions, then a ``shuffle(batch_size * 8, seed)``)."""
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= n:
            raise ValueError(f"`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {n}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(f"`end_index` must be higher than `start_index`. Received: start_index={start_index}, "
                             f"and end_index={end_index} ")
        if end_index >= n:
            raise ValueError(f"`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {n}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    if sampling_rate <= 0:
        raise ValueError(f"`sampling_rate` must be higher than 0. Received: sampling_rate={sampling_rate}")
    if sampling_rate >= n:
        raise ValueError(f"`sampling_rate` must be lower than the length of the data. Received: "
                         f"sampling_rate={sampling_rate}, for data of length {n}")
    if sequence_stride <= 0:
        raise ValueError(f"`sequence_stride` must be higher than 0. Received: sequence_stride={sequence_stride}")
    if sequence_stride >= n:
        raise ValueError(f"`sequence_stride` must be lower than the length of the data. Received: "
                         f"sequence_stride={sequence_stride}, for data of length {n}")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if format == "grain":
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError("timeseries_dataset_from_array(format='grain') is not implemented in "
                                            "tapeflow")
    from tapeflow.framework import namespaces

    tf = namespaces.get("tapeflow")  # the public namespace (tapeflow.keras may not import the package root)

    start = start_index or 0
    end = n if end_index is None else end_index
    num_seqs = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    index_dtype = "int32" if num_seqs < 2147483647 else "int64"
    starts = np.arange(0, num_seqs, sequence_stride, dtype=index_dtype)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(starts)
    steps = tf.constant(np.asarray(data)[start:end])
    span = np.asarray(sequence_length * sampling_rate, index_dtype)
    rate = np.asarray(sampling_rate, index_dtype)
    positions = tf.data.Dataset.from_tensor_slices(starts)
    dataset = positions.map(lambda p: tf.gather(steps, tf.range(p, p + span, rate)))
    if targets is not None:
        target_steps = tf.constant(np.asarray(targets)[start:end])
        dataset = tf.data.Dataset.zip((dataset, positions.map(lambda p: tf.gather(target_steps, p))))
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        return dataset.batch(batch_size)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=1024, seed=seed)
    return dataset


def unpack_x_y_sample_weight(data: Any) -> tuple:
    """``(x, y, sample_weight)`` of ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)`` (None where absent)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) in (1, 2, 3):
        return tuple(data) + (None,) * (3 - len(data))
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, found: "
                     f"{data}")


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    """The tuple ``fit`` expects: ``x`` (``(x,)`` when ``x`` is itself a tuple/list), ``(x, y)`` or
    ``(x, y, sample_weight)``."""
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return x, y
    return x, y, sample_weight


def get_source_inputs(tensor: Any) -> Any:
    """The ``tf.keras.Input`` tensors a functional-model tensor was computed from (a list; a non-symbolic value
    comes back unchanged)."""
    from tapeflow.keras.layers.base import KerasTensor

    if not isinstance(tensor, KerasTensor):
        return tensor
    history = tensor._keras_history
    if not history or history[1] is None:
        return [tensor]
    sources: list = []
    for t in history[1].input_tensors:
        for s in get_source_inputs(t):
            if all(s is not u for u in sources):
                sources.append(s)
    return sources
