"""Random ops (``tf.random``) and TF's global/op seed rules.

Seeding follows TF 2's rules, and the numbers are TF's: normal, uniform,
truncated-normal and integer draws (stateful, stateless and
``tf.random.Generator``) come from TF's Philox-4x32-10 streams and float
transforms (``tapeflow.ops.philox``), bit-equal to TF's CPU kernels.
``categorical`` (TF's CPU kernel, whose words run on across rows as in one
shard) and ``shuffle`` are TF's too.

* No seeds: every call draws fresh numbers (OS entropy).
* ``tf.random.set_seed(g)`` only: each random op takes the next op seed from
  a sequence determined by ``g`` — the same sequence on every run of the
  program; calling ``set_seed(g)`` again restarts it.
* An op seed only: the default global seed (87654321) is used with it.
* Both: the pair ``(g, op_seed)`` names a stream; repeated calls with the
  same pair continue that stream (so two identical calls differ, as in TF
  eager) and ``set_seed`` restarts every stream.
* Inside ``tf.function`` (as TF graphs): an op without an op seed takes the
  next number of a per-function counter, and every op owns its stream, so
  two functions traced after ``set_seed(g)`` give the same sequence, and
  each call of one function continues its streams.

Internal API for other tapeflow modules (Keras initializers, dropout):

* ``get_seed(op_seed) -> (seed, seed2)``: TF's ``random_seed.get_seed``;
  ``(None, None)`` means "non-deterministic".
* ``_generator_for(seed=None) -> numpy.random.Generator``: the stream that a
  random op with op seed ``seed`` would draw from now (eager code only —
  inside ``tf.function`` call the public ops such as ``tf.random.uniform``,
  which draw at run time, not trace time).
* ``stream(seed, seed2, instance=None)``: the generator of an explicit seed
  pair.
* ``seed_attrs(op_seed) -> dict``: the attrs ``{"seed", "seed2", "instance"}``
  a new random op should carry, resolved now (at trace time in graphs). Its
  kernel then draws with ``stream(seed, seed2, instance)`` at run time, so
  the op follows every rule above, eagerly and inside ``tf.function``. Mark
  such an op ``op.extra["stateful"] = True`` so graphs never fold it.

All random ops are ``NotDifferentiable``; ``mean``/``stddev``/``minval``/
``maxval`` are applied with ordinary tapeflow ops, so gradients flow into them
as in TF. Ops are marked ``extra["stateful"]`` so graph compilation never
folds or merges them.
"""

from __future__ import annotations

import random as _pyrandom
from typing import Any

import numpy as np

from tapeflow.framework import distribution_hooks as dist_hooks
from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.ops import math_ops, philox
from tapeflow.ops._helpers import scalar_int, t
from tapeflow.ops.registry import GradientNotImplemented, NotDifferentiable, defop

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_MASK64 = (1 << 64) - 1


class _SeedState:
    """The process-wide seed state: the global seed, the op-seed sequence and
    the live streams keyed by seed pair."""

    def __init__(self) -> None:
        self.global_seed: int | None = None
        self.op_seeds: _pyrandom.Random | None = None
        self.streams: dict[tuple, np.random.Generator] = {}
        self.counters: dict[tuple, int] = {}  # TF Philox streams of the stateful ops: seed pair -> counter
        self._fresh = None  # made on first use: numpy.random costs ~9 ms to import
        self.instances = 0  # counter behind _instance()
        # Generators upper layers own (Keras's global initializer RNG), as callables giving the current one:
        # whoever must save and restore every random stream (tf.debugging's training doctor) finds them here.
        self.external: list = []

    @property
    def fresh(self) -> np.random.Generator:
        if self._fresh is None:
            self._fresh = np.random.default_rng()
        return self._fresh


_state = _SeedState()


def _int_seed(seed: Any, what: str) -> int:
    """A seed as a Python int; TypeError (as TF's ops give) for anything else."""
    arr = np.asarray(seed)
    if arr.ndim != 0 or arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must be an integer, got {seed!r}")
    return int(arr)


def set_seed(seed: Any) -> None:
    """Sets the global random seed and restarts every seeded stream (``tf.random.set_seed``).

    >>> tf.random.set_seed(7); a = tf.random.uniform([2])
    >>> tf.random.set_seed(7); bool(tf.reduce_all(tf.random.uniform([2]) == a))
    True
    """
    if isinstance(seed, Tensor):
        seed = seed.numpy()
    if seed is None:
        _state.global_seed = None
        _state.op_seeds = None
    else:
        _state.global_seed = _int_seed(seed, "tf.random.set_seed: seed")
        _state.op_seeds = _pyrandom.Random(_state.global_seed)
    _state.streams.clear()
    _state.counters.clear()


def get_seed(op_seed: Any) -> tuple:
    """TF's seed rule: ``(global, op)`` seeds for an op, or ``(None, None)``."""
    if isinstance(op_seed, Tensor):
        op_seed = op_seed.numpy()
    g = _state.global_seed
    if g is not None:
        if op_seed is None:
            graph = _tracing_graph()
            if graph is None:
                op_seed = _state.op_seeds.randint(0, _MAXINT32)
            else:
                # As TF graphs: the op seed counts the random ops of this
                # function, so two functions give the same sequence.
                op_seed = getattr(graph, "_random_op_count", 0)  # 0, 1, 2, ... as TF 2.21
                graph._random_op_count = op_seed + 1
        seeds = (g, _int_seed(op_seed, "the op seed"))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _int_seed(op_seed, "the op seed"))
    else:
        return None, None
    if seeds == (0, 0):  # (0, 0) means "non-deterministic" to TF's kernels
        seeds = (0, _MAXINT32)
    return seeds


def _tracing_graph():
    from tapeflow.framework.context import state

    graph = state.graph
    if graph is None:
        return None
    root = getattr(graph, "root", None)
    return root() if callable(root) else graph


def _instance() -> int | None:
    """``None`` in eager mode; inside a traced function, a number unique to
    this op, so each graph op owns its stream (as TF kernels own their state)."""
    if _tracing_graph() is None:
        return None
    _state.instances += 1
    return _state.instances


def _key(a: int, b: int) -> int:
    return (int(a) & _MASK64) | ((int(b) & _MASK64) << 64)


def stream(seed: int | None, seed2: int | None, instance: int | None = None) -> np.random.Generator:
    """The generator for a seed pair: fresh entropy for ``None``, else the live
    (persistent until ``set_seed``) stream of that pair — per op ``instance``
    for ops inside traced functions."""
    if seed is None:
        return _state.fresh
    key = (int(seed), int(seed2), instance)
    gen = _state.streams.get(key)
    if gen is None:
        gen = np.random.Generator(np.random.Philox(key=_key(seed, seed2)))
        _state.streams[key] = gen
    return gen


