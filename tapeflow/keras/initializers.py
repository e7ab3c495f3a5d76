"""``tf.keras.initializers``: weight initializers, seeded like Keras 3 and drawing Keras 3's numbers.

As Keras 3 with the TF backend: a random initializer built without a seed takes one at construction from
Python's ``random`` module (``random.randint(1, 10**9)``, Keras's ``make_default_seed``), so
``tf.keras.utils.set_random_seed`` / ``random.seed`` make it repeat and ``tf.random.set_seed`` alone does not;
every call of one initializer gives the same values (Keras 3's rule); the values are TF's
``tf.random.stateless_uniform`` / ``stateless_normal`` / ``stateless_truncated_normal`` of seed ``[seed, 0]``,
scaled as Keras scales them, so a model built after the same Python seed starts from Keras's weights bit for
bit (``Orthogonal`` takes the same normal draw; its QR is NumPy's).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, constant
from tapeflow.ops import random_ops, threads

__all__ = [
    "Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform", "TruncatedNormal",
    "GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform", "LecunNormal", "LecunUniform",
    "VarianceScaling", "Identity", "Orthogonal", "IdentityInitializer", "OrthogonalInitializer", "get", "serialize",
    "deserialize",
]

_global_rng = np.random.default_rng()
random_ops._state.external.append(lambda: _global_rng)


def set_seed(seed: int | None) -> None:
    """Re-seeds the generator used by unseeded initializers and layers."""
    global _global_rng
    _global_rng = np.random.default_rng(seed)


def rng_for(seed: Any) -> np.random.Generator:
    """A NumPy generator: fresh from ``seed`` (same numbers every call), or
    the shared global one when ``seed`` is None."""
    if seed is None:
        return _global_rng
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(int(seed))


def _default_seed() -> int:
    """Keras 3's ``make_default_seed``: the seed an unseeded initializer takes when it is built."""
    import random

    return random.randint(1, int(1e9))


class _RandomInitializer:
    """Keras 3's ``RandomInitializer`` seed rule: ``seed=None`` takes a Python-``random`` seed now."""

    def _set_seed(self, seed: Any) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError("`seed` argument should be an instance of `keras.random.SeedGenerator()` or an "
                             f"integer. Received: seed={seed}")
        self._init_seed = seed
        self._seed = _default_seed() if seed is None else int(seed)

    @property
    def seed(self) -> int:
        return self._seed

    @seed.setter
    def seed(self, value: Any) -> None:
        self._set_seed(value)

    def _stateless_seed(self) -> list:
        # Keras's draw_seed + _cast_seed: [seed, 0] as int64, then floormod(seed, int32.max - 1) as int32
        return [int(self._seed) % (2**31 - 2), 0]

    def _draw(self, kind: str, shape: tuple, dtype: np.dtype, a: float, b: float) -> np.ndarray:
        """TF's stateless draw Keras makes: ``uniform`` in [a, b), ``normal`` / ``truncated_normal`` with mean
        ``a`` and stddev ``b``, computed eagerly (a layer may be built while a function is traced)."""
        from tapeflow.graph.function import init_scope

        d = dtypes.as_dtype(dtype)
        with init_scope():
            seed = constant(np.int32(self._stateless_seed()))
            if kind == "uniform":  # Keras passes tf.cast(minval, dtype): a Python float goes through float32
                from tapeflow.ops import math_ops

                out = random_ops.stateless_uniform(shape, seed, minval=math_ops.cast(a, d),
                                                   maxval=math_ops.cast(b, d), dtype=d)
            elif kind == "normal":
                out = random_ops.stateless_normal(shape, seed, mean=a, stddev=b, dtype=d)
            else:
                out = random_ops.stateless_truncated_normal(shape, seed, mean=a, stddev=b, dtype=d)
            return out.numpy()


def _np_dtype(dtype: Any) -> np.dtype:
    return dtypes.as_dtype(dtype or "float32").as_numpy_dtype


def _fans(shape: tuple) -> tuple[float, float]:
    # Keras' rule: dense (in, out); conv (*receptive, in, out).
    shape = tuple(int(d) for d in shape)
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = math.prod(shape[:-2])
    return float(shape[-2] * receptive), float(shape[-1] * receptive)


