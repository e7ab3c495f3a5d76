"""The fuzz-case generator: ``generate(seed)`` -> list of cases over the public API.

Deterministic per seed; each op family draws from its own stream (seeded by
the family name and the seed), so adding a family does not change the others.
Shapes cover ranks 0-4 with 0-size and size-1 dims; values mix ordinary
numbers with nan/inf/-0/denormals/ties; dtypes include ones TF rejects.
"""

from __future__ import annotations

import zlib

import numpy as np

from tests.fuzz.harness import enc

SHAPES = [(), (1,), (0,), (3,), (2, 3), (1, 3), (2, 0), (3, 1), (2, 1, 3), (0, 2, 2), (2, 2, 1, 2), (1, 2, 3, 1)]
PAIRS = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((), (2, 2)),
    ((3,), ()),
    ((0, 3), (1, 3)),
    ((1,), (0,)),
    ((2, 1, 3), (2, 1)),
    ((2, 3), (4,)),  # incompatible
    ((1, 2, 1, 2), (3, 1, 1)),
]
FLOATS = ["float32", "float32", "float64", "float16"]
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, 2.0, 1e-40, -1e-310, 1e30, -1e30]


def values(rng, shape, dtype, profile=None, low=-3.0, high=3.0):
    """An array of ``shape``/``dtype``; ``profile`` normal | special | ties."""
    profile = profile or rng.choice(["normal", "normal", "special", "ties"])
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -5
        a = rng.integers(lo, 6, size=shape).astype(dt)
        if profile == "special" and a.size:
            info = np.iinfo(dt)
            flat = a.reshape(-1)
            idx = rng.integers(0, flat.size, size=max(1, flat.size // 3))
            flat[idx] = rng.choice([info.min, info.max, 0, 1], size=idx.size).astype(dt)
        return a
    if profile == "ties":
        return rng.integers(-2, 3, size=shape).astype(dt)
    a = rng.uniform(low, high, size=shape)
    if profile == "special" and a.size:
        flat = a.reshape(-1)
        idx = rng.integers(0, flat.size, size=max(1, flat.size // 2))
        flat[idx] = rng.choice(SPECIAL, size=idx.size)
    with np.errstate(over="ignore"):
        return a.astype(dt)


def T(a) -> dict:
    return enc(np.asarray(a))


class Gen:
    def __init__(self, seed: int):
        self.seed = seed
        self.cases: list = []
        self.rng = None
        self.family = ""

    def stream(self, family: str):
        self.family = family
        self.rng = np.random.default_rng([self.seed, zlib.crc32(family.encode())])
        return self.rng

    def add(self, fn, *args, order=2, rnd=False, **kw):
        case = {"id": f"{fn}#{self.seed}.{len(self.cases)}", "fn": fn, "args": list(args), "kw": kw, "order": order}
        if rnd:
            case["rnd"] = 1
        self.cases.append(case)

    def arr(self, shape, dtype="float32", profile=None, **kw):
        return T(values(self.rng, shape, dtype, profile, **kw))

    def shape(self, min_rank=0, max_rank=4):
        pool = [s for s in SHAPES if min_rank <= len(s) <= max_rank]
        return pool[self.rng.integers(len(pool))]

    def dtype(self, pool=FLOATS):
        return pool[self.rng.integers(len(pool))]


UNARY_FLOAT = (
    "abs acos acosh asin asinh atan atanh ceil cos cosh digamma erf erfc erfcinv erfinv exp expm1 floor "
    "is_finite is_inf is_nan lgamma log log1p ndtri negative reciprocal reciprocal_no_nan rint round rsqrt "
    "sigmoid sign sin sinh softplus sqrt square tan tanh"
).split()
UNARY_INT_OK = ["abs", "negative", "reciprocal", "sign", "square"]  # a list: the order must not vary per process
UNARY_NN = "relu relu6 elu selu gelu silu softsign".split()
BINARY = (
    "add subtract multiply divide truediv floordiv floormod mod pow maximum minimum squared_difference "
    "atan2 xdivy xlogy xlog1py divide_no_nan multiply_no_nan nextafter zeta polygamma"
).split()
COMPARE = "equal not_equal less less_equal greater greater_equal".split()
OPERATORS = "op.add op.sub op.mul op.truediv op.floordiv op.mod op.pow op.lt op.le op.gt op.ge".split()
REDUCE = (
    "reduce_sum reduce_mean reduce_prod reduce_max reduce_min reduce_logsumexp reduce_std "
    "reduce_variance reduce_euclidean_norm"
).split()


def _unary(g: Gen):
    g.stream("unary")
    for name in UNARY_FLOAT:
        for _ in range(6):
            g.add(f"math.{name}", g.arr(g.shape(), g.dtype()))
        g.add(f"math.{name}", g.arr((2, 2), "int32"))
        g.add(f"math.{name}", g.arr((3,), "float64", "special"))
        g.add(f"math.{name}", g.arr((3,), "float32", "ties"))
    for name in UNARY_NN:
        for _ in range(5):
            g.add(f"nn.{name}", g.arr(g.shape(), g.dtype()))
        g.add(f"nn.{name}", g.arr((4,), "float32", "ties"))
        g.add(f"nn.{name}", g.arr((2,), "int32"))
    for _ in range(5):
        g.add("nn.leaky_relu", g.arr(g.shape(), g.dtype()), alpha=float(g.rng.choice([0.2, 0.0, 1.5, -0.5])))
        g.add("nn.leaky_relu", g.arr((3,), "float32", "ties"))
        g.add("nn.crelu", g.arr(g.shape(1), g.dtype()), axis=-1)
        g.add("nn.l2_loss", g.arr(g.shape(), g.dtype()))
        g.add("math.zero_fraction", g.arr(g.shape(), g.dtype(FLOATS + ["int32"])))
        g.add("math.logical_not", g.arr(g.shape(), "bool"))
        g.add("op.invert", g.arr(g.shape(), g.dtype(["int32", "int64", "uint8", "bool"])))
        g.add("op.neg", g.arr(g.shape(), g.dtype(FLOATS + ["int32", "bool"])))
        g.add("op.abs", g.arr(g.shape(), g.dtype(FLOATS + ["int64"])))
        g.add("identity", g.arr(g.shape(), g.dtype()))
        g.add("stop_gradient", g.arr(g.shape(), g.dtype()))
        g.add("math.invert_permutation", T(g.rng.permutation(int(g.rng.integers(0, 5))).astype("int32")))
    for name in ["softmax", "log_softmax"]:
        for _ in range(6):
            s = g.shape(1)
            g.add(f"nn.{name}", g.arr(s, g.dtype()), axis=int(g.rng.integers(-len(s), len(s))))
        g.add(f"nn.{name}", g.arr((2, 3), "float32", "special"))
        g.add(f"nn.{name}", g.arr((3,), "int32"))
    for name in UNARY_INT_OK:
        g.add(f"math.{name}", g.arr((3,), "int64", "special"))


def _binary(g: Gen):
    g.stream("binary")
    for name in BINARY + COMPARE + OPERATORS:
        fn = name if name.startswith("op.") else f"math.{name}"
        for sa, sb in PAIRS[:-2] + [PAIRS[-1]]:
            d = g.dtype()
            g.add(fn, g.arr(sa, d), g.arr(sb, d))
        g.add(fn, g.arr((2, 3), "float32"), g.arr((4,), "float32"))
        g.add(fn, g.arr((3,), "float32", "special"), g.arr((3,), "float32", "special"))
        g.add(fn, T(SPECIAL[:8] * 2), T(np.repeat(np.array(SPECIAL[:4], "float64"), 4)))
        g.add(fn, g.arr((3,), "float32", "ties"), g.arr((3,), "float32", "ties"))
        for d in ["int32", "int64", "bool", "uint8"]:
            g.add(fn, g.arr((2, 2), d), g.arr((2, 2), d))
        g.add(fn, g.arr((2,), "float16"), g.arr((2,), "float32"))
        g.add(fn, g.arr((2,), "float32"), g.arr((2,), "int64"))
        g.add(fn, g.arr((2,), "float32"), 2.0)
        g.add(fn, g.arr((2,), "int32"), 2)
        g.add(fn, 3.0, g.arr((2,), "float64"))
    for name in ["logical_and", "logical_or", "logical_xor"]:
        for sa, sb in PAIRS[:5]:
            g.add(f"math.{name}", g.arr(sa, "bool"), g.arr(sb, "bool"))
        g.add(f"math.{name}", g.arr((2,), "int32"), g.arr((2,), "int32"))
    for name in ["op.and", "op.or", "op.xor"]:
        for d in ["bool", "int32", "int64", "uint8", "int8", "float32"]:
            g.add(name, g.arr((2, 3), d, "special"), g.arr((3,), d))
    for name in ["op.radd", "op.rsub", "op.rtruediv", "op.rpow"]:
        for d in FLOATS + ["int32"]:
            g.add(name, g.arr((3,), d, "special"), 2 if d == "int32" else 1.5)
    g.add("math.scalar_mul", 2.0, g.arr((2, 3)))
    for _ in range(4):
        d = g.dtype()
        g.add("math.polyval", [g.arr((), d), g.arr((), d), g.arr((), d)], g.arr(g.shape(), d))
        n = int(g.rng.integers(1, 4))
        s = g.shape()
        g.add("add_n", [g.arr(s, d) for _ in range(n)])
        g.add("math.accumulate_n", [g.arr(s, d) for _ in range(n)])
    g.add("add_n", [g.arr((2,)), g.arr((3,))])
    g.add("add_n", [g.arr((2,), "float32"), g.arr((2,), "float64")])
    for d in ["float32", "float64", "int32"]:
        g.add("clip_by_value", g.arr((2, 3), d, "special"), T(np.array(-1, d)), T(np.array(1, d)))
        g.add("clip_by_value", g.arr((4,), d), T(np.array(2, d)), T(np.array(-1, d)))
        g.add("clip_by_value", g.arr((2, 3), d), T(np.zeros((3,), d)), T(np.ones((2, 1), d)))
    g.add("clip_by_value", g.arr((3,)), -1.0, 1.0)
    g.add("clip_by_value", g.arr((3,), "float32", "ties"), 0.0, 1.0)


def _reduce(g: Gen):
    g.stream("reduce")
    axes = [None, 0, -1, [], [0, 1], [-1, 0], 5, [0, 0]]
    for name in REDUCE + ["reduce_all", "reduce_any", "count_nonzero"]:
        for _ in range(10):
            s = g.shape()
            ax = axes[g.rng.integers(len(axes))]
            if name in ("reduce_all", "reduce_any"):
                d = "bool"
            elif name == "count_nonzero":
                d = g.dtype(FLOATS + ["int32", "bool"])
            else:
                d = g.dtype(FLOATS + ["int32", "int64"]) if "std" not in name else g.dtype()
            kw = {"keepdims": bool(g.rng.integers(2))}
            if ax is not None:
                kw["axis"] = ax
            g.add(f"math.{name}", g.arr(s, d), **kw)
        g.add(f"math.{name}", g.arr((0, 2), "int32" if name not in ("reduce_all", "reduce_any") else "bool"), axis=0)
        g.add(f"math.{name}", g.arr((2, 3), "float32", "special"), axis=1)
        g.add(f"math.{name}", g.arr((3, 2), "float32", "ties"), axis=0)
    g.add("math.reduce_prod", T(np.array([-1.0, 0.0], "float32")))
    g.add("math.reduce_prod", T(np.array([[0.0, 0.0, 2.0], [1.0, 0.0, 3.0]], "float32")), axis=1)
    for name in ["argmax", "argmin"]:
        for _ in range(8):
            s = g.shape(1)
            g.add(f"math.{name}", g.arr(s, g.dtype(FLOATS + ["int32"])), axis=int(g.rng.integers(-len(s), len(s))))
        g.add(f"math.{name}", T(np.array([1.0, np.nan, 3.0, np.nan], "float32")))
        g.add(f"math.{name}", T(np.array([[np.nan, 2.0], [1.0, np.nan]], "float32")), axis=1)
        g.add(f"math.{name}", g.arr((2, 3), "float32"), axis=1, output_type={"dtype": "int32"})
        g.add(f"math.{name}", g.arr((0, 3), "float32"), axis=1)
        g.add(f"math.{name}", g.arr((0, 3), "float32"), axis=0)
    for name in ["cumsum", "cumprod", "cumulative_logsumexp"]:
        for _ in range(8):
            s = g.shape(1)
            kw = {"exclusive": bool(g.rng.integers(2)), "reverse": bool(g.rng.integers(2))}
            d = g.dtype(FLOATS + ["int32"]) if name != "cumulative_logsumexp" else g.dtype()
            g.add(f"math.{name}", g.arr(s, d), axis=int(g.rng.integers(-len(s), len(s))), **kw)
        g.add(f"math.{name}", T(np.array([2.0, 0.0, 3.0], "float32")), reverse=True)
        g.add(f"math.{name}", T(np.array([0.0, 2.0, 0.0, 3.0], "float32")), exclusive=True)
        g.add(f"math.{name}", T(np.array([[1.0, 0.0], [0.0, 0.0]], "float64")), axis=0)
    for _ in range(6):
        s = g.shape(1)
        k = int(g.rng.integers(0, s[-1] + 1))
        g.add("math.top_k", g.arr(s, g.dtype(FLOATS + ["int32"])), k=k, sorted=True)
        g.add(
            "sort",
            g.arr(s, g.dtype(FLOATS + ["int32"])),
            axis=-1,
            direction=str(g.rng.choice(["ASCENDING", "DESCENDING"])),
        )
        g.add("argsort", g.arr(s, g.dtype(FLOATS + ["int32"]), "ties"), axis=-1, stable=True)
        g.add("math.is_non_decreasing", g.arr(s, g.dtype(FLOATS + ["int32"]), "ties"))
        g.add("math.is_strictly_increasing", g.arr(s, g.dtype(FLOATS + ["int32"]), "ties"))
    g.add("math.top_k", g.arr((4,), "float32", "ties"), k=2)
    g.add("math.top_k", T(np.array([1.0, np.nan, 2.0], "float32")), k=2)
    g.add("math.top_k", g.arr((3,)), k=5)
    for _ in range(3):
        g.add("math.in_top_k", T(g.rng.integers(0, 4, size=3).astype("int32")), g.arr((3, 4), "float32", "ties"), k=2)
        g.add("math.bincount", T(g.rng.integers(0, 5, size=6).astype("int32")))
        g.add("math.bincount", T(g.rng.integers(0, 5, size=6).astype("int32")), minlength=7, maxlength=4)
        g.add("math.confusion_matrix", T(g.rng.integers(0, 3, size=5)), T(g.rng.integers(0, 3, size=5)), num_classes=4)


def _array(g: Gen):
    g.stream("array")
    rng = g.rng
    dt = FLOATS + ["int32", "bool", "int64"]
    for _ in range(6):
        s = g.shape()
        d = g.dtype(dt)
        n = int(np.prod(s))
        g.add("reshape", g.arr(s, d), [-1])
        g.add("reshape", g.arr(s, d), [n, 1] if n else [0, -1])
        g.add("transpose", g.arr(s, d))
        g.add("expand_dims", g.arr(s, d), axis=int(rng.integers(-len(s) - 1, len(s) + 1)))
        g.add("squeeze", g.arr(s, d))
        g.add("reverse", g.arr(s, d), axis=[0] if s else [])
        g.add("tile", g.arr(s, d), [int(x) for x in rng.integers(0, 3, size=len(s))])
        g.add("broadcast_to", g.arr(s, d), [2, *s])
        g.add("shape", g.arr(s, d))
        g.add("size", g.arr(s, d))
        g.add("rank", g.arr(s, d))
        g.add("zeros_like", g.arr(s, d))
        g.add("ones_like", g.arr(s, d))
        g.add("roll", g.arr(s, d), shift=int(rng.integers(-3, 4)), axis=0) if s else None
        g.add("math.count_nonzero", g.arr(s, d))
    g.add("reshape", g.arr((2, 3)), [4, -1])
    g.add("reshape", g.arr((0, 3)), [-1, 0])
    g.add("tile", g.arr(()), [])
    g.add("tile", g.arr((2,)), [2, 2])
    g.add("transpose", g.arr((2, 3, 1)), perm=[2, 0, 1])
    g.add("transpose", g.arr((2, 3)), perm=[0, 0])
    g.add("squeeze", g.arr((1, 2, 1)), axis=[0])
    g.add("squeeze", g.arr((1, 2, 1)), axis=[1])
    for _ in range(5):
        s = g.shape(1)
        d = g.dtype(dt)
        ax = int(rng.integers(-len(s), len(s)))
        g.add("concat", [g.arr(s, d), g.arr(s, d)], axis=ax)
        g.add("stack", [g.arr(s, d), g.arr(s, d), g.arr(s, d)], axis=ax)
        g.add("unstack", g.arr(s, d), axis=ax)
        if s[ax] % 2 == 0:
            g.add("split", g.arr(s, d), 2, axis=ax)
        g.add("split", g.arr(s, d), [s[ax], 0], axis=ax)
    g.add("concat", [g.arr((2, 3)), g.arr((2, 2))], axis=0)
    g.add("concat", [g.arr((2,), "float32"), g.arr((2,), "float64")], axis=0)
    g.add("concat", [g.arr((2,))], axis=0)
    g.add("stack", [g.arr(())])
    g.add("split", g.arr((5,)), 2)
    g.add("split", g.arr((5,)), [2, -1])
    for _ in range(6):
        s = g.shape(1)
        d = g.dtype(dt)
        pads = [[int(a), int(b)] for a, b in rng.integers(0, 3, size=(len(s), 2))]
        g.add("pad", g.arr(s, d), pads)
        g.add("pad", g.arr(s, d), pads, constant_values=T(np.array(1, d)))
        mode = str(rng.choice(["REFLECT", "SYMMETRIC"]))
        g.add(
            "pad",
            g.arr(s, d),
            [[min(p[0], max(0, n - 1)), min(p[1], max(0, n - 1))] for p, n in zip(pads, s)],
            mode=mode,
        )
    g.add("pad", g.arr((2, 2), "bool"), [[1, 0], [0, 1]])
    g.add("pad", g.arr((2,)), [[3, 0]], mode="REFLECT")
    g.add("pad", g.arr((2,)), [[-1, 0]])
    # gather family
    for _ in range(8):
        s = g.shape(1)
        d = g.dtype(dt)
        ax = int(rng.integers(0, len(s)))
        n = s[ax]
        idx = rng.integers(0, max(n, 1), size=tuple(rng.integers(0, 3, size=int(rng.integers(0, 3))))).astype("int32")
        if n == 0:
            idx = idx[..., :0] if idx.ndim else np.zeros((0,), "int32")
        g.add("gather", g.arr(s, d), T(idx), axis=ax)
        g.add("gather_dense", g.arr(s, d), T(idx.reshape(-1)[:1].reshape(()) if idx.size else np.int32(0)))
    g.add("gather", g.arr((3,)), T(np.int32(1)))
    g.add("gather", g.arr((3,)), T(np.int32(5)))
    g.add("gather", g.arr((3,)), T(np.array([-1], "int32")))
    g.add("gather", g.arr((2, 3)), T(np.array([[0, 2], [1, 1]], "int32")), axis=1, batch_dims=1)
    g.add("gather", g.arr((3,)), T(np.array([1.0])))
    for _ in range(5):
        s = g.shape(2)
        d = g.dtype(dt)
        k = int(rng.integers(1, len(s) + 1))
        idx = np.stack([rng.integers(0, max(n, 1), size=(2,)) for n in s[:k]], -1).astype("int32")
        g.add("gather_nd", g.arr(s, d), T(idx))
    g.add("gather_nd", g.arr((2, 3)), T(np.array([[2, 0]], "int32")))
    g.add("gather_nd", g.arr((2, 3)), T(np.array([[0, 1], [1, 0]], "int32")), batch_dims=1)
    # slicing
    for _ in range(6):
        s = g.shape(1)
        d = g.dtype(dt)
        begin = [int(rng.integers(0, n + 1)) for n in s]
        size = [int(rng.integers(-1, n - b + 1)) for n, b in zip(s, begin)]
        g.add("slice", g.arr(s, d), begin, size)
    g.add("slice", g.arr((3,)), [2], [3])
    for _ in range(10):
        s = g.shape(1)
        d = g.dtype(dt)
        r = len(s)
        b = [int(x) for x in rng.integers(-3, 4, size=r)]
        e = [int(x) for x in rng.integers(-3, 4, size=r)]
        st = [int(x) for x in rng.choice([1, 1, 2, -1, -2], size=r)]
        kw = {k: int(rng.integers(0, 2**r)) for k in ["begin_mask", "end_mask"] if rng.integers(2)}
        if rng.integers(3) == 0:
            kw["shrink_axis_mask"] = int(rng.integers(0, 2**r))
        if rng.integers(4) == 0:
            kw["new_axis_mask"] = int(rng.integers(0, 2**r))
        if rng.integers(4) == 0:
            kw["ellipsis_mask"] = 1 << int(rng.integers(0, r))
        g.add("strided_slice", g.arr(s, d), b, e, st, **kw)
    g.add("strided_slice", g.arr((3, 4)), [1], [2], [1], shrink_axis_mask=1)
    g.add("strided_slice", g.arr((3, 4)), [0, 1], [2, 3], [1, 1], new_axis_mask=1)
    g.add("strided_slice", g.arr((2, 3, 4)), [0, 1], [1, 3], [1, 1], ellipsis_mask=1)
    g.add("strided_slice", g.arr((3,)), [0], [3], [0])
    keys = [
        [1],
        [-1],
        [["s", None, None, -1]],
        [["s", 1, None, None], 0],
        ["...", 0],
        [None, ["s", 0, 2, None]],
        [["s", 5, 10, None]],
        [7],
        [0, 0, 0],
        [["s", -100, 100, 2]],
    ]
    for key in keys:
        g.add("op.getitem", g.arr((3, 2), g.dtype(dt)), key)
    # where / masks / one_hot
    for _ in range(5):
        sa, sb = PAIRS[rng.integers(5)]
        d = g.dtype(dt)
        g.add("where", g.arr(sa, "bool"), g.arr(sb, d), g.arr(sb, d))
        g.add("where", g.arr(g.shape(), "bool"))
        s = g.shape(1)
        g.add("boolean_mask", g.arr(s, d), g.arr(s[:1], "bool"))
        g.add("boolean_mask", g.arr(s, d), g.arr(s, "bool"))
    g.add("where", g.arr((3,), "bool"), g.arr((3,), "float32"), g.arr((3,), "float64"))
    g.add("where", g.arr((3,), "int32"), g.arr((3,)), g.arr((3,)))
    g.add("where", g.arr((3,), "bool"), g.arr((2,)), g.arr((3,)))
    g.add("boolean_mask", g.arr((3,)), g.arr((2,), "bool"))
    g.add("boolean_mask", g.arr((2, 3)), g.arr((2, 3), "bool"), axis=0)
    for _ in range(4):
        idx = rng.integers(-1, 5, size=g.shape(0, 2)).astype("int32")
        g.add("one_hot", T(idx), 4)
        g.add("one_hot", T(idx), 3, on_value=2.0, off_value=-1.0, axis=0 if idx.ndim else -1)
    g.add("one_hot", T(np.array([0, 1], "int32")), 3, dtype={"dtype": "int32"})
    g.add("one_hot", T(np.array([0, 1], "int32")), 0)
    # sequences / constructors
    for args in [(5,), (0.0, 2.7, 0.3), (1, -3), (5, 1, -2), (0, 5, 0), (0.0, 1.0, 0.1), (2.5,), (-3, 3, 2), (0.0, 5)]:
        g.add("range", *args)
    g.add("range", 0.0, 5, 0.5, dtype={"dtype": "int64"})
    g.add("range", 0, 5, 2, dtype={"dtype": "float64"})
    g.add("range", 0.0, 1.0, 0.25, dtype={"dtype": "float64"})
    g.add("range", T(np.float64(0.0)), T(np.float64(1.0)), T(np.float64(0.3)))
    g.add("range", T(np.int64(6)))
    for start, stop, n in [(0.0, 1.0, 5), (1.0, -1.0, 3), (0.0, 1.0, 1), (0.0, 1.0, 0), (2.0, 2.0, 4)]:
        g.add("linspace", T(np.float32(start)), T(np.float32(stop)), n)
    g.add("linspace", T(np.array([0.0, 1.0])), T(np.array([1.0, 3.0])), 4)
    g.add("linspace", T(np.array([0.0, 1.0])), T(np.array([1.0, 3.0])), 3, axis=1)
    g.add("linspace", T(np.float32(0)), T(np.float32(1)), -1)
    for shape, val in [([2, 3], 1.5), ([0, 2], 1), ([], True), ([2], T(np.float64(2)))]:
        g.add("fill", shape, val)
    g.add("fill", [-1], 1.0)
    for fn in ["zeros", "ones"]:
        g.add(fn, [2, 0, 3])
        g.add(fn, [2], dtype={"dtype": "int64"})
        g.add(fn, [], dtype={"dtype": "bool"})
    g.add("eye", 3)
    g.add("eye", 2, num_columns=3, batch_shape=[2])
    g.add("eye", 0)
    g.add("linalg.eye", 2, dtype={"dtype": "int32"})
    for _ in range(5):
        s = g.shape(1)
        d = g.dtype(dt)
        g.add("repeat", g.arr(s, d), int(rng.integers(0, 3)), axis=0)
        g.add("repeat", g.arr(s, d), T(rng.integers(0, 3, size=s[0]).astype("int32")), axis=0)
        g.add("repeat", g.arr(s, d), 2)
    g.add("repeat", g.arr((0, 3), "int32"), [], axis=0)
    g.add("repeat", g.arr((3,)), [1, 2], axis=0)
    g.add("meshgrid", g.arr((2,)), g.arr((3,)))
    g.add("meshgrid", g.arr((2,)), g.arr((3,)), indexing="ij")
    g.add("meshgrid", g.arr((0,)), g.arr((3,)))
    for _ in range(3):
        g.add("sequence_mask", T(rng.integers(0, 4, size=g.shape(0, 2)).astype("int32")), maxlen=3)
    g.add("sequence_mask", T(np.array([1, 3], "int32")))
    g.add("sequence_mask", T(np.array([1, 3], "int32")), 4, dtype={"dtype": "float32"})
    for _ in range(4):
        x = rng.integers(0, 4, size=int(rng.integers(0, 7))).astype(g.dtype(["int32", "int64", "float32"]))
        g.add("unique", T(x))
    # cast / saturate_cast
    pools = ["float16", "float32", "float64", "int32", "int64", "uint8", "int8", "bool", "uint16"]
    for src in pools:
        for dst in ["float16", "float32", "float64", "int32", "int64", "uint8", "bool"]:
            g.add("cast", g.arr((4,), src, "special"), {"dtype": dst})
            if src != "bool" and dst != "bool":
                g.add("saturate_cast", g.arr((4,), src, "special"), {"dtype": dst})
    g.add("saturate_cast", T(np.array([1e30, -1e30, np.nan, 3.7], "float32")), {"dtype": "int32"})
    g.add("saturate_cast", T(np.array([1e30, -1e30, 7e4], "float32")), {"dtype": "float16"})
    g.add("saturate_cast", T(np.array([300.0, -5.0, 2.5], "float64")), {"dtype": "uint8"})
    g.add("cast", g.arr((3,), "float32", "special"), {"dtype": "int32"})


def _scatter(g: Gen):
    g.stream("scatter")
    rng = g.rng
    for name in [
        "tensor_scatter_nd_update",
        "tensor_scatter_nd_add",
        "tensor_scatter_nd_sub",
        "tensor_scatter_nd_max",
        "tensor_scatter_nd_min",
    ]:
        for _ in range(4):
            d = g.dtype(FLOATS + ["int32"])
            s = g.shape(1, 3)
            k = int(rng.integers(1, len(s) + 1))
            n = int(rng.integers(0, 4))
            idx = np.stack([rng.integers(0, max(m, 1), size=(n,)) for m in s[:k]], -1).astype("int32").reshape(n, k)
            if 0 in s[:k]:
                continue
            g.add(name, g.arr(s, d), T(idx), g.arr((n, *s[k:]), d))
        g.add(name, g.arr((4,)), T(np.array([[1], [1]], "int32")), T(np.array([np.nan, 2.0], "float32")))
        g.add(
            name,
            T(np.array([np.nan, 1.0, 0.0], "float32")),
            T(np.array([[0], [2]], "int32")),
            g.arr((2,), "float32", "ties"),
        )
        g.add(name, g.arr((3,)), T(np.array([[5]], "int32")), g.arr((1,)))
    for _ in range(4):
        idx = rng.integers(0, 3, size=(int(rng.integers(0, 4)), 1)).astype("int32")
        g.add("scatter_nd", T(idx), g.arr((idx.shape[0], 2)), [3, 2])
    g.add("scatter_nd", T(np.array([[1], [1]], "int32")), g.arr((2,), "int32"), [3])
    segs = "segment_sum segment_mean segment_max segment_min segment_prod".split()
    useg = [f"unsorted_{n}" for n in segs] + ["unsorted_segment_sqrt_n"]
    for name in segs:
        for _ in range(4):
            n = int(rng.integers(0, 6))
            ids = np.sort(rng.integers(0, 3, size=n)).astype("int32")
            d = g.dtype(FLOATS + ["int32"])
            g.add(f"math.{name}", g.arr((n, 2), d), T(ids))
        g.add(f"math.{name}", T(np.array([1, 2, 4, -3], "int32")), T(np.array([0, 0, 1, 1], "int32")))
        g.add(f"math.{name}", g.arr((3,), "float32", "ties"), T(np.array([0, 0, 2], "int32")))
        g.add(f"math.{name}", g.arr((3,)), T(np.array([1, 0, 0], "int32")))
    for name in useg:
        for _ in range(4):
            n = int(rng.integers(0, 6))
            ids = rng.integers(-1, 4, size=n).astype("int32")
            d = g.dtype(FLOATS + ["int32"]) if "sqrt" not in name else g.dtype()
            g.add(f"math.{name}", g.arr((n, 2), d), T(ids), int(rng.integers(0, 5)))
        g.add(f"math.{name}", g.arr((0,)), T(np.zeros((0,), "int32")), 2)
        g.add(f"math.{name}", T(np.array([1, 2, 4, -3], "int32")), T(np.array([0, 0, 1, 1], "int32")), 3)
        g.add(f"math.{name}", g.arr((3,), "float32", "ties"), T(np.array([0, 0, 2], "int32")), 3)
        g.add(f"math.{name}", g.arr((3,)), T(np.array([0, 5, 0], "int32")), 3)


def _linalg(g: Gen):
    g.stream("linalg")
    rng = g.rng

    def mat(shape, d=None, kind=None):
        d = d or g.dtype(["float32", "float64", "float64"])
        kind = kind or (rng.choice(["rand", "rand", "spd", "singular", "tri"]) if len(shape) >= 2 else "rand")
        a = rng.uniform(-1, 1, size=shape)
        if kind == "spd" and shape[-1] == shape[-2]:
            a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
        elif kind == "singular" and shape[-1] == shape[-2] and shape[-1] > 0:
            a[..., -1, :] = a[..., 0, :] * 2
        elif kind == "tri":
            a = np.tril(a) + 2 * np.eye(shape[-2], shape[-1])
        return T(a.astype(d))

    sq = [(2, 2), (3, 3), (1, 1), (0, 0), (2, 3, 3), (1, 2, 2)]
    for _ in range(3):
        for s in sq:
            d = g.dtype(["float32", "float64"])
            g.add("linalg.det", mat(s, d))
            g.add("linalg.slogdet", mat(s, d))
            g.add("linalg.logdet", mat(s, d, "spd"))
            g.add("linalg.inv", mat(s, d))
            g.add("linalg.cholesky", mat(s, d, "spd"))
            g.add("linalg.trace", mat(s, d))
            g.add("linalg.diag_part", mat(s, d))
            g.add("linalg.eigvalsh", mat(s, d, "spd"))
            g.add("eigh_recon", mat(s, d, "spd"))
            g.add("linalg.solve", mat(s, d), mat((*s[:-1], 2), d, "rand"))
            g.add(
                "linalg.triangular_solve", mat(s, d, "tri"), mat((*s[:-1], 2), d, "rand"), lower=bool(rng.integers(2))
            )
            g.add(
                "linalg.cholesky_solve",
                T(np.linalg.cholesky(dec_(mat(s, "float64", "spd"))).astype(d)),
                mat((*s[:-1], 1), d, "rand"),
            )
            g.add("linalg.band_part", mat(s, d), int(rng.integers(-1, 2)), int(rng.integers(-1, 2)))
            g.add("linalg.set_diag", mat(s, d), mat(s[:-1], d, "rand"))
            g.add("linalg.adjoint", mat(s, d))
            g.add("linalg.matrix_rank", mat(s, d))
    for s in [(2, 3), (3, 2), (2, 2), (0, 2), (2, 3, 2)]:
        d = g.dtype(["float32", "float64"])
        g.add("svd_recon", mat(s, d, "rand"))
        g.add("linalg.svd", mat(s, d, "rand"), compute_uv=False)
        g.add("qr_recon", mat(s, d, "rand"))
        g.add("linalg.pinv", mat(s, "float64", "rand"))
        g.add("linalg.lstsq", mat(s, "float64", "rand"), mat((*s[:-1], 1), "float64", "rand"), order=1)
        g.add("linalg.matrix_transpose", mat(s, d))
        g.add("linalg.diag", mat(s[-1:], d))
        g.add("linalg.normalize", mat(s, d))
        g.add("linalg.global_norm", [mat(s, d), mat((2,), d)])
    g.add("linalg.inv", mat((2, 3)))
    g.add("linalg.inv", g.arr((2, 2), "int32"))
    g.add("linalg.inv", T(np.zeros((2, 2), "float32")))
    g.add("linalg.cholesky", T(-np.eye(2, dtype="float32")))
    g.add("linalg.solve", T(np.zeros((2, 2), "float64")), mat((2, 1), "float64", "rand"))
    g.add("linalg.cross", g.arr((2, 3)), g.arr((2, 3)))
    g.add("linalg.cross", g.arr((3,), "float64"), g.arr((3,), "float64"))
    g.add("linalg.cross", g.arr((2,)), g.arr((2,)))
    # matmul family
    mm = [
        ((2, 3), (3, 4)),
        ((0, 3), (3, 2)),
        ((2, 0), (0, 3)),
        ((2, 2, 3), (3, 1)),
        ((1, 2, 3), (4, 3, 2)),
        ((2, 3), (2, 3)),
        ((3,), (3, 2)),
    ]
    for sa, sb in mm:
        d = g.dtype(FLOATS + ["int32"])
        g.add("linalg.matmul", g.arr(sa, d), g.arr(sb, d))
        g.add("op.matmul", g.arr(sa, d), g.arr(sb, d))
    g.add("linalg.matmul", g.arr((2, 3)), g.arr((2, 3)), transpose_a=True)
    g.add("linalg.matmul", g.arr((2, 3)), g.arr((4, 3)), transpose_b=True, transpose_a=False)
    g.add("linalg.matmul", g.arr((2, 2), "bool"), g.arr((2, 2), "bool"))
    g.add("linalg.matmul", g.arr((2, 2), "float32"), g.arr((2, 2), "float64"))
    g.add("linalg.matmul", g.arr((2, 2), "float32", "special"), g.arr((2, 2), "float32", "special"))
    g.add("linalg.matvec", g.arr((2, 3)), g.arr((3,)))
    g.add("linalg.matvec", g.arr((2, 3)), g.arr((2,)), transpose_a=True)
    for _ in range(6):
        s = g.shape(1)
        ords = ["euclidean", 1, 2, np.inf, "fro"] if len(s) >= 2 else ["euclidean", 1, 2, np.inf]
        o = ords[rng.integers(len(ords))]
        ax = None if o not in ("fro",) and len(s) < 2 else ([-2, -1] if o in ("fro",) or rng.integers(2) else -1)
        if o == 2 and isinstance(ax, list):
            o = "euclidean"
        g.add(
            "norm",
            g.arr(s, g.dtype()),
            ord=float(o) if not isinstance(o, str) else o,
            axis=ax,
            keepdims=bool(rng.integers(2)),
        )
    g.add("norm", T(np.zeros((3,), "float32")))
    g.add("norm", T(np.zeros((2, 2), "float32")), ord=1, axis=[0, 1])
    for eq, shapes in [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("i,i->", [(3,), (3,)]),
        ("ij->ji", [(2, 3)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 1)]),
        ("ii->i", [(3, 3)]),
        ("ij->", [(0, 3)]),
        ("...i,...i->...", [(2, 3), (3,)]),
        ("i,j->ij", [(2,), (0,)]),
    ]:
        d = g.dtype(["float32", "float64"])
        g.add("einsum", eq, *[g.arr(s, d) for s in shapes])
    g.add("einsum", "ij,jk->ik", g.arr((2, 3)), g.arr((4, 4)))
    for axes in [1, 0, [[1], [0]], [[0, 1], [0, 1]]]:
        g.add(
            "tensordot",
            g.arr((2, 3)),
            g.arr((3, 2) if axes != 0 else (2,)) if axes != [[0, 1], [0, 1]] else g.arr((2, 3)),
            axes,
        )


def dec_(d):
    from tests.fuzz.harness import dec

    return dec(d)


def _nn(g: Gen):
    g.stream("nn")
    rng = g.rng
    pads = ["VALID", "SAME"]
    for _ in range(5):
        for rank, name in [(1, "conv1d"), (2, "conv2d"), (3, "conv3d")]:
            sp = [int(x) for x in rng.integers(1, 5, size=rank)]
            k = [int(x) for x in rng.integers(1, 4, size=rank)]
            cin, cout = int(rng.integers(1, 3)), int(rng.integers(1, 3))
            d = g.dtype(["float32", "float64", "float32"])
            stride = int(rng.integers(1, 3))
            g.add(
                f"nn.{name}",
                g.arr((int(rng.integers(1, 3)), *sp, cin), d),
                g.arr((*k, cin, cout), d),
                stride if rank != 3 else [1, stride, stride, stride, 1][: rank + 2],
                str(rng.choice(pads)),
            )
    g.add("nn.conv2d", g.arr((1, 2, 3, 1)), g.arr((3, 2, 1, 1)), 1, "VALID")
    g.add("nn.conv2d", g.arr((1, 3, 3, 2)), g.arr((2, 2, 1, 1)), 1, "VALID")
    g.add("nn.conv2d", g.arr((1, 3, 3, 1)), g.arr((2, 2, 1, 1), "float64"), 1, "VALID")
    g.add("nn.conv2d", g.arr((1, 4, 4, 1)), g.arr((2, 2, 1, 2)), 1, "SAME", dilations=2, order=1)
    g.add("nn.conv2d", g.arr((1, 4, 4, 1)), g.arr((2, 2, 1, 2)), 1, [[0, 0], [1, 0], [0, 1], [0, 0]])
    g.add("nn.conv2d", g.arr((1, 3, 3, 1), "int32"), g.arr((2, 2, 1, 1), "int32"), 1, "VALID")
    g.add("nn.convolution", g.arr((1, 4, 4, 1)), g.arr((2, 2, 1, 2)), padding="SAME", strides=2)
    g.add("nn.depthwise_conv2d", g.arr((1, 4, 4, 2)), g.arr((2, 2, 2, 2)), [1, 1, 1, 1], "VALID")
    g.add("nn.depthwise_conv2d", g.arr((1, 3, 3, 1)), g.arr((2, 2, 1, 1)), [1, 2, 2, 1], "SAME")
    g.add("nn.separable_conv2d", g.arr((1, 4, 4, 2)), g.arr((2, 2, 2, 1)), g.arr((1, 1, 2, 3)), [1, 1, 1, 1], "VALID")
    g.add("nn.atrous_conv2d", g.arr((1, 5, 5, 1)), g.arr((2, 2, 1, 1)), 2, "VALID", order=1)
    g.add("nn.conv2d_transpose", g.arr((1, 2, 2, 1)), g.arr((2, 2, 3, 1)), [1, 4, 4, 3], 2, "SAME")
    g.add("nn.conv2d_transpose", g.arr((1, 2, 2, 1)), g.arr((3, 3, 2, 1)), [1, 4, 4, 2], 1, "VALID")
    g.add("nn.conv1d_transpose", g.arr((1, 3, 1)), g.arr((2, 2, 1)), [1, 6, 2], 2, "SAME")
    for _ in range(6):
        for rank in (1, 2, 3):
            sp = [int(x) for x in rng.integers(1, 5, size=rank)]
            k = int(rng.integers(1, 4))
            st = int(rng.integers(1, 3))
            prof = str(rng.choice(["normal", "ties", "special"]))
            x = g.arr((int(rng.integers(1, 3)), *sp, int(rng.integers(1, 3))), g.dtype(["float32", "float64"]), prof)
            p = str(rng.choice(pads))
            g.add(f"nn.max_pool{rank}d", x, k, st, p)
            g.add(f"nn.avg_pool{rank}d", x, k, st, p)
    g.add("nn.max_pool2d", T(np.array([np.nan, 0, 0, 0], "float32").reshape(1, 2, 2, 1)), 2, 2, "VALID")
    g.add("nn.max_pool2d", T(np.array([0, np.nan, 1, np.nan], "float32").reshape(1, 2, 2, 1)), 2, 1, "VALID")
    g.add("nn.max_pool1d", T(np.array([np.nan, 1, np.nan, np.nan], "float32").reshape(1, 4, 1)), 2, 2, "VALID")
    g.add("nn.max_pool3d", T(np.ones((1, 2, 2, 2, 1), "float32")), 2, 2, "VALID")
    g.add("nn.max_pool3d", T(np.array([np.nan, 0, 0, 0, 0, 0, 0, 0], "float32").reshape(1, 2, 2, 2, 1)), 2, 2, "VALID")
    g.add("nn.max_pool2d", g.arr((1, 2, 3, 1)), 3, 1, "VALID")
    g.add("nn.avg_pool2d", g.arr((1, 2, 3, 1)), 3, 1, "VALID")
    g.add("nn.max_pool2d", g.arr((1, 4, 4, 1)), [2, 1], [1, 2], "SAME")
    g.add("nn.max_pool2d", g.arr((1, 4, 4, 1), "int32"), 2, 2, "VALID")
    g.add("nn.avg_pool2d", g.arr((1, 4, 4, 1), "int32"), 2, 2, "VALID")
    g.add("nn.max_pool", g.arr((1, 4, 4, 1)), 2, 2, "VALID")
    g.add("nn.avg_pool", g.arr((1, 4, 1)), 2, 1, "SAME")
    g.add("nn.pool", g.arr((1, 4, 4, 1)), [2, 2], "MAX", padding="VALID")
    g.add("nn.pool", g.arr((1, 4, 4, 1)), [2, 2], "AVG", padding="SAME", strides=[2, 2])
    for x in [
        np.array([1, 1, 0, 1], "float32").reshape(1, 2, 2, 1),
        np.array([np.nan, 0, 0, 0], "float32").reshape(1, 2, 2, 1),
        np.array([0, np.nan, 2, np.nan], "float32").reshape(1, 2, 2, 1),
    ]:
        g.add("nn.max_pool_with_argmax", T(x), 2, 2, "VALID")
    g.add("nn.max_pool_with_argmax", g.arr((1, 4, 4, 2)), 2, 2, "SAME", include_batch_in_index=True)
    # bias / normalization
    for sa, sb in [((2, 3), (3,)), ((2, 2, 2, 3), (3,)), ((0, 3), (3,)), ((2, 3), (2,))]:
        g.add("nn.bias_add", g.arr(sa), g.arr(sb))
    g.add("nn.bias_add", g.arr((2, 3), "bool"), g.arr((3,), "bool"))
    g.add("nn.bias_add", g.arr((2, 3), "int32"), g.arr((3,), "int32"))
    g.add("nn.bias_add", g.arr((2, 3, 2)), g.arr((3,)), data_format="NCHW")
    g.add("nn.bias_add", g.arr((3,)), g.arr((3,)))
    for _ in range(6):
        s = g.shape(1)
        d = g.dtype()
        axes = [[0], [-1], [], list(range(len(s)))][rng.integers(4)]
        g.add("nn.moments", g.arr(s, d), axes, keepdims=bool(rng.integers(2)))
        g.add("nn.l2_normalize", g.arr(s, d, "ties"), axis=axes if axes else [])
        g.add("nn.sufficient_statistics", g.arr(s, d), axes)
        g.add("nn.weighted_moments", g.arr(s, d), axes, g.arr(s, d, low=0.1, high=1.0))
    g.add("nn.normalize_moments", T(np.float32(4)), g.arr((3,)), g.arr((3,)), None)
    g.add("nn.l2_normalize", T(np.zeros((3,), "float32")))
    g.add("nn.l2_normalize", g.arr((2, 3)), axis=[0, 1])
    for _ in range(3):
        d = g.dtype(["float32", "float64"])
        s = (2, 3) if rng.integers(2) else (2, 2, 2, 3)
        g.add(
            "nn.batch_normalization",
            g.arr(s, d),
            g.arr((3,), d),
            g.arr((3,), d, low=0.1, high=2),
            g.arr((3,), d),
            g.arr((3,), d),
            1e-3,
        )
    g.add("nn.batch_normalization", g.arr((2, 3)), g.arr((3,)), g.arr((3,), low=0.1, high=2), None, None, 1e-3)
    g.add("nn.local_response_normalization", g.arr((1, 2, 2, 4)), depth_radius=1, bias=1.0, alpha=0.5, beta=0.75)
    g.add("nn.lrn", g.arr((1, 1, 2, 3), "float32", "ties"), 2)
    # losses
    for _ in range(4):
        s = g.shape(1, 3)
        d = g.dtype(["float32", "float64"])
        g.add(
            "nn.sigmoid_cross_entropy_with_logits",
            labels=g.arr(s, d, low=0, high=1),
            logits=g.arr(s, d, rng.choice(["normal", "special"])),
        )
        g.add(
            "nn.weighted_cross_entropy_with_logits",
            labels=g.arr(s, d, low=0, high=1),
            logits=g.arr(s, d),
            pos_weight=1.5,
        )
        g.add("nn.log_poisson_loss", g.arr(s, d, low=0, high=3), g.arr(s, d), compute_full_loss=bool(rng.integers(2)))
        p = rng.uniform(0, 1, size=s)
        g.add(
            "nn.softmax_cross_entropy_with_logits",
            labels=T((p / p.sum(-1, keepdims=True)).astype(d)),
            logits=g.arr(s, d),
        )
        lab = rng.integers(0, max(s[-1], 1), size=s[:-1]).astype("int32")
        g.add("nn.sparse_softmax_cross_entropy_with_logits", labels=T(lab), logits=g.arr(s, d))
    g.add("nn.sparse_softmax_cross_entropy_with_logits", labels=T(np.array([3], "int32")), logits=g.arr((1, 3)))
    g.add("nn.softmax_cross_entropy_with_logits", labels=g.arr((2, 3)), logits=g.arr((2, 4)))
    g.add("nn.softmax_cross_entropy_with_logits", labels=g.arr((2, 3)), logits=g.arr((2, 3), "float32", "special"))
    g.add("nn.compute_average_loss", g.arr((4,)), global_batch_size=8)
    g.add("nn.compute_average_loss", g.arr((4,)), sample_weight=g.arr((4,)))
    g.add("nn.scale_regularization_loss", g.arr(()))
    g.add("nn.embedding_lookup", g.arr((4, 2)), T(np.array([[0, 3], [1, 1]], "int32")))
    g.add("nn.embedding_lookup", g.arr((4, 2)), T(np.array([0, 2], "int32")), max_norm=1.0)
    g.add("nn.embedding_lookup", g.arr((4, 2)), T(np.array([5], "int32")))
    g.add("nn.dropout", g.arr((3,)), 0.0)
    g.add("nn.dropout", g.arr((3,)), 1.0)
    g.add("nn.dropout", g.arr((3,)), 0.5, rnd=True)
    g.add("nn.in_top_k", T(np.array([0, 2], "int32")), g.arr((2, 3)), 1)


def _special(g: Gen):
    g.stream("special")
    for name in ["lbeta"]:
        for _ in range(4):
            g.add(f"math.{name}", g.arr(g.shape(1), g.dtype(), low=0.1, high=3))
    for x in [[1e-30, 1e-10, 0.5, 1 - 1e-7, 0.0, 1.0, -0.1], [1e-300, 1e-100, 1e-20, 0.999999999999]]:
        for d in ["float32", "float64"]:
            g.add("math.ndtri", T(np.array(x, d)))
            g.add("math.erfinv", T(np.array(x, d) * 2 - 1))
    for _ in range(3):
        g.add("math.polygamma", T(np.array([0.0, 1.0, 2.0], "float32")), g.arr((3,), "float32", low=0.1, high=3))
        g.add("math.zeta", g.arr((3,), "float64", low=1.1, high=4), g.arr((3,), "float64", low=0.1, high=3))


def _random(g: Gen):
    g.stream("random")
    for fn in ["random.normal", "random.uniform", "random.truncated_normal"]:
        for shape in [[2, 3], [0], []]:
            g.add(fn, shape, rnd=True)
        g.add(fn, [2], dtype={"dtype": "float64"}, rnd=True)
        g.add(fn, [-1], rnd=True)
    g.add("random.uniform", [3], maxval=5, dtype={"dtype": "int32"}, rnd=True)
    g.add("random.uniform", [3], dtype={"dtype": "int32"}, rnd=True)
    g.add("random.categorical", g.arr((2, 3)), 4, rnd=True)
    g.add("random.shuffle", g.arr((4, 2)), rnd=True)
    for fn in ["random.stateless_normal", "random.stateless_uniform", "random.stateless_truncated_normal"]:
        g.add(fn, [2, 2], seed=[1, 2], rnd=True)


def _extra(g: Gen):
    g.stream("extra")
    for _ in range(4):
        s = g.shape()
        d = g.dtype(["float32", "float64"])
        g.add("clip_by_norm", g.arr(s, d), float(g.rng.choice([0.5, 1.0, 100.0])))
        g.add("clip_by_norm", g.arr(s, d, "ties"), 1.0, axes=[0] if s else None)
        g.add("clip_by_global_norm", [g.arr(s, d), g.arr((2,), d)], float(g.rng.choice([0.5, 10.0])))
        g.add("nn.zero_fraction", g.arr(s, g.dtype(FLOATS + ["int32"]), "ties"))
    g.add("clip_by_norm", T(np.zeros((3,), "float32")), 1.0)
    g.add("clip_by_global_norm", [T(np.zeros((2,), "float32"))], 1.0)
    g.add("nn.conv_transpose", g.arr((1, 2, 2, 1)), g.arr((2, 2, 3, 1)), [1, 4, 4, 3], 2, "SAME")
    g.add("nn.conv_transpose", g.arr((1, 3, 1)), g.arr((2, 2, 1)), [1, 6, 2], 2, "SAME")
    g.add("random.fold_in", [1, 2], 3, rnd=True)
    g.add("random.split", [1, 2], 3, rnd=True)
    g.add("random.stateless_categorical", g.arr((2, 3)), 4, [1, 2], rnd=True)


def _coverage(g: Gen):
    # Public functions not reached above: aliases, control flow (differentiated through), tf.function.
    g.stream("coverage")
    for _ in range(3):
        s = g.shape()
        d = g.dtype()
        g.add("realdiv", g.arr(s, d), g.arr(s, d))
        g.add("math.log_sigmoid", g.arr(s, d))
        g.add("nn.swish", g.arr(s, d), beta=float(g.rng.choice([1.0, 0.5])))
        g.add("function", g.arr(g.shape(1), d))
        g.add("recompute_grad", g.arr(s, d))
        g.add("cond", g.arr(s, d), bool(g.rng.integers(2)))
        g.add("switch_case", g.arr(s, d), int(g.rng.integers(2)))
    g.add("realdiv", g.arr((2,), "int32"), g.arr((2,), "int32"))
    g.add("realdiv", g.arr((3,), "float32", "special"), g.arr((3,), "float32", "special"))
    for s in [(3,), (2, 3), (1, 2, 2), (0, 2)]:
        d = g.dtype(["float32", "float64"])
        for fn in ["map_fn", "scan", "foldl", "foldr", "vectorized_map", "while_loop"]:
            if fn in ("foldl", "foldr") and s[0] == 0:
                continue  # TF's fold of an empty sequence has no initializer: both raise, not worth a case
            g.add(fn, g.arr(s, d))
    for s in [(2, 2), (3, 3), (2, 3, 3)]:
        x = g.rng.uniform(-1, 1, size=s)
        g.add("linalg.qr", T(x.astype("float32")), order=0)


FAMILIES = [_unary, _binary, _reduce, _array, _scatter, _linalg, _nn, _special, _random, _extra, _coverage]


def generate(seed: int = 0) -> list:
    """Every fuzz case for ``seed``."""
    g = Gen(seed)
    for fam in FAMILIES:
        fam(g)
    return g.cases