def _generator_for(seed: Any = None) -> np.random.Generator:
    """The NumPy generator a random op with op seed ``seed`` draws from (see module docs)."""
    return stream(*get_seed(seed))


# ----------------------------------------------------------------------------
# Argument handling
# ----------------------------------------------------------------------------

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int32", "int64")


def _shape(shape: Any) -> tuple:
    if isinstance(shape, TensorShape):
        dims = shape.as_list()
    else:
        if isinstance(shape, Tensor):
            shape = shape.numpy()
        arr = np.asarray(shape)
        if arr.dtype.kind not in "iu" and arr.size:
            raise TypeError(f"shape must be a 1-D list of integers, got {shape!r}")
        if arr.ndim > 1:
            raise InvalidArgumentError(None, None, "tf.random: shape must be a vector of {int32,int64}, got shape "
                                       f"[{','.join(map(str, arr.shape))}]")
        dims = [int(d) for d in arr.reshape(-1)]
    if any(d is None or d < 0 for d in dims):
        raise InvalidArgumentError(None, None, f"shape must be fully defined and non-negative, got {dims}")
    return tuple(dims)


def _shape_arg(shape: Any) -> tuple:
    """``(static shape, shape tensor or None)``. A symbolic shape tensor (in a
    ``tf.function`` traced with unknown dims) becomes an op input that the
    kernel reads at run time; its static shape has unknown dims."""
    if isinstance(shape, Tensor) and not isinstance(shape._value, (np.ndarray, np.generic)):
        if np.dtype(shape._value.dtype).kind not in "iu":
            raise TypeError(f"shape must be an integer tensor, got {shape.dtype.name}")
        from tapeflow.ops.shape_ops import partial_value

        dims = shape._shape_tuple()
        static = None if len(dims) != 1 or dims[0] is None else (None,) * dims[0]
        known = partial_value(shape) if static is not None else None  # tf.stack([tf.shape(x)[0], 1]): (None, 1)
        if known is not None and len(known) == len(static):
            static = tuple(None if d is None or d < 0 else int(d) for d in known)
        return static, shape
    if isinstance(shape, (list, tuple)) and any(
            isinstance(d, Tensor) and not isinstance(d._value, (np.ndarray, np.generic)) for d in shape):
        from tapeflow.ops.shape_ops import shape_vector  # (tf.shape(x)[0], dim) in a traced function

        vec, known = shape_vector(list(shape))
        static = tuple(None if d is None or d < 0 else int(d) for d in known) if known is not None else None
        return static, vec
    return _shape(shape), None


def _run_sized(op, inputs: tuple, shape: Any, attrs: dict) -> Tensor:
    """Executes a random op whose output shape is ``shape`` (static or dynamic)."""
    static, dynamic = _shape_arg(shape)
    if dynamic is None:
        return execute(op, inputs, {"shape": static, **attrs})
    return execute(op, inputs + (dynamic,), {"shape": static, "dynamic": True, **attrs})


def _dynamic_shape(kernel):
    # Kernels of sized ops: a trailing shape input (see _run_sized) overrides the attr.
    def run(*arrays, shape, dynamic=False, **attrs):
        if dynamic:
            arrays, shape = arrays[:-1], tuple(int(d) for d in np.asarray(arrays[-1]).reshape(-1))
        return kernel(*arrays, shape=shape, **attrs)

    return run


def _dtype(dtype: Any, allowed: tuple, fn: str) -> dtypes.DType:
    d = dtypes.as_dtype(dtype)
    if d.name not in allowed:
        names = ", ".join(f"tf.{a}" for a in allowed)
        raise ValueError(f"Argument `dtype` got invalid value {d!r}. Accepted dtypes are ({names}).")
    return d


def _param(value: Any, d: dtypes.DType, what: str) -> Tensor:
    if isinstance(value, Tensor):
        if value._value.dtype != d._np:
            raise InvalidArgumentError(
                None, None, f"{what} must be a {d.name} tensor to match dtype={d.name}, got {value.dtype.name}; "
                "cast it with tf.cast")
        return value
    return convert_to_tensor(value, dtype=d)


def _stateful(op) -> None:
    op.extra["stateful"] = True
    NotDifferentiable(op.name)


def _shape_attr_rule(specs, shape, dtype, **attrs):
    return [(None if shape is None else tuple(shape), np.dtype(dtype))]


# ----------------------------------------------------------------------------
# Stateful ops: normal, uniform, truncated normal
# ----------------------------------------------------------------------------

def _philox_take(kernel: tuple, seed: int | None, seed2: int | None, instance: int | None,
                 n: int, steps: int | None = None) -> tuple[int, int]:
    """``(counter, key)`` of the next draw of ``n`` elements from the TF Philox stream of one kernel
    (op name and dtype, as TF's eager kernel cache; in a traced function, one graph op ``instance``) and
    seed pair (``PhiloxRandom(seed, seed2)``: key ``seed``, counter ``seed2 << 64``), advancing it as TF."""
    if seed is None:  # non-deterministic: a fresh random key and counter
        w = _state.fresh.integers(0, 2**64, size=3, dtype=np.uint64)
        return int(w[0]) | (int(w[1]) << 64), int(w[2])
    k = kernel + (int(seed), int(seed2), instance)
    counter = _state.counters.get(k)
    if counter is None:
        counter = (int(seed2) & _MASK64) << 64
    _state.counters[k] = philox.advance(counter, n) if steps is None else (counter + steps) % (1 << 128)
    return counter, int(seed) & _MASK64


def _philox_seeded(name: str, draw):
    """Op ``name``'s kernel: ``draw(counter, key, *arrays, shape=, dtype=)`` from the TF stream of its seed attrs."""

    def kernel(*arrays, seed, seed2, instance, shape, dtype):
        counter, key = _philox_take((name, np.dtype(dtype).name), seed, seed2, instance,
                                    int(np.prod(shape, dtype=np.int64)))
        return draw(counter, key, *arrays, shape=shape, dtype=dtype)

    return kernel


def _int_range(lo, hi, op: str) -> tuple[int, int]:
    lo, hi = int(lo), int(hi)
    if lo >= hi:
        raise InvalidArgumentError(None, None, f"Need minval < maxval, got {lo} >= {hi} [Op:{op}]")
    return lo, hi