class Initializer:
    """Base class: ``init(shape, dtype=None) -> Tensor``."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
        shape = tuple(int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape))
        if any(d < 0 for d in shape):
            bad = next(d for d in shape if d < 0)
            raise InvalidArgumentError(None, None, f"Dimension {bad} must be >= 0 ({type(self).__name__} called "
                                       f"with shape {shape})")
        return constant(self._generate(shape, _np_dtype(dtype)))

    def _generate(self, shape: tuple, dtype: np.dtype) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement _generate(shape, dtype)")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        from tapeflow.keras.saving.serialization import _drop_inert_unknown

        return cls(**_drop_inert_unknown(cls, config))  # Keras-only options left at None are dropped


class Zeros(Initializer):
    def _generate(self, shape, dtype):
        return np.zeros(shape, dtype)


class Ones(Initializer):
    def _generate(self, shape, dtype):
        return np.ones(shape, dtype)


class Constant(Initializer):
    """Fills with ``value`` (a scalar, or an array of the variable's shape)."""

    def __init__(self, value: Any = 0.0) -> None:
        self.value = value

    def _generate(self, shape, dtype):
        v = np.asarray(self.value.numpy() if hasattr(self.value, "numpy") else self.value, dtype)
        return np.broadcast_to(v, shape).copy()

    def get_config(self):
        return {"value": self.value}


class RandomNormal(_RandomInitializer, Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        self.mean, self.stddev = mean, stddev
        self._set_seed(seed)

    def _generate(self, shape, dtype):
        return self._draw("normal", shape, dtype, self.mean, self.stddev)

    def get_config(self):
        return {"seed": self._init_seed, "mean": self.mean, "stddev": self.stddev}


class RandomUniform(_RandomInitializer, Initializer):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Any = None) -> None:
        self.minval, self.maxval = minval, maxval
        self._set_seed(seed)

    def _generate(self, shape, dtype):
        return self._draw("uniform", shape, dtype, self.minval, self.maxval)

    def get_config(self):
        return {"seed": self._init_seed, "minval": self.minval, "maxval": self.maxval}


def _truncated_normal(rng: np.random.Generator, shape: tuple, stddev: float) -> np.ndarray:
    # Redraw values beyond two standard deviations, as TF's truncated normal.
    out = rng.standard_normal(shape)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(out) > 2.0
    return out * stddev


class TruncatedNormal(_RandomInitializer, Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        self.mean, self.stddev = mean, stddev
        self._set_seed(seed)

    def _generate(self, shape, dtype):
        return self._draw("truncated_normal", shape, dtype, self.mean, self.stddev)

    def get_config(self):
        return {"seed": self._init_seed, "mean": self.mean, "stddev": self.stddev}


class VarianceScaling(_RandomInitializer, Initializer):
    """Keras' VarianceScaling: scale / fan (fan_in, fan_out or their mean)."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal",
                 seed: Any = None, input_axes: Any = None, output_axes: Any = None) -> None:
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r}; expected fan_in, fan_out or fan_avg")
        if distribution not in ("normal", "truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}")
        self.scale, self.mode = scale, mode
        self.distribution = "truncated_normal" if distribution == "normal" else distribution  # as Keras 3
        self.input_axes, self.output_axes = input_axes, output_axes
        self._set_seed(seed)

    def _generate(self, shape, dtype):
        if self.input_axes is not None and self.output_axes is not None:  # Keras' compute_fans over named axes
            dims = tuple(int(d) for d in shape)
            fan_in = float(math.prod(dims[a] for a in self.input_axes))
            fan_out = float(math.prod(dims[a] for a in self.output_axes))
        else:
            fan_in, fan_out = _fans(shape)
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1.0, fan_in)
        elif self.mode == "fan_out":
            scale /= max(1.0, fan_out)
        else:
            scale /= max(1.0, (fan_in + fan_out) / 2.0)
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / 0.87962566103423978  # std of a unit normal truncated at 2
            return self._draw("truncated_normal", shape, dtype, 0.0, stddev)
        if self.distribution == "untruncated_normal":
            return self._draw("normal", shape, dtype, 0.0, math.sqrt(scale))
        limit = math.sqrt(3.0 * scale)
        return self._draw("uniform", shape, dtype, -limit, limit)

    def get_config(self):
        return {"seed": self._init_seed, "scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "input_axes": self.input_axes, "output_axes": self.output_axes}


class GlorotUniform(VarianceScaling):
    """Uniform in ±sqrt(6 / (fan_in + fan_out)): Keras' default kernel initializer."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": None, "output_axes": None}


class GlorotNormal(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": None, "output_axes": None}


class HeNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / fan_in)."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(2.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": None, "output_axes": None}


class HeUniform(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(2.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": None, "output_axes": None}


class LecunNormal(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": None, "output_axes": None}


class LecunUniform(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": None, "output_axes": None}


class Identity(Initializer):
    def __init__(self, gain: float = 1.0) -> None:
        self.gain = gain

    def _generate(self, shape, dtype):
        if len(shape) != 2:
            raise ValueError(f"Identity initializer requires a 2D shape. Received: shape={shape}")
        return (self.gain * np.eye(*shape)).astype(dtype)


class Orthogonal(_RandomInitializer, Initializer):
    """A (semi-)orthogonal matrix (QR of a normal draw, signs fixed by R's diagonal) times ``gain``;
    shapes of rank > 2 are flattened to ``(prod(shape[:-1]), shape[-1])`` (Keras' rule; the default
    ``recurrent_initializer`` of the RNN layers)."""

    def __init__(self, gain: float = 1.0, seed: Any = None) -> None:
        self.gain = gain
        self._set_seed(seed)

    def _generate(self, shape, dtype):
        if len(shape) < 2:
            raise ValueError(f"The tensor to initialize must be at least two-dimensional. Received: "
                             f"shape={shape} of rank {len(shape)}.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        a = self._draw("normal", (max(rows, cols), min(rows, cols)), dtype, 0.0, 1.0)
        threads.before_blas(float(a.size) * a.shape[1])  # LAPACK on the threads its size and the load call for
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (self.gain * q.reshape(shape)).astype(dtype)

    def get_config(self):
        return {"seed": self._init_seed, "gain": self.gain}


_ALIASES = {
    "orthogonal": Orthogonal,
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "uniform": RandomUniform, "normal": RandomNormal,
    "truncated_normal": TruncatedNormal, "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
    "he_normal": HeNormal, "he_uniform": HeUniform, "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform,
    "variance_scaling": VarianceScaling, "identity": Identity,
}


def get(identifier: Any) -> Initializer | None:
    """An initializer from a name (``"glorot_uniform"``), class, config dict or instance."""
    if identifier is None or isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        key = identifier if identifier in _ALIASES else _snake(identifier)
        if key not in _ALIASES:
            raise ValueError(f"Could not interpret initializer identifier: {identifier!r}. "
                             f"Known names: {', '.join(sorted(_ALIASES))}")
        return _ALIASES[key]()
    if isinstance(identifier, dict):
        cls = get(identifier["class_name"])
        return type(cls).from_config(identifier.get("config", {}))
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")


def serialize(initializer: Initializer) -> dict:
    """Keras 3's form: ``{"module": "keras.initializers", "class_name", "config", "registered_name"}``."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(initializer)


def _snake(name: str) -> str:
    import re

    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


# Keras' lower-case aliases (tf.keras.initializers.glorot_uniform ...)
zeros, ones, constant_ = Zeros, Ones, Constant
glorot_uniform, glorot_normal, he_normal, he_uniform = GlorotUniform, GlorotNormal, HeNormal, HeUniform
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
orthogonal = OrthogonalInitializer = Orthogonal
lecun_normal, lecun_uniform, variance_scaling = LecunNormal, LecunUniform, VarianceScaling
identity = IdentityInitializer = Identity


def deserialize(config: Any, custom_objects: dict | None = None) -> Initializer:
    """The initializer a name (``"he_normal"``) or a ``serialize`` dict describes."""
    if isinstance(config, str) and custom_objects and config in custom_objects:
        found = custom_objects[config]
        return found() if isinstance(found, type) else found
    if isinstance(config, dict) and "module" in config:
        from tapeflow.keras.saving.serialization import deserialize_keras_object

        return deserialize_keras_object(config, custom_objects)
    return get(config)
