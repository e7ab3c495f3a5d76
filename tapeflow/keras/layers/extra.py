"""Smaller Keras layers the tutorials construct: ``Masking``; the noise layers ``GaussianNoise``,
``GaussianDropout``, ``SpatialDropout1D/2D/3D``; ``Cropping1D/3D``, ``ZeroPadding1D/3D``,
``UpSampling1D/3D``; the activation layers ``ELU`` and ``PReLU``."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow import nn
from tapeflow.framework.tensor import Tensor
from tapeflow.keras import constraints, initializers, regularizers
from tapeflow.keras.layers.base import KerasTensor, Layer
from tapeflow.keras.layers.conv_nd import check_ndim, serialize
from tapeflow.keras.saving.serialization import base_config as _base_config
from tapeflow.ops import math_ops as mo

__all__ = [
    "Masking",
    "GaussianNoise",
    "GaussianDropout",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "ZeroPadding1D",
    "ZeroPadding3D",
    "Cropping1D",
    "Cropping3D",
    "UpSampling1D",
    "UpSampling3D",
    "ELU",
    "PReLU",
]



class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value`` (and zeroes them): the
    following RNN / attention / pooling layers skip them."""

    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, mask_value: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs: Any, mask: Any = None) -> Tensor:
        if isinstance(inputs, KerasTensor):  # Keras's ops: in a functional model, NotEqual and Any nodes
            from tapeflow.keras import ops

            return ops.any(ops.not_equal(inputs, self.mask_value), axis=-1)
        return mo.reduce_any(mo.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs: Tensor) -> Tensor:
        keep = mo.reduce_any(mo.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        return inputs * mo.cast(keep, inputs.dtype)

    def get_config(self) -> dict:
        return {**_base_config(self), "mask_value": self.mask_value}


def _noise_draw(kind: str, shape: Any, dtype: Any, seed: Any, **kw: Any) -> Tensor:
    import tapeflow.random as tfr

    if kind == "normal":
        return tfr.normal(shape, mean=kw.get("mean", 0.0), stddev=kw["stddev"], dtype=dtype, seed=seed)
    return tfr.uniform(shape, dtype=dtype, seed=seed)


def _dyn_shape(x: Tensor) -> Any:
    shape = x._shape_tuple()
    if None in shape:
        from tapeflow.ops import shape_ops

        return shape_ops.shape_of(x)
    return shape


def _keras_seed_draw() -> None:
    """The Python-random seed Keras 3's unseeded SeedGenerator takes at construction: drawn here too (these
    layers' noise is tf.random's), so the initializers built after them get Keras's seeds."""
    from tapeflow.keras import initializers

    initializers._default_seed()


class GaussianNoise(Layer):
    """Adds zero-mean Gaussian noise of ``stddev`` in training (a regularizer; identity at inference)."""

    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, stddev: float, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0 <= stddev <= 1:
            raise ValueError(
                f"Invalid value received for argument `stddev`. Expected a float value between 0 "
                f"and 1. Received: stddev={stddev}"
            )
        self.stddev, self.seed = float(stddev), seed
        if stddev > 0 and seed is None:
            _keras_seed_draw()

    def call(self, inputs: Tensor, training: Any = None) -> Tensor:
        if training and self.stddev > 0:
            return inputs + _noise_draw("normal", _dyn_shape(inputs), inputs.dtype, self.seed, stddev=self.stddev)
        return inputs

    def get_config(self) -> dict:
        return {**_base_config(self), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(Layer):
    """Multiplies by Gaussian noise of mean 1 and std ``sqrt(rate / (1 - rate))`` in training."""

    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(
                f"Invalid value received for argument `rate`. Expected a float value between 0 and "
                f"1. Received: rate={rate}"
            )
        self.rate, self.seed = float(rate), seed
        if rate > 0 and seed is None:
            _keras_seed_draw()

    def call(self, inputs: Tensor, training: Any = None) -> Tensor:
        if training and 0 < self.rate < 1:
            std = float(np.sqrt(self.rate / (1.0 - self.rate)))
            return inputs * _noise_draw("normal", _dyn_shape(inputs), inputs.dtype, self.seed, mean=1.0, stddev=std)
        return inputs

    def get_config(self) -> dict:
        return {**_base_config(self), "rate": self.rate, "seed": self.seed}


class _SpatialDropout(Layer):
    """Drops whole feature maps (one draw per sample and channel) in training, scaling the rest by
    ``1 / (1 - rate)``."""

    _keras_built_at_init = True  # Keras writes no build_config for it

    rank = 1

    def __init__(self, rate: float, seed: int | None = None, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"data_format={data_format!r}: tapeflow's Keras supports channels_last only")
        if not 0 <= rate <= 1:
            raise ValueError(
                f"Invalid value received for argument `rate`. Expected a float value between 0 and "
                f"1. Received: rate={rate}"
            )
        self.rate, self.seed = float(rate), seed
        if rate > 0 and seed is None:
            _keras_seed_draw()

    def call(self, inputs: Tensor, training: Any = None) -> Tensor:
        check_ndim(self, inputs._shape_tuple(), self.rank + 2)
        if not training or self.rate == 0:
            return inputs
        shape = _dyn_shape(inputs)
        noise_shape = [shape[0]] + [1] * self.rank + [shape[-1]]
        return nn.dropout(inputs, rate=self.rate, noise_shape=noise_shape, seed=self.seed)

    def get_config(self) -> dict:
        # Keras 3.15's own form: no trainable, dtype as a string (not a DTypePolicy)
        return {
            "rate": self.rate,
            "seed": self.seed,
            "name": self.name,
            "dtype": self.dtype,
            **({"data_format": "channels_last"} if self.rank > 1 else {}),
        }


class SpatialDropout1D(_SpatialDropout):
    rank = 1

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(rate, seed, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    rank = 2


class SpatialDropout3D(_SpatialDropout):
    rank = 3


def _pairs(v: Any, n: int, what: str) -> tuple:
    """An int, n ints or n (before, after) pairs as n (before, after) pairs."""
    if isinstance(v, (int, np.integer)):
        return ((int(v), int(v)),) * n
    v = tuple(v)
    if n == 1 and len(v) == 2 and all(isinstance(a, (int, np.integer)) for a in v):
        return ((int(v[0]), int(v[1])),)
    if len(v) != n:
        raise ValueError(f"`{what}` should have {n} elements. Received: {what}={v}.")
    return tuple((int(p), int(p)) if isinstance(p, (int, np.integer)) else (int(p[0]), int(p[1])) for p in v)


class _ZeroPadding(Layer):
    rank = 1
    _default: Any = 1

    def __init__(self, padding: Any = None, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"data_format={data_format!r}: tapeflow's Keras supports channels_last only")
        self.padding = _pairs(self._default if padding is None else padding, self.rank, "padding")

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.ops.indexing_ops import pad

        check_ndim(self, inputs._shape_tuple(), self.rank + 2)
        return pad(inputs, [[0, 0], *[list(p) for p in self.padding], [0, 0]])

    def get_config(self) -> dict:
        return {
            **_base_config(self),
            "padding": self.padding[0] if self.rank == 1 else self.padding,
            "data_format": "channels_last",
        }


class ZeroPadding1D(_ZeroPadding):
    """Pads the steps axis of ``(batch, steps, features)`` with zeros (``padding``: int or (left, right))."""

    rank = 1


class ZeroPadding3D(_ZeroPadding):
    """Pads the three spatial axes of NDHWC volumes with zeros."""

    rank = 3


class _Cropping(Layer):
    rank = 1
    _default: Any = (1, 1)

    def __init__(self, cropping: Any = None, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"data_format={data_format!r}: tapeflow's Keras supports channels_last only")
        self.cropping = _pairs(self._default if cropping is None else cropping, self.rank, "cropping")

    def call(self, inputs: Tensor) -> Tensor:
        shape = inputs._shape_tuple()
        check_ndim(self, shape, self.rank + 2)
        index = [slice(None)]
        for d, (a, b) in zip(shape[1:-1], self.cropping):
            if d is not None and a + b >= d:
                raise ValueError(
                    f"`cropping` parameter of `{type(self).__name__}` layer must be smaller than the "
                    f"input length. Received: inputs.shape={tuple(shape)}, cropping={self.cropping}"
                )
            index.append(slice(a, -b if b else None))
        return inputs[tuple(index) + (slice(None),)]

    def get_config(self) -> dict:
        return {
            **_base_config(self),
            "cropping": self.cropping[0] if self.rank == 1 else self.cropping,
            **({"data_format": "channels_last"} if self.rank > 1 else {}),
        }


class Cropping1D(_Cropping):
    """Crops the steps axis of ``(batch, steps, features)`` (``cropping``: int or (left, right))."""

    rank = 1


class Cropping3D(_Cropping):
    """Crops the three spatial axes of NDHWC volumes."""

    rank = 3
    _default = ((1, 1), (1, 1), (1, 1))


class UpSampling1D(Layer):
    """Repeats each step ``size`` times: ``(batch, steps, f)`` -> ``(batch, steps * size, f)``."""

    def __init__(self, size: int = 2, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size = int(size)

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.ops.indexing_ops import repeat

        check_ndim(self, inputs._shape_tuple(), 3)
        return repeat(inputs, self.size, axis=1)

    def get_config(self) -> dict:
        return {**_base_config(self), "size": self.size}


class UpSampling3D(Layer):
    """Repeats each voxel ``size`` times along the three spatial axes of NDHWC volumes."""

    def __init__(self, size: Any = (2, 2, 2), data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"data_format={data_format!r}: tapeflow's Keras supports channels_last only")
        self.size = (int(size),) * 3 if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.ops.indexing_ops import repeat

        check_ndim(self, inputs._shape_tuple(), 5)
        for axis, s in enumerate(self.size, start=1):
            inputs = repeat(inputs, s, axis=axis)
        return inputs

    def get_config(self) -> dict:
        return {**_base_config(self), "size": self.size, "data_format": "channels_last"}


class ELU(Layer):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""

    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs: Tensor) -> Tensor:
        y = nn.elu(inputs)
        if self.alpha == 1.0:
            return y
        return mo.where(mo.greater(inputs, 0.0), y, y * self.alpha)

    def get_config(self) -> dict:
        base = _base_config(self)  # Keras 3.15's order: name, alpha, trainable, dtype
        return {"name": base.pop("name"), "alpha": self.alpha, **base}


class PReLU(Layer):
    """Leaky ReLU with a learned slope ``alpha`` per element (shared along ``shared_axes``):
    ``max(x, 0) + alpha * min(x, 0)``; ``alpha`` has the input's shape without the batch axis."""

    _supports_masking = True

    def __init__(
        self,
        alpha_initializer: Any = "zeros",
        alpha_regularizer: Any = None,
        alpha_constraint: Any = None,
        shared_axes: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer) if alpha_regularizer else None
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None or isinstance(shared_axes, (list, tuple)):
            self.shared_axes = None if shared_axes is None else list(shared_axes)
        else:
            self.shared_axes = [shared_axes]

    def build(self, input_shape: Any) -> None:
        param_shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            param_shape[axis - 1] = 1
        self.alpha = self.add_weight(
            shape=tuple(param_shape),
            name="alpha",
            initializer=self.alpha_initializer,
            regularizer=self.alpha_regularizer,
            constraint=self.alpha_constraint,
        )
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        pos = mo.maximum(inputs, 0.0)
        neg = -self.alpha.value() * mo.relu(-inputs)
        return pos + neg

    def get_config(self) -> dict:
        return {
            **_base_config(self),
            "alpha_initializer": serialize(self.alpha_initializer),
            "alpha_regularizer": serialize(self.alpha_regularizer),
            "alpha_constraint": serialize(self.alpha_constraint),
            "shared_axes": self.shared_axes,
        }


from tapeflow.keras.layers import base as _base  # noqa: E402

_base._GRAPH_MASKS.add(Masking.compute_mask)