def seed_attrs(op_seed: Any) -> dict:
    """The seed attrs of a new random op (see the module docstring)."""
    s, s2 = get_seed(op_seed)
    return {"seed": s, "seed2": s2, "instance": _instance()}


RANDOM_NORMAL = defop("RandomStandardNormal", _philox_seeded("RandomStandardNormal", philox.normal),
                      shape=_shape_attr_rule)
RANDOM_UNIFORM = defop("RandomUniform", _philox_seeded("RandomUniform", philox.uniform), shape=_shape_attr_rule)
TRUNCATED_NORMAL = defop("TruncatedNormal", _philox_seeded("TruncatedNormal", philox.truncated_normal),
                         shape=_shape_attr_rule)
RANDOM_UNIFORM_INT = defop(
    "RandomUniformInt",
    _philox_seeded("RandomUniformInt", lambda c, k, lo, hi, shape, dtype: philox.uniform_int(
        c, k, shape, *_int_range(lo, hi, "RandomUniformInt"), dtype)),
    shape=_shape_attr_rule)
for _op in (RANDOM_NORMAL, RANDOM_UNIFORM, TRUNCATED_NORMAL, RANDOM_UNIFORM_INT):
    _op.kernel = _dynamic_shape(_op.kernel)
    _stateful(_op)


def _is_number(v: Any, value: float) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == value


def _scaled(rnd: Tensor, scale: Any, shift: Any, d: dtypes.DType) -> Tensor:
    # As TF: rnd * scale + shift with ordinary ops, so gradients reach scale/shift
    # (skipped for the plain-number defaults, where it would change nothing).
    if _is_number(scale, 1) and _is_number(shift, 0):
        return rnd
    return math_ops.add(math_ops.multiply(rnd, _param(scale, d, "stddev")), _param(shift, d, "mean"))


def _float_only(dtype: Any, fn: str, value: Any) -> dtypes.DType:
    d = dtypes.as_dtype(dtype)
    if not d.is_floating:
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {d.name} ({fn} draws floating-point "
                        "numbers; pass dtype=tf.float32 or tf.float64)")
    return _dtype(d, _FLOATS, fn)


def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32, seed: Any = None,
           name: str | None = None) -> Tensor:
    """Samples from N(mean, stddev²) (``tf.random.normal``)."""
    d = _float_only(dtype, "tf.random.normal", mean)
    rnd = _run_sized(RANDOM_NORMAL, (), shape, {"dtype": d._np, **seed_attrs(seed)})
    return _scaled(rnd, stddev, mean, d)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                     seed: Any = None, name: str | None = None) -> Tensor:
    """N(mean, stddev²) with values beyond 2 stddev redrawn (``tf.random.truncated_normal``)."""
    d = _float_only(dtype, "tf.random.truncated_normal", mean)
    rnd = _run_sized(TRUNCATED_NORMAL, (), shape, {"dtype": d._np, **seed_attrs(seed)})
    return _scaled(rnd, stddev, mean, d)


def _int_bounds(minval: Any, maxval: Any, d: dtypes.DType) -> tuple[Tensor, Tensor]:
    lo, hi = _param(minval, d, "minval"), _param(maxval, d, "maxval")
    for v, what in ((lo, "minval"), (hi, "maxval")):
        if len(v._shape_tuple()) != 0:
            raise InvalidArgumentError(None, None, f"{what} must be 0-D for an integer dtype, got shape "
                                       f"{list(v._shape_tuple())} [Op:RandomUniformInt]")
    return lo, hi


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32, seed: Any = None,
            name: str | None = None) -> Tensor:
    """Uniform samples in ``[minval, maxval)`` (``tf.random.uniform``).

    Floats: ``maxval`` defaults to 1. Integers (int32/int64): ``maxval`` is
    required, and the bounds are scalars.
    """
    d = _dtype(dtype, _FLOATS + _INTS, "tf.random.uniform")
    if d.is_integer:
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {d!r}")
        lo, hi = _int_bounds(minval, maxval, d)
        return _run_sized(RANDOM_UNIFORM_INT, (lo, hi), shape, {"dtype": d._np, **seed_attrs(seed)})
    if maxval is None:
        maxval = 1
    if _is_number(minval, 0) and _is_number(maxval, 1):
        return _run_sized(RANDOM_UNIFORM, (), shape, {"dtype": d._np, **seed_attrs(seed)})
    lo, hi = _param(minval, d, "minval"), _param(maxval, d, "maxval")
    rnd = _run_sized(RANDOM_UNIFORM, (), shape, {"dtype": d._np, **seed_attrs(seed)})
    return math_ops.add(math_ops.multiply(rnd, math_ops.subtract(hi, lo)), lo)


# ----------------------------------------------------------------------------
# Categorical and shuffle
# ----------------------------------------------------------------------------

def _multinomial_shape(specs, num_samples, output_dtype, **attrs):
    s = specs[0][0]
    return [((None if s is None else s[0], num_samples), np.dtype(output_dtype))]


def _multinomial_kernel(logits, seed, seed2, instance, num_samples, output_dtype):
    n = philox.categorical_elements(logits.shape[0], num_samples)
    counter, key = _philox_take(("Multinomial", logits.dtype.name, np.dtype(output_dtype).name), seed, seed2,
                                instance, n)
    return philox.categorical(counter, key, logits, num_samples, output_dtype)


MULTINOMIAL = defop("Multinomial", _multinomial_kernel, shape=_multinomial_shape)
_stateful(MULTINOMIAL)


def _check_logits(logits: Any, num_samples: Any, dtype: Any, op: str) -> tuple[Tensor, int, dtypes.DType]:
    x = t(logits)
    if x._value.dtype.kind != "f":
        raise InvalidArgumentError(None, None, f"logits must be a floating-point tensor, got {x.dtype.name} [Op:{op}]")
    if len(x._shape_tuple()) != 2:
        raise InvalidArgumentError(None, None, f"logits should be a matrix, got shape {list(x._shape_tuple())} "
                                   f"[Op:{op}]; pass logits of shape [batch_size, num_classes]")
    n = scalar_int(num_samples, "num_samples", op)
    if n < 0:
        raise InvalidArgumentError(None, None, f"num_samples should be nonnegative, got {n} [Op:{op}]")
    d = _dtype(dtypes.int64 if dtype is None else dtype, _INTS, "tf.random.categorical")
    return x, n, d


def categorical(logits: Any, num_samples: Any, dtype: Any = None, seed: Any = None,
                name: str | None = None) -> Tensor:
    """Draws ``num_samples`` class indices per row of ``logits`` [batch, classes] (``tf.random.categorical``)."""
    x, n, d = _check_logits(logits, num_samples, dtype, "Multinomial")
    return execute(MULTINOMIAL, (x,), {"num_samples": n, "output_dtype": d._np, **seed_attrs(seed)})


