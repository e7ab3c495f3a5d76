"""``tf.keras.random``: Keras 3's random functions and ``SeedGenerator``, drawing Keras 3's numbers (TF backend).

Every function is one of TF's stateless draws (``tf.random.stateless_normal`` ...) of a seed Keras derives:

- ``seed=<int>``: ``[seed, 0]``, so the same values on every call;
- ``seed=SeedGenerator``: its ``[seed, counter]`` state, the counter advanced by one per draw;
- ``seed=None``: the global ``SeedGenerator`` (created on the first unseeded draw, its seed from Python's
  ``random``, so ``tf.keras.utils.set_random_seed`` repeats it); its state moves as Keras's unordered step
  ``(state + 1) * 5387 % 933199``.

The int64 state goes to the kernels as ``floormod(state, int32.max - 1)`` in int32 (Keras's ``_cast_seed``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.base import unique_name
from tapeflow.ops import array_ops, math_ops, random_ops, special_ops

__all__ = ["SeedGenerator", "normal", "uniform", "truncated_normal", "randint", "categorical", "dropout",
           "shuffle", "gamma", "binomial", "beta"]

_global: list = [None]  # the global SeedGenerator, made on the first unseeded draw (Keras's global_state)


def _default_seed() -> int:
    from tapeflow.keras import initializers

    return initializers._default_seed()


class SeedGenerator:
    """The state of a stream of random draws: ``keras.random.normal(shape, seed=gen)`` gives new values each
    call. ``seed=None`` takes a Python-``random`` seed now (Keras's ``make_default_seed``)."""

    def __init__(self, seed: int | None = None, name: str | None = None, **kwargs: Any) -> None:
        self.name = name or unique_name("seed_generator")
        kwargs.pop("backend", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        self._initial_seed = seed
        if seed is None:
            seed = _default_seed()
        if not isinstance(seed, int):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        from tapeflow.framework.variables import Variable
        from tapeflow.graph.function import init_scope

        from tapeflow.keras.layers.base import current_path, name_scope

        with init_scope():  # first drawn inside a traced function (fit's train step): still a real variable
            self.state = Variable(np.array([seed, 0], np.int64), trainable=False, name="seed_generator_state")
        with name_scope(self.name, self):  # a Keras variable: path seed_generator/seed_generator_state
            self.state.path = f"{current_path()}/seed_generator_state"
        self.state._keras_name = "seed_generator_state"

    def next(self, ordered: bool = True) -> Tensor:
        """The current state (the seed of one draw); then the state moves on."""
        value = self.state.value()
        value = math_ops.multiply(value, np.int64(1))  # a copy, as Keras's `state.value * 1`
        if ordered:
            self.state.assign_add(np.array([0, 1], np.int64))
        else:
            self.state.assign(math_ops.floormod(math_ops.multiply(math_ops.add(self.state.value(), np.int64(1)),
                                                                  np.int64(5387)), np.int64(933199)))
        return value

    def get_config(self) -> dict:
        return {"seed": self._initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> SeedGenerator:
        return cls(**config)


def global_seed_generator() -> SeedGenerator:
    if _global[0] is None:
        _global[0] = SeedGenerator()
    return _global[0]


def reset_global_seed_generator() -> None:
    """``set_random_seed`` and ``clear_session`` drop the global generator (the next draw makes a new one)."""
    _global[0] = None


def draw_seed(seed: Any) -> Tensor:
    """Keras's ``draw_seed`` then ``_cast_seed``: the int32 ``[2]`` seed of one stateless draw."""
    if isinstance(seed, SeedGenerator):
        s = seed.next()
    elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        s = convert_to_tensor(np.array([int(seed), 0], np.int64))
    elif seed is None:
        s = global_seed_generator().next(ordered=False)
    else:
        raise ValueError("Argument `seed` must be either an integer or an instance of `SeedGenerator`. "
                         f"Received: seed={seed} (of type {type(seed)})")
    return math_ops.cast(math_ops.floormod(s, np.int64(2**31 - 2)), "int32")


def _floatx(dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    from tapeflow.keras.backend import floatx

    return floatx()


def normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """Samples of N(mean, stddev²)."""
    return random_ops.stateless_normal(shape, draw_seed(seed), mean=mean, stddev=stddev, dtype=_floatx(dtype))


def uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """Samples of U[minval, maxval)."""
    d = _floatx(dtype)
    return random_ops.stateless_uniform(shape, draw_seed(seed), minval=math_ops.cast(minval, d),
                                        maxval=math_ops.cast(maxval, d), dtype=d)


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: Any = None) -> Tensor:
    """Normal samples, those beyond two standard deviations drawn again."""
    return random_ops.stateless_truncated_normal(shape, draw_seed(seed), mean=mean, stddev=stddev,
                                                 dtype=_floatx(dtype))


def randint(shape: Any, minval: int, maxval: int, dtype: Any = "int32", seed: Any = None) -> Tensor:
    """Integers uniform in ``[minval, maxval)``."""
    if dtype and not dtypes.as_dtype(dtype).is_integer:
        raise ValueError(f"`keras.random.randint` requires an integer `dtype`. Received: dtype={dtype} ")
    middle = dtype if dtypes.as_dtype(dtype).name in ("int32", "int64") else "int64"
    out = random_ops.stateless_uniform(shape, draw_seed(seed), minval=minval, maxval=maxval, dtype=middle)
    return math_ops.cast(out, dtype)


def categorical(logits: Any, num_samples: int, dtype: Any = "int32", seed: Any = None) -> Tensor:
    """``num_samples`` class indices per row of the 2-D ``logits``."""
    x = convert_to_tensor(logits)
    if len(x.shape) != 2:
        raise ValueError(f"`logits` should be a 2-D tensor with shape [batch_size, num_classes]. Received: "
                         f"logits={logits}")
    return math_ops.cast(random_ops.stateless_categorical(x, num_samples, draw_seed(seed)), dtype)


def dropout(inputs: Any, rate: float, noise_shape: Any = None, seed: Any = None) -> Tensor:
    """``inputs`` with a fraction ``rate`` zeroed and the rest scaled by ``1 / (1 - rate)``."""
    if rate == 1.0:
        return array_ops.zeros_like(inputs)
    if rate == 0.0:
        return inputs
    from tapeflow.ops.nn import stateless_dropout

    x = convert_to_tensor(inputs)
    s = draw_seed(seed)
    if noise_shape is not None:
        full = array_ops.shape(x)
        noise_shape = array_ops.stack([full[i] if n is None else n for i, n in enumerate(noise_shape)])
    return stateless_dropout(x, rate, seed=s, noise_shape=noise_shape)


def shuffle(x: Any, axis: int = 0, seed: Any = None) -> Tensor:
    """``x`` permuted along ``axis`` (the argsort of one uniform draw, as Keras's TF backend)."""
    x = convert_to_tensor(x)
    s = draw_seed(seed)
    order = special_ops.argsort(random_ops.stateless_uniform(array_ops.shape(x)[axis:axis + 1], s))
    return array_ops.gather(x, order, axis=axis)


def gamma(shape: Any, alpha: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """Samples of Gamma(alpha) (scale 1): ``tf.random.stateless_gamma`` of Keras's seed."""
    d = _floatx(dtype)
    s = draw_seed(seed)
    return random_ops.stateless_gamma(shape, s, alpha=alpha, dtype=d)


def binomial(shape: Any, counts: Any, probabilities: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """Samples of Binomial(counts, probabilities): ``tf.random.stateless_binomial`` of Keras's seed."""
    d = _floatx(dtype)
    s = draw_seed(seed)
    return random_ops.stateless_binomial(shape, s, counts=counts, probs=probabilities, output_dtype=d)


def beta(shape: Any, alpha: Any, beta: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """Samples of Beta(alpha, beta) as Keras's TF backend draws them: ``X / (X + Y)`` of two gammas, ``X`` of
    the drawn seed and ``Y`` of that seed plus 12."""
    return beta_of_seed(shape, alpha, beta, _floatx(dtype), draw_seed(seed))


def beta_of_seed(shape: Any, alpha: Any, beta: Any, dtype: Any, seed: Tensor) -> Tensor:
    """``beta`` of an int32 ``[2]`` seed already drawn (the augmentation layers draw from their own state)."""
    def param(v: Any) -> Tensor:
        return array_ops.broadcast_to(math_ops.cast(v, dtype) if isinstance(v, Tensor)
                                      else convert_to_tensor(v, dtype=dtype), shape)

    alpha, beta = param(alpha), param(beta)
    gamma_a = random_ops.stateless_gamma(shape, seed, alpha=alpha, dtype=dtype)
    gamma_b = random_ops.stateless_gamma(shape, math_ops.add(seed, np.int32(12)), alpha=beta, dtype=dtype)
    return math_ops.divide(gamma_a, math_ops.add(gamma_a, gamma_b))