def _shuffle(x: np.ndarray, seed, seed2, instance) -> np.ndarray:
    # TF's kernel: a forward Fisher-Yates over the first axis, swapping i with i + word % (n - i), one
    # Philox word each; the stream advances by ceil((n - 1) / 4) counter steps.
    if x.ndim == 0 or x.size <= 1 or x.shape[0] <= 1:
        return x.copy()
    n = x.shape[0]
    counter, key = _philox_take(("RandomShuffle", x.dtype.name), seed, seed2, instance, 0, steps=(n + 2) // 4)
    return x[philox.permutation(counter, key, n)]


def fresh_shuffle_orders(sizes: list[int]) -> list[np.ndarray]:
    """The orders successive ``tf.random.shuffle`` calls of a *freshly instantiated* function's first random op
    give to ``range(m)`` for each ``m`` of ``sizes``: the op seeds ``(global, 0)`` of a new trace and a new
    kernel's stream, as a tf.data map function of each new iterator (Keras 3's fit shuffle of arrays,
    ``tf.random.shuffle(tf.range(n))`` mapped over ``Dataset.range(1)``; ``shuffle="batch"`` maps it over the
    batches of indices). With a global seed every such function draws the same orders; without, fresh ones."""
    g = _state.global_seed
    if g is None:
        return [_state.fresh.permutation(m) for m in sizes]
    seed, seed2 = (0, _MAXINT32) if g == 0 else (g, 0)
    counter, key = (seed2 & _MASK64) << 64, seed & _MASK64
    orders = []
    for m in sizes:
        if m <= 1:
            orders.append(np.arange(m))
            continue
        orders.append(philox.permutation(counter, key, m))
        counter = (counter + (m + 2) // 4) % (1 << 128)
    return orders


RANDOM_SHUFFLE = defop("RandomShuffle", _shuffle, shape=lambda specs, **a: [specs[0]])
_stateful(RANDOM_SHUFFLE)


def shuffle(value: Any, seed: Any = None, name: str | None = None) -> Tensor:
    """Randomly permutes ``value`` along its first dimension (``tf.random.shuffle``)."""
    x = t(value)
    return execute(RANDOM_SHUFFLE, (x,), seed_attrs(seed))


# ----------------------------------------------------------------------------
# Stateless ops: the seed is an input tensor of shape [2]
# ----------------------------------------------------------------------------

_stateless_shape = _shape_attr_rule


def _stateless(draw):
    """A stateless kernel: ``draw(counter, key, *arrays, shape=, dtype=)`` on TF's scramble of the seed pair."""

    def kernel(seed, *arrays, shape, dtype):
        s = np.asarray(seed).reshape(-1)
        key, counter = philox.stateless_key_counter(int(s[0]), int(s[1]))
        return draw(counter, key, *arrays, shape=shape, dtype=dtype)

    return kernel


STATELESS_NORMAL = defop("StatelessRandomNormal", _stateless(philox.normal), shape=_stateless_shape)
STATELESS_UNIFORM = defop("StatelessRandomUniform", _stateless(philox.uniform), shape=_stateless_shape)
STATELESS_TRUNCATED_NORMAL = defop("StatelessTruncatedNormal", _stateless(philox.truncated_normal),
                                   shape=_stateless_shape)
STATELESS_UNIFORM_INT = defop(
    "StatelessRandomUniformInt",
    _stateless(lambda c, k, lo, hi, shape, dtype: philox.uniform_int(
        c, k, shape, *_int_range(lo, hi, "StatelessRandomUniformInt"), dtype)),
    shape=_stateless_shape)
STATELESS_UNIFORM_FULL_INT = defop("StatelessRandomUniformFullInt", _stateless(philox.uniform_full_int),
                                   shape=_stateless_shape)
def _stateless_multinomial_kernel(logits, seed, num_samples, output_dtype):
    s = np.asarray(seed).reshape(-1)
    key, counter = philox.stateless_key_counter(int(s[0]), int(s[1]))
    return philox.categorical(counter, key, logits, num_samples, output_dtype)


STATELESS_MULTINOMIAL = defop("StatelessMultinomial", _stateless_multinomial_kernel, shape=_multinomial_shape)
for _op in (STATELESS_NORMAL, STATELESS_UNIFORM, STATELESS_TRUNCATED_NORMAL, STATELESS_UNIFORM_INT,
            STATELESS_UNIFORM_FULL_INT, STATELESS_MULTINOMIAL):
    if _op is not STATELESS_MULTINOMIAL:
        _op.kernel = _dynamic_shape(_op.kernel)
    NotDifferentiable(_op.name)


def _seed_tensor(seed: Any, op: str) -> Tensor:
    s = seed if isinstance(seed, Tensor) else convert_to_tensor(seed)  # a Python list is int32, as TF
    if s._value.dtype.kind not in "iu":
        raise InvalidArgumentError(None, None, f"seed must be an int32 or int64 tensor, got {s.dtype.name} [Op:{op}]")
    if tuple(s._shape_tuple()) != (2,):
        raise InvalidArgumentError(None, None, f"seed must have shape [2], not {list(s._shape_tuple())} [Op:{op}]")
    return s


def stateless_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                     name: str | None = None, alg: Any = "auto_select") -> Tensor:
    """Deterministic N(mean, stddev²) samples: the same ``seed`` (shape [2]) gives the same numbers.

    >>> a = tf.random.stateless_normal([3], seed=[1, 2])
    >>> bool(tf.reduce_all(a == tf.random.stateless_normal([3], seed=[1, 2])))
    True
    """
    d = _float_only(dtype, "tf.random.stateless_normal", mean)
    s = _seed_tensor(seed, "StatelessRandomNormal")
    rnd = _run_sized(STATELESS_NORMAL, (s,), shape, {"dtype": d._np})
    return _scaled(rnd, stddev, mean, d)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = dtypes.float32, name: str | None = None,
                               alg: Any = "auto_select") -> Tensor:
    """Deterministic truncated-normal samples (values beyond 2 stddev redrawn)."""
    d = _float_only(dtype, "tf.random.stateless_truncated_normal", mean)
    s = _seed_tensor(seed, "StatelessTruncatedNormal")
    rnd = _run_sized(STATELESS_TRUNCATED_NORMAL, (s,), shape, {"dtype": d._np})
    return _scaled(rnd, stddev, mean, d)


def stateless_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32,
                      name: str | None = None, alg: Any = "auto_select") -> Tensor:
    """Deterministic uniform samples in ``[minval, maxval)``.

    Integer dtypes: ``minval`` and ``maxval`` both given, or both ``None``
    for the full range of the dtype (as TF).
    """
    d = _dtype(dtype, _FLOATS + _INTS + ("uint32", "uint64"), "tf.random.stateless_uniform")
    s = _seed_tensor(seed, "StatelessRandomUniform")
    if d.is_integer:
        if minval is None and maxval is None:
            return _run_sized(STATELESS_UNIFORM_FULL_INT, (s,), shape, {"dtype": d._np})
        if minval is None or maxval is None:
            raise ValueError(f"For integer `dtype` argument {d!r}, argument `minval` and `maxval` must be both None "
                             f"or not None. Got `minval`={minval} and `maxval`={maxval}.")
        lo, hi = _int_bounds(minval, maxval, d)
        return _run_sized(STATELESS_UNIFORM_INT, (s, lo, hi), shape, {"dtype": d._np})
    if maxval is None:
        maxval = 1
    lo, hi = _param(minval, d, "minval"), _param(maxval, d, "maxval")
    rnd = _run_sized(STATELESS_UNIFORM, (s,), shape, {"dtype": d._np})
    return math_ops.add(math_ops.multiply(rnd, math_ops.subtract(hi, lo)), lo)


def stateless_categorical(logits: Any, num_samples: Any, seed: Any, dtype: Any = dtypes.int64,
                          name: str | None = None) -> Tensor:
    """Deterministic ``tf.random.categorical``: the same ``seed`` gives the same draws."""
    x, n, d = _check_logits(logits, num_samples, dtype, "StatelessMultinomial")
    s = _seed_tensor(seed, "StatelessMultinomial")
    return execute(STATELESS_MULTINOMIAL, (x, s), {"num_samples": n, "output_dtype": d._np})


def _ends_with(shape: tuple, tail: tuple, op: str) -> None:
    if len(tail) > len(shape) or tuple(shape[len(shape) - len(tail):]) != tuple(tail):
        raise InvalidArgumentError(None, None, f"Shape passed in must end with broadcasted shape. [Op:{op}]")


def _stateless_gamma_kernel(seed, alpha, shape, dtype):
    _ends_with(shape, alpha.shape, "StatelessRandomGammaV2")
    if alpha.size == 0:
        raise InvalidArgumentError(None, None, "Input alpha should have non-zero element count, got: 0 "
                                   "[Op:StatelessRandomGammaV2]")
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return np.zeros(shape, dtype)
    s = np.asarray(seed).reshape(-1)
    key, counter = philox.stateless_key_counter(int(s[0]), int(s[1]))
    return philox.gamma(counter, key, alpha, n // alpha.size).astype(dtype).reshape(shape)


def _stateless_binomial_kernel(seed, counts, probs, shape, dtype):
    try:
        batch = np.broadcast_shapes(counts.shape, probs.shape)
    except ValueError:
        raise InvalidArgumentError(None, None, "counts and probs must have compatible batch dimensions: "
                                   f"{list(counts.shape)} vs. {list(probs.shape)} "
                                   "[Op:StatelessRandomBinomial]") from None
    _ends_with(shape, batch, "StatelessRandomBinomial")
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return np.zeros(shape, dtype)
    s = np.asarray(seed).reshape(-1)
    key, counter = philox.stateless_key_counter(int(s[0]), int(s[1]))
    per = n // max(int(np.prod(batch, dtype=np.int64)), 1)
    out = philox.binomial(counter, key, np.broadcast_to(counts, batch).reshape(-1),
                          np.broadcast_to(probs, batch).reshape(-1), per)
    with np.errstate(invalid="ignore"):
        return out.astype(dtype).reshape(shape)


STATELESS_GAMMA = defop("StatelessRandomGammaV2", _dynamic_shape(_stateless_gamma_kernel), shape=_stateless_shape)
GradientNotImplemented("StatelessRandomGammaV2", "the gradient of tf.random.stateless_gamma with respect to alpha "
                       "(TF's RandomGammaGrad, implicit reparameterization)")
STATELESS_BINOMIAL = defop("StatelessRandomBinomial", _dynamic_shape(_stateless_binomial_kernel),
                           shape=_stateless_shape)
NotDifferentiable("StatelessRandomBinomial")  # as TF


def stateless_gamma(shape: Any, seed: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32,
                    name: str | None = None) -> Tensor:
    """Deterministic Gamma(alpha, beta) samples (TF's CPU kernel: Marsaglia-Tsang rejection on Philox): the
    same ``seed`` (shape [2]) gives the same numbers. ``shape`` must end with the broadcast shape of ``alpha``
    and ``beta`` (the inverse scale); each ``samples[..., i]`` draws from ``alpha[i]``.

    >>> tf.random.stateless_gamma([2], seed=[1, 2], alpha=2.0).shape
    TensorShape([2])
    """
    from tapeflow.ops import array_ops
    from tapeflow.ops.array_extras import broadcast_dynamic_shape

    d = _dtype(dtype, ("float16", "float32", "float64", "bfloat16"), "tf.random.stateless_gamma")
    s = _seed_tensor(seed, "StatelessRandomGammaV2")
    alpha = convert_to_tensor(alpha, dtype=d)
    beta = convert_to_tensor(1 if beta is None else beta, dtype=d)
    both = broadcast_dynamic_shape(array_ops.shape(alpha), array_ops.shape(beta))
    rnd = _run_sized(STATELESS_GAMMA, (s, array_ops.broadcast_to(alpha, both)), shape, {"dtype": d._np})
    return math_ops.maximum(np.finfo(d._np).tiny if d.name != "bfloat16" else 1.1754944e-38,
                            math_ops.divide(rnd, beta))


def _random_gamma_kernel(alpha, *, seed, seed2, instance, shape, dtype):
    num = alpha.size
    samples = int(np.prod(shape, dtype=np.int64))
    n = samples * num
    # TF's RandomGamma reserves 256 Philox calls per output from its kernel's stream (GuardedPhiloxRandom)
    counter, key = _philox_take(("RandomGamma", alpha.dtype.name), seed, seed2, instance, n)
    out_shape = tuple(shape) + alpha.shape
    if n == 0:
        return np.zeros(out_shape, dtype)
    return philox.gamma(counter, key, alpha, samples).astype(dtype).reshape(out_shape)


def _random_gamma_shape(specs, shape, dtype, **attrs):
    a = specs[0][0]
    return [(None if shape is None or a is None else tuple(shape) + tuple(a), np.dtype(dtype))]


RANDOM_GAMMA = defop("RandomGamma", _dynamic_shape(_random_gamma_kernel), shape=_random_gamma_shape)
RANDOM_GAMMA.extra["stateful"] = True
GradientNotImplemented("RandomGamma", "the gradient of tf.random.gamma with respect to alpha (TF's RandomGammaGrad, "
                       "implicit reparameterization)")


def gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32, seed: Any = None,
          name: str | None = None) -> Tensor:
    """Gamma(alpha, beta) samples of shape ``shape + broadcast(alpha, beta).shape`` (``tf.random.gamma``; TF's
    CPU kernel: Marsaglia-Tsang rejection on the op's Philox stream, so seeded draws are TF's). ``beta`` is the
    inverse scale (default 1).

    >>> tf.random.gamma([10], alpha=[0.5, 1.5]).shape
    TensorShape([10, 2])
    """
    from tapeflow.ops import array_ops
    from tapeflow.ops.array_extras import broadcast_dynamic_shape

    d = dtypes.as_dtype(dtype)
    alpha = convert_to_tensor(alpha, dtype=d)
    beta = convert_to_tensor(1 if beta is None else beta, dtype=d)
    if d.name not in ("float16", "float32", "float64"):
        raise InvalidArgumentError(None, None, f"Value for attr 'T' of {d.name} is not in the list of allowed values: "
                                   "half, float, double [Op:RandomGamma]")
    both = broadcast_dynamic_shape(array_ops.shape(alpha), array_ops.shape(beta))
    rnd = _run_sized(RANDOM_GAMMA, (array_ops.broadcast_to(alpha, both),), shape, {"dtype": d._np,
                                                                                  **seed_attrs(seed)})
    return math_ops.maximum(np.finfo(d._np).tiny if d.name != "bfloat16" else 1.1754944e-38,
                            math_ops.divide(rnd, beta))


def _random_poisson_kernel(rate, *, seed, seed2, instance, shape, dtype):
    num = rate.size
    samples = int(np.prod(shape, dtype=np.int64))
    out_shape = tuple(shape) + rate.shape
    if samples == 0:
        return np.zeros(out_shape, dtype)
    if num == 0:
        raise InvalidArgumentError(None, None, "Input rate should have non-zero element count, got: 0 "
                                   "[Op:RandomPoissonV2]")
    n = samples * num
    counter, key = _philox_take(("RandomPoissonV2", rate.dtype.name, np.dtype(dtype).name), seed, seed2, instance, n)
    return philox.poisson(counter, key, rate, samples).astype(dtype).reshape(out_shape)


RANDOM_POISSON = defop("RandomPoissonV2", _dynamic_shape(_random_poisson_kernel), shape=_random_gamma_shape)
RANDOM_POISSON.extra["stateful"] = True
NotDifferentiable("RandomPoissonV2")  # as TF


def _poisson_dtype(dtype: Any, op: str) -> dtypes.DType:
    d = dtypes.as_dtype(dtype)
    if d.name not in ("float16", "float32", "float64", "int32", "int64"):
        raise InvalidArgumentError(None, None, f"Value for attr 'dtype' of {d.name} is not in the list of allowed "
                                   f"values: half, float, double, int32, int64 [Op:{op}]")
    return d


def _stateless_poisson_kernel(seed, rate, shape, dtype):
    _ends_with(shape, rate.shape, "StatelessRandomPoisson")
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return np.zeros(shape, dtype)
    s = np.asarray(seed).reshape(-1)
    key, counter = philox.stateless_key_counter(int(s[0]), int(s[1]))
    return philox.poisson(counter, key, rate, n // max(rate.size, 1)).astype(dtype).reshape(shape)


STATELESS_POISSON = defop("StatelessRandomPoisson", _dynamic_shape(_stateless_poisson_kernel),
                          shape=_stateless_shape)
NotDifferentiable("StatelessRandomPoisson")  # as TF


def stateless_poisson(shape: Any, seed: Any, lam: Any, dtype: Any = dtypes.int32, name: str | None = None) -> Tensor:
    """Deterministic Poisson(lam) samples (TF's CPU kernel on the seed's Philox stream): the same ``seed`` gives
    the same numbers; ``shape`` must end with ``lam``'s shape."""
    d = _poisson_dtype(dtype, "StatelessRandomPoisson")
    s = _seed_tensor(seed, "StatelessRandomPoisson")
    rate = lam if isinstance(lam, Tensor) else convert_to_tensor(lam, dtype_hint=dtypes.float32)
    return _run_sized(STATELESS_POISSON, (s, rate), shape, {"dtype": d._np})


def poisson(shape: Any, lam: Any, dtype: Any = dtypes.float32, seed: Any = None, name: str | None = None) -> Tensor:
    """Poisson(lam) samples of shape ``shape + lam.shape`` in ``dtype`` (``tf.random.poisson``; TF's CPU kernel:
    Knuth's algorithm below a rate of 10, Hormann's transformed rejection above, on the op's Philox stream, so
    seeded draws are TF's).

    >>> tf.random.poisson([10], [0.5, 1.5]).shape
    TensorShape([10, 2])
    """
    d = _poisson_dtype(dtype, "RandomPoissonV2")
    rate = lam if isinstance(lam, Tensor) else convert_to_tensor(lam, dtype_hint=dtypes.float32)
    if rate.dtype.name not in ("float16", "float32", "float64", "int32", "int64"):
        raise TypeError(f"Value passed to parameter 'rate' has DataType {rate.dtype.name} not in list of allowed "
                        "values: half, float32, float64, int32, int64")
    return _run_sized(RANDOM_POISSON, (rate,), shape, {"dtype": d._np, **seed_attrs(seed)})


def stateless_binomial(shape: Any, seed: Any, counts: Any, probs: Any, output_dtype: Any = dtypes.int32,
                       name: str | None = None) -> Tensor:
    """Deterministic Binomial(counts, probs) samples (TF's CPU kernel: inversion below a mean of 10, else
    Hormann's BTRS, on Philox): the same ``seed`` gives the same numbers. ``shape`` must end with the broadcast
    shape of ``counts`` and ``probs``."""
    d = _dtype(output_dtype, ("float16", "float32", "float64", "int32", "int64"), "tf.random.stateless_binomial")
    s = _seed_tensor(seed, "StatelessRandomBinomial")
    probs = probs if isinstance(probs, Tensor) else convert_to_tensor(probs, dtype_hint=dtypes.float32)
    counts = counts if isinstance(counts, Tensor) else convert_to_tensor(counts, dtype_hint=probs.dtype)
    if counts.dtype != probs.dtype:
        raise InvalidArgumentError(None, None, f"cannot compute StatelessRandomBinomial as input #3(zero-based) was "
                                   f"expected to be a {counts.dtype.name} tensor but is a {probs.dtype.name} tensor "
                                   "[Op:StatelessRandomBinomial]")
    return _run_sized(STATELESS_BINOMIAL, (s, counts, probs), shape, {"dtype": d._np})


def split(seed: Any, num: int = 2, alg: Any = "auto_select") -> Tensor:
    """``num`` new stateless seeds (int64 [num, 2]) derived from ``seed`` (``tf.random.split``)."""
    s = _seed_tensor(seed, "tf.random.split")
    return stateless_uniform([int(num), 2], s, minval=None, maxval=None, dtype=s.dtype)


def _fold_in_kernel(seed, data):
    # As TF: [a full-range draw of data's dtype from seed, data], in data's dtype.
    key, counter = philox.stateless_key_counter(int(seed[0]), int(seed[1]))
    first = philox.uniform_full_int(counter, key, (), data.dtype)
    return np.asarray([first, data], dtype=data.dtype)


FOLD_IN = defop("RandomFoldIn", _fold_in_kernel, shape=lambda specs: [((2,), specs[1][1])])
NotDifferentiable("RandomFoldIn")


def fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> Tensor:
    """A new stateless seed from ``seed`` and an integer ``data`` (``tf.random.fold_in``)."""
    s = _seed_tensor(seed, "tf.random.fold_in")
    d = data if isinstance(data, Tensor) else convert_to_tensor(data)  # a Python int is int32: so is the result
    if d._value.dtype.kind not in "iu" or len(d._shape_tuple()) != 0:
        raise InvalidArgumentError(None, None, f"data must be an integer scalar, got {d.dtype.name} of shape "
                                   f"{list(d._shape_tuple())} [Op:RandomFoldIn]")
    return execute(FOLD_IN, (s, d))


# ----------------------------------------------------------------------------
# tf.random.Generator
# ----------------------------------------------------------------------------

def _gen_kernel(draw):
    # Runs when the op runs (eagerly, or at each call of a tf.function): takes the generator's next
    # (counter, key), advancing its state as TF's RngReadAndSkip does.
    def kernel(*inputs, generator, shape, dtype):
        counter, key = generator._take(int(np.prod(shape, dtype=np.int64)))
        return draw(counter, key, *inputs, shape=shape, dtype=dtype)

    return kernel


STATEFUL_NORMAL = defop("StatefulStandardNormalV2", _gen_kernel(philox.normal), shape=_stateless_shape)
STATEFUL_UNIFORM = defop("StatefulUniform", _gen_kernel(philox.uniform), shape=_stateless_shape)
STATEFUL_TRUNCATED_NORMAL = defop("StatefulTruncatedNormal", _gen_kernel(philox.truncated_normal),
                                  shape=_stateless_shape)
STATEFUL_UNIFORM_INT = defop(
    "StatefulUniformInt",
    _gen_kernel(lambda c, k, lo, hi, shape, dtype: philox.uniform_int(
        c, k, shape, *_int_range(lo, hi, "StatefulUniformInt"), dtype)),
    shape=_stateless_shape)
STATEFUL_UNIFORM_FULL_INT = defop("StatefulUniformFullInt", _gen_kernel(philox.uniform_full_int),
                                  shape=_stateless_shape)
for _op in (STATEFUL_NORMAL, STATEFUL_UNIFORM, STATEFUL_TRUNCATED_NORMAL, STATEFUL_UNIFORM_INT,
            STATEFUL_UNIFORM_FULL_INT):
    _op.kernel = _dynamic_shape(_op.kernel)
    _stateful(_op)


def _state_from_seed(seed: Any) -> np.ndarray:
    """TF's ``create_rng_state(seed, PHILOX)``: int64 [counter_lo, counter_hi, key]. An int is cut into
    64-bit words (lowest first); a vector is left-padded with zeros to three words."""
    if isinstance(seed, Tensor):
        seed = seed.numpy()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed, words = int(seed), []
        for _ in range(3):
            words.append(seed & _MASK64)
            seed >>= 64
        return np.asarray(words, dtype=np.uint64).view(np.int64)
    arr = np.asarray(seed)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"tf.random.Generator: a seed must be an integer or a vector of integers, got {seed!r}")
    flat = [int(x) & _MASK64 for x in arr.reshape(-1)[:3]]
    return np.asarray([0] * (3 - len(flat)) + flat, dtype=np.uint64).view(np.int64)


def _current_replica_id(strategy: Any) -> int | None:
    """The replica id while ``strategy.run`` runs one of ``strategy``'s local replicas, else None."""
    if strategy is None or dist_hooks.local_replicas is None:
        return None
    running, rid = dist_hooks.local_replicas()
    return rid if running is strategy else None


class Generator:
    """A random-number generator with its own state (``tf.random.Generator``), TF's Philox streams.

    Create it with ``Generator.from_seed(seed)`` (reproducible: the same numbers as TF) or
    ``Generator.from_non_deterministic_state()``. The state is TF's: an int64 ``tf.Variable``
    ``[counter_lo, counter_hi, key]``; each draw of n numbers advances the counter by 256·n; ``split``
    makes independent child generators. Made inside a ``MirroredStrategy`` scope, each replica of
    ``strategy.run`` keeps its own copy of the state and mixes its replica id into the key, as TF.

    >>> g = tf.random.Generator.from_seed(1)
    >>> g.normal([2, 3]).shape
    TensorShape([2, 3])
    """

    def __init__(self, copy_from: Generator | None = None, state: Any = None, alg: Any = None) -> None:
        if copy_from is not None:
            arr = np.array(copy_from._state_var._value)
        elif state is not None:
            arr = np.asarray(state.numpy() if isinstance(state, (Tensor,)) or hasattr(state, "numpy") else state)
            if arr.shape != (3,):
                raise ValueError(f"tf.random.Generator: a Philox state has shape [3], got {list(arr.shape)}")
            arr = np.asarray([int(x) & _MASK64 for x in arr], dtype=np.uint64).view(np.int64)
        else:
            arr = _state.fresh.integers(-2**63, 2**63, size=3, dtype=np.int64)
        self._init_state(arr)

    def _init_state(self, arr: np.ndarray) -> None:
        from tapeflow.framework.variables import Variable

        # made inside the scope of a strategy with several local replicas: per-replica streams, as TF
        self._strategy = dist_hooks.local_replicas()[0] if dist_hooks.local_replicas is not None else None
        self._state_var = Variable(np.asarray(arr, dtype=np.int64), trainable=False, name="Variable")
        self._written = None  # the state array last written by a draw (anything else: restored/assigned)
        self._shadows: dict[int, np.ndarray] = {}  # the other replicas' copies of the state

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> Generator:
        """A generator whose stream is determined by ``seed`` (an int or a vector of ints), as TF's."""
        return cls(state=_state_from_seed(seed), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        """A generator seeded from OS entropy."""
        return cls(alg=alg)

    @classmethod
    def from_state(cls, state: Any, alg: Any) -> Generator:
        """A generator with the given Philox state (int64 ``[counter_lo, counter_hi, key]``)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key: Any, counter: Any, alg: Any) -> Generator:
        key = int(np.asarray(key).reshape(-1)[0])
        c = [int(x) for x in np.asarray(counter).reshape(-1)]
        return cls(state=c + [key], alg=alg)

    def reset(self, state: Any) -> None:
        """Sets the state (int64 ``[counter_lo, counter_hi, key]``)."""
        self._state_var.assign(np.asarray(state, dtype=np.int64))

    def reset_from_seed(self, seed: Any) -> None:
        """Restarts the stream as ``Generator.from_seed(seed)`` would."""
        self._state_var.assign(_state_from_seed(seed))

    def reset_from_key_counter(self, key: Any, counter: Any) -> None:
        c = [int(x) for x in np.asarray(counter).reshape(-1)]
        self.reset(np.asarray(c + [int(np.asarray(key).reshape(-1)[0])], dtype=np.int64))

    @property
    def algorithm(self) -> int:
        return 1  # Philox, as TF's default

    @property
    def state(self) -> Any:
        """The state variable: int64 ``[counter_lo, counter_hi, key]`` (TF's layout)."""
        return self._state_var

    @property
    def key(self) -> Tensor:
        return self._state_var.value()[-1]

    def _take(self, n: int) -> tuple[int, int]:
        """``(counter, key)`` for a draw of ``n`` numbers now; advances this replica's state by 256·n."""
        var = self._state_var
        rid = _current_replica_id(self._strategy)
        if var._value is not self._written:  # first draw, or the state was assigned/restored: every copy follows
            replicas = self._strategy.num_replicas_in_sync if self._strategy is not None else 1
            self._shadows = {r: np.array(var._value) for r in range(1, replicas)}
            self._written = var._value
        if rid:
            st = self._shadows.get(rid)
            if st is None:
                st = self._shadows[rid] = np.array(var._value)
        else:
            st = np.asarray(var._value)
        w = [int(x) for x in st.view(np.uint64)]
        counter, key = w[0] | (w[1] << 64), w[2]
        nxt = philox.advance(counter, n)
        new = np.asarray([nxt & _MASK64, nxt >> 64, key], dtype=np.uint64).view(np.int64)
        if rid:
            self._shadows[rid] = new
        else:
            var._value = new
            self._written = new
        if rid is not None:  # as TF's _preprocess_key: the replica id mixed into the key
            key = int(philox.uniform_full_int(rid, key, (), np.uint64))
        return counter, key

    def _trackable_children(self, *args: Any, **kwargs: Any) -> dict:
        return {"_state_var": self._state_var}

    def _draw(self, op, shape: Any, d: dtypes.DType, inputs: tuple = ()) -> Tensor:
        return _run_sized(op, inputs, shape, {"generator": self, "dtype": d._np})

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
               name: str | None = None) -> Tensor:
        d = _float_only(dtype, "Generator.normal", mean)
        return _scaled(self._draw(STATEFUL_NORMAL, shape, d), stddev, mean, d)

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                         name: str | None = None) -> Tensor:
        d = _float_only(dtype, "Generator.truncated_normal", mean)
        return _scaled(self._draw(STATEFUL_TRUNCATED_NORMAL, shape, d), stddev, mean, d)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32,
                name: str | None = None) -> Tensor:
        d = _dtype(dtype, _FLOATS + _INTS + ("uint32", "uint64"), "Generator.uniform")
        if d.is_integer:
            if maxval is None:
                if minval is None:
                    return self.uniform_full_int(shape, dtype=d)
                raise ValueError(f"For integer dtype {d!r}, minval and maxval must be both `None` or both "
                                 f"non-`None`; got minval={minval} and maxval={maxval}")
            lo, hi = _int_bounds(minval, maxval, d)
            return self._draw(STATEFUL_UNIFORM_INT, shape, d, (lo, hi))
        if maxval is None:
            maxval = 1
        lo, hi = _param(minval, d, "minval"), _param(maxval, d, "maxval")
        rnd = self._draw(STATEFUL_UNIFORM, shape, d)
        return math_ops.add(math_ops.multiply(rnd, math_ops.subtract(hi, lo)), lo)

    def uniform_full_int(self, shape: Any, dtype: Any = dtypes.uint64, name: str | None = None) -> Tensor:
        d = _dtype(dtype, _INTS + ("uint32", "uint64"), "Generator.uniform_full_int")
        return self._draw(STATEFUL_UNIFORM_FULL_INT, shape, d)

    def make_seeds(self, count: int = 1) -> Tensor:
        """``count`` seeds for the stateless ops: int64 [2, count] (second row zero, as TF)."""
        keys = self.uniform_full_int([int(count)], dtype=dtypes.int64)
        from tapeflow.ops import array_ops

        return array_ops.stack([keys, array_ops.zeros_like(keys)])

    def split(self, count: int = 1) -> list:
        """``count`` new, independent generators (state ``[0, 0, key]``, keys drawn from this one), as TF."""
        keys = np.asarray(self.uniform_full_int([int(count)], dtype=dtypes.int64)._value).reshape(-1)
        return [Generator(state=[0, 0, int(k)]) for k in keys]

    def skip(self, delta: int) -> Tensor:
        """Advances the counter as a draw of ``delta`` numbers would; returns the state before it."""
        before = convert_to_tensor(np.array(self._state_var._value))
        self._take(int(delta))
        return before

    def __repr__(self) -> str:
        return f"<tapeflow.random.Generator object at 0x{id(self):x}>"


_global_generator: Generator | None = None


def get_global_generator() -> Generator:
    """The process-wide ``Generator`` (non-deterministic unless set)."""
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


def set_global_generator(generator: Generator) -> None:
    """Replaces the process-wide ``Generator``."""
    global _global_generator
    _global_generator = generator
