"""Runs keras.ops cases and writes their results (values, dtypes, shapes) as JSON.

    /opt/tfvenv/bin/python tools/keras_ops/make_fixture.py tests/fixtures/keras/ops_keras315.json

writes real Keras 3's results with the cases themselves; tests/test_keras_ops.py reruns every case in
tapeflow and compares. With ``--tapeflow`` it runs the cases in tapeflow instead (to diff by hand).
"""

from __future__ import annotations

import json
import sys

import numpy as np

F = {"a": [[0.5, -1.25, 2.0], [3.0, -0.75, 0.0]], "dt": "float32"}
F2 = {"a": [[1.5, 0.25, -2.0], [0.5, 4.0, 1.0]], "dt": "float32"}
P = {"a": [[0.25, 1.5, 2.0], [3.0, 0.75, 0.1]], "dt": "float32"}  # positive
U = {"a": [[0.25, -0.5, 0.75], [0.0, 0.9, -0.1]], "dt": "float32"}  # in (-1, 1)
D = {"a": [[0.5, -1.25, 2.0], [3.0, -0.75, 0.0]], "dt": "float64"}
H = {"a": [[0.5, -1.25, 2.0], [3.0, -0.75, 0.0]], "dt": "float16"}
I32 = {"a": [[1, -2, 3], [4, 0, -6]], "dt": "int32"}
I64 = {"a": [[1, -2, 3], [4, 0, -6]], "dt": "int64"}
I8 = {"a": [[1, -2, 3], [4, 0, -6]], "dt": "int8"}
U8 = {"a": [[1, 2, 3], [4, 0, 6]], "dt": "uint8"}
B = {"a": [[True, False, True], [False, False, True]], "dt": "bool"}
V = {"a": [3.0, -1.0, 2.0, 0.5], "dt": "float32"}
SQ = {"a": [[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], "dt": "float32"}  # symmetric positive definite
M = {"a": [[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]], "dt": "float32"}
X4 = {"a": (np.arange(2 * 4 * 4 * 3, dtype=np.float32).reshape(2, 4, 4, 3) / 10.0 - 4.0).tolist(), "dt": "float32"}
K33 = {"a": (np.linspace(-1, 1, 3 * 3 * 3 * 2, dtype=np.float32).reshape(3, 3, 3, 2)).tolist(), "dt": "float32"}
DW = {"a": (np.linspace(-1, 1, 3 * 3 * 3 * 1, dtype=np.float32).reshape(3, 3, 3, 1)).tolist(), "dt": "float32"}
Q = {"a": (np.sin(np.arange(2 * 3 * 2 * 4, dtype=np.float32)).reshape(2, 3, 2, 4)).tolist(), "dt": "float32"}
KV = {"a": (np.cos(np.arange(2 * 5 * 2 * 4, dtype=np.float32)).reshape(2, 5, 2, 4)).tolist(), "dt": "float32"}
IDX = {"a": [0, 2, 1, 2], "dt": "int32"}


def T(*v):  # a tuple argument
    return {"t": list(v)}


def L(*v):  # a list argument
    return {"l": list(v)}


CASES = []


def case(label, fn, *args, **kwargs):
    CASES.append([label, fn, list(args), kwargs])


# dtype promotion: elementwise binaries across dtypes and with Python scalars (weak types)
for a_name, a in (("f32", F), ("f64", D), ("f16", H), ("i32", I32), ("i64", I64), ("i8", I8), ("u8", U8), ("b", B)):
    case(f"add {a_name}+1", "add", a, 1)
    case(f"add {a_name}+1.5", "add", a, 1.5)
    case(f"multiply {a_name}*i32", "multiply", a, I32)
    case(f"multiply {a_name}*f16", "multiply", a, H)
    case(f"true_divide {a_name}/2", "true_divide", a, 2)
    case(f"mean {a_name}", "mean", a)
    case(f"sum {a_name}", "sum", a)
    case(f"sqrt {a_name}", "sqrt", {"a": [[1, 4, 9], [16, 0, 2]], "dt": a["dt"]} if a is not B else a)
    case(f"abs {a_name}", "abs", a)
    case(f"maximum {a_name},0", "maximum", a, 0)
    case(f"power {a_name}**2", "power", a, 2)
    case(f"argmax {a_name}", "argmax", a, axis=1)
    case(f"cumsum {a_name}", "cumsum", a, axis=1)
    case(f"prod {a_name}", "prod", a, axis=0)
    case(f"var {a_name}", "var", a)
    case(f"clip {a_name}", "clip", a, -1, 2)
    case(f"where {a_name}", "where", B, a, 0)
for fn in ("sin", "cos", "tanh", "exp", "log1p", "expm1", "arctan", "sinh", "floor", "ceil", "sign", "square",
           "negative", "reciprocal", "round", "trunc", "cbrt", "log2", "log10", "exp2", "deg2rad", "isfinite",
           "signbit", "sinc", "logical_not"):
    case(f"{fn} f32", fn, F)
for fn in ("arcsin", "arccos", "arctanh"):
    case(f"{fn} f32", fn, U)
for fn in ("log", "arccosh"):
    case(f"{fn} f32", fn, {"a": [[1.25, 1.5, 2.0], [3.0, 1.75, 10.0]], "dt": "float32"})
for fn in ("subtract", "divide", "floor_divide", "mod", "minimum", "arctan2", "hypot", "logaddexp", "equal", "less",
           "greater_equal", "logical_and", "logical_xor", "heaviside", "divide_no_nan"):
    case(f"{fn} f32", fn, F, F2)
case("mod i32", "mod", I32, 4)
case("floor_divide i32", "floor_divide", I32, 4)
case("isclose", "isclose", F, {"a": [[0.5, -1.2500001, 2.1], [3.0, -0.75, 1e-9]], "dt": "float32"})
# reductions and statistics
case("sum axis keepdims", "sum", F, axis=1, keepdims=True)
case("mean axis tuple", "mean", X4, axis=T(1, 2))
case("max", "max", F, axis=0)
case("min", "min", I32)
case("std", "std", F, axis=1)
case("all", "all", B, axis=1)
case("any", "any", B)
case("median", "median", F, axis=1)
case("quantile", "quantile", V, 0.3)
case("percentile", "percentile", V, T(10, 90))
case("average weights", "average", F, axis=1, weights={"a": [1.0, 2.0, 3.0], "dt": "float32"})
case("count_nonzero", "count_nonzero", F)
case("cumprod", "cumprod", F, axis=0)
case("ptp", "ptp", F, axis=1)
case("argmin", "argmin", F)
case("argsort", "argsort", V)
case("sort", "sort", F, axis=0)
case("logsumexp", "logsumexp", F, axis=1)
case("top_k", "top_k", F, 2)
case("in_top_k", "in_top_k", {"a": [2, 0], "dt": "int32"}, F, 1)
case("moments", "moments", F, T(0,))
case("segment_sum", "segment_sum", {"a": [1.0, 2.0, 3.0, 4.0], "dt": "float32"}, IDX)
case("segment_max", "segment_max", {"a": [1.0, 2.0, 3.0, 4.0], "dt": "float32"}, IDX, num_segments=3)
# creation
case("zeros", "zeros", T(2, 3))
case("ones int", "ones", T(2,), dtype="int32")
case("full", "full", T(2, 2), 7)
case("full float", "full", T(2, 2), 0.5)
case("arange", "arange", 5)
case("arange float", "arange", 0.0, 2.0, 0.5)
case("arange int step", "arange", 1, 10, 3)
case("linspace", "linspace", 0.0, 1.0, 5)
case("eye", "eye", 3, k=1)
case("identity", "identity", 2)
case("tri", "tri", 3)
case("zeros_like", "zeros_like", I32)
case("full_like", "full_like", F, 3)
case("logspace", "logspace", 0.0, 2.0, 3)
# shapes
case("reshape", "reshape", F, T(3, 2))
case("transpose", "transpose", X4, axes=T(0, 3, 1, 2))
case("expand_dims", "expand_dims", F, 1)
case("squeeze", "squeeze", {"a": [[[1.0], [2.0]]], "dt": "float32"})
case("concatenate mixed", "concatenate", L(F, I32), axis=1)
case("stack", "stack", L(F, F2), axis=1)
case("hstack", "hstack", L(F, F2))
case("vstack", "vstack", L(F, F2))
case("dstack", "dstack", L(F, F2))
case("split", "split", F, 3, axis=1)
case("split indices", "split", V, L(1, 3))
case("array_split", "array_split", V, 3)
case("hsplit", "hsplit", F, 3)
case("tile", "tile", F, T(2, 1))
case("repeat", "repeat", F, 2, axis=0)
case("flip", "flip", F, axis=1)
case("fliplr", "fliplr", F)
case("flipud", "flipud", F)
case("rot90", "rot90", F)
case("rot90 k=3", "rot90", F, k=3)
case("roll", "roll", F, 1, axis=1)
case("pad", "pad", F, T(T(1, 0), T(0, 2)))
case("pad reflect", "pad", F, T(T(0, 0), T(1, 1)), mode="reflect")
case("take", "take", F, {"a": [2, 0], "dt": "int32"}, axis=1)
case("take_along_axis", "take_along_axis", F, {"a": [[0], [2]], "dt": "int32"}, axis=1)
case("moveaxis", "moveaxis", X4, 3, 0)
case("swapaxes", "swapaxes", F, 0, 1)
case("broadcast_to", "broadcast_to", V, T(2, 4))
case("tril", "tril", SQ)
case("triu", "triu", SQ, k=1)
case("diagonal", "diagonal", SQ)
case("diag", "diag", V)
case("trace", "trace", SQ)
case("diff", "diff", V)
case("ravel", "ravel", F)
case("append", "append", F, F2, axis=0)
case("meshgrid", "meshgrid", V, {"a": [1.0, 2.0], "dt": "float32"})
case("nonzero", "nonzero", F)
case("unique", "unique", {"a": [3, 1, 3, 2, 1], "dt": "int32"})
case("searchsorted", "searchsorted", {"a": [0.0, 1.0, 2.0, 3.0], "dt": "float32"}, V)
case("digitize", "digitize", V, {"a": [0.0, 1.0, 2.5], "dt": "float32"})
case("bincount", "bincount", {"a": [0, 1, 1, 3], "dt": "int32"})
case("isin", "isin", I32, {"a": [1, 4, 9], "dt": "int32"})
case("select", "select", L(B, {"a": [[True, True, False], [True, False, False]], "dt": "bool"}), L(F, F2), 9.0)
case("size", "size", F)
case("ndim", "ndim", X4)
# products
case("matmul", "matmul", F, {"a": [[1.0, 0.0], [2.0, 1.0], [0.5, -1.0]], "dt": "float32"})
case("matmul int", "matmul", I32, {"a": [[1, 0], [2, 1], [0, -1]], "dt": "int32"})
case("dot", "dot", V, V)
case("tensordot", "tensordot", F, M, axes=1)
case("einsum", "einsum", "ij,kj->ik", F, F2)
case("outer", "outer", V, V)
case("inner", "inner", V, V)
case("cross", "cross", {"a": [1.0, 2.0, 3.0], "dt": "float32"}, {"a": [0.0, -1.0, 2.0], "dt": "float32"})
case("kron", "kron", {"a": [[1.0, 2.0]], "dt": "float32"}, {"a": [[1.0], [3.0]], "dt": "float32"})
case("vdot", "vdot", V, V)
case("correlate", "correlate", V, {"a": [1.0, 0.5], "dt": "float32"})
# bitwise
case("bitwise_and", "bitwise_and", I32, 6)
case("bitwise_or", "bitwise_or", I32, U8)
case("bitwise_xor", "bitwise_xor", I32, I32)
case("bitwise_invert", "bitwise_invert", I32)
case("left_shift", "left_shift", I32, 2)
case("right_shift", "right_shift", I32, 1)
# nn
for fn in ("relu", "relu6", "sigmoid", "softplus", "softsign", "silu", "log_sigmoid", "hard_sigmoid", "hard_silu",
           "selu", "elu", "gelu", "celu", "leaky_relu", "tanh_shrink", "hard_tanh", "sparse_plus", "sparse_sigmoid",
           "soft_shrink", "hard_shrink", "squareplus"):
    case(f"{fn}", fn, F)
case("gelu exact", "gelu", F, approximate=False)
case("glu", "glu", {"a": [[0.5, -1.0, 2.0, 0.25]], "dt": "float32"})
case("threshold", "threshold", F, 0.6, -5.0)
case("softmax", "softmax", F)
case("softmax axis0", "softmax", F, axis=0)
case("softmax None", "softmax", F, axis=None)
case("log_softmax", "log_softmax", F)
case("sparsemax", "sparsemax", F)
case("one_hot", "one_hot", {"a": [0, 2, -1, 3], "dt": "int32"}, 3)
case("one_hot axis0 int", "one_hot", {"a": [0, 2], "dt": "int32"}, 3, axis=0, dtype="int32")
case("multi_hot", "multi_hot", {"a": [[0, 2], [1, 1]], "dt": "int32"}, num_classes=4)
case("binary_crossentropy", "binary_crossentropy", {"a": [[1.0, 0.0, 1.0]], "dt": "float32"},
     {"a": [[0.9, 0.2, 0.0]], "dt": "float32"})
case("binary_crossentropy logits", "binary_crossentropy", {"a": [[1.0, 0.0, 1.0]], "dt": "float32"},
     {"a": [[2.0, -1.0, 0.5]], "dt": "float32"}, from_logits=True)
case("categorical_crossentropy", "categorical_crossentropy", {"a": [[0.0, 1.0, 0.0]], "dt": "float32"},
     {"a": [[0.2, 0.5, 0.3]], "dt": "float32"})
case("categorical_crossentropy logits", "categorical_crossentropy", {"a": [[0.0, 1.0, 0.0]], "dt": "float32"},
     {"a": [[0.5, -1.25, 2.0]], "dt": "float32"}, from_logits=True)
case("sparse_categorical_crossentropy", "sparse_categorical_crossentropy", {"a": [2, 0], "dt": "int32"}, P)
case("sparse_categorical_crossentropy logits", "sparse_categorical_crossentropy", {"a": [2, 0], "dt": "int32"}, F,
     from_logits=True)
case("normalize", "normalize", F)
case("normalize order1", "normalize", F, order=1)
case("batch_normalization", "batch_normalization", F, {"a": [1.0, 0.0, -1.0], "dt": "float32"},
     {"a": [0.5, 2.0, 1.0], "dt": "float32"}, -1, offset={"a": [0.1, 0.2, 0.3], "dt": "float32"},
     scale={"a": [2.0, 1.0, 0.5], "dt": "float32"})
case("layer_normalization", "layer_normalization", F)
case("rms_normalization", "rms_normalization", F, scale={"a": [1.0, 2.0, 3.0], "dt": "float32"})
case("psnr", "psnr", F, F2, 4.0)
case("max_pool", "max_pool", X4, 2)
case("average_pool same", "average_pool", X4, 3, strides=2, padding="same")
case("conv", "conv", X4, K33)
case("conv same strided", "conv", X4, K33, strides=2, padding="same")
case("conv dilated", "conv", X4, {"a": (np.linspace(-1, 1, 2 * 2 * 3 * 2, dtype=np.float32).reshape(2, 2, 3, 2)
                                        ).tolist(), "dt": "float32"}, dilation_rate=2)
case("depthwise_conv", "depthwise_conv", X4, DW, padding="same")
case("separable_conv", "separable_conv", X4, DW, {"a": [[[[1.0, -1.0], [0.5, 0.5], [0.0, 2.0]]]], "dt": "float32"})
case("depth_to_space", "depth_to_space", {"a": np.arange(16, dtype=np.float32).reshape(1, 1, 2, 8).tolist(),
                                          "dt": "float32"}, 2)
case("space_to_depth", "space_to_depth", X4, 2)
case("dot_product_attention", "dot_product_attention", Q, KV, KV)
case("dot_product_attention causal", "dot_product_attention", Q, Q, Q, is_causal=True)
case("dot_product_attention gqa", "dot_product_attention", {"a": np.sin(np.arange(1 * 3 * 4 * 2, dtype=np.float32))
     .reshape(1, 3, 4, 2).tolist(), "dt": "float32"}, {"a": np.cos(np.arange(1 * 3 * 2 * 2, dtype=np.float32))
     .reshape(1, 3, 2, 2).tolist(), "dt": "float32"}, {"a": np.cos(np.arange(1 * 3 * 2 * 2, dtype=np.float32))
     .reshape(1, 3, 2, 2).tolist(), "dt": "float32"})
# core
case("cast", "cast", F, "int32")
case("cast bool", "cast", F, "bool")
case("saturate_cast", "saturate_cast", {"a": [-300.0, 12.7, 300.0], "dt": "float32"}, "uint8")
case("convert_to_tensor list", "convert_to_tensor", L(1.0, 2.0))
case("convert_to_tensor int list", "convert_to_tensor", L(1, 2))
case("stop_gradient", "stop_gradient", F)
case("unstack", "unstack", F)
case("scatter", "scatter", {"a": [[0], [2]], "dt": "int32"}, {"a": [1.0, 2.0], "dt": "float32"}, T(4,))
case("scatter_update", "scatter_update", {"a": [[0.0, 0.0], [0.0, 0.0]], "dt": "float32"},
     {"a": [[0, 1], [1, 0]], "dt": "int32"}, {"a": [5.0, 6.0], "dt": "float32"})
case("scatter_update add", "scatter_update", {"a": [[1.0, 1.0], [1.0, 1.0]], "dt": "float32"},
     {"a": [[0, 1], [0, 1]], "dt": "int32"}, {"a": [5.0, 6.0], "dt": "float32"}, reduction="add")
case("scatter_update mul", "scatter_update", {"a": [[1.0, 2.0], [1.0, 1.0]], "dt": "float32"},
     {"a": [[0, 1], [0, 1]], "dt": "int32"}, {"a": [5.0, 6.0], "dt": "float32"}, reduction="mul")
case("slice", "slice", F, T(0, 1), T(2, 2))
case("slice_update", "slice_update", F, T(1, 1), {"a": [[9.0, 8.0]], "dt": "float32"})
case("shape", "shape", X4)
case("dtype", "dtype", H)
# math / linalg
case("rsqrt", "rsqrt", P)
case("erf", "erf", F)
case("erfinv", "erfinv", U)
case("logdet", "logdet", SQ)
case("cdist", "cdist", F, F2)
case("cholesky", "cholesky", SQ)
case("cholesky upper", "cholesky", SQ, upper=True)
case("cholesky_inverse", "cholesky_inverse", {"a": [[2.0, 0.0], [1.0, 3.0]], "dt": "float32"})
case("det", "det", SQ)
case("inv", "inv", SQ)
case("solve", "solve", SQ, {"a": [1.0, 2.0, 3.0], "dt": "float32"})
case("solve_triangular", "solve_triangular", SQ, {"a": [[1.0], [2.0], [3.0]], "dt": "float32"}, lower=True)
case("norm", "norm", F)
case("norm int", "norm", I32, axis=1)
case("norm ord1 vector", "norm", V, ord=1)
case("norm inf matrix", "norm", F, ord=float("inf"), axis=T(0, 1))
case("norm fro keepdims", "norm", F, axis=T(0, 1), keepdims=True)
case("norm nuc", "norm", M, ord="nuc", axis=T(0, 1))
case("svd s", "svd", M, compute_uv=False)
case("matrix_rank", "matrix_rank", M)
case("pinv", "pinv", M)
case("eigh values", "eigh", SQ)

# kops11 (issue 11): NaN-aware reductions, windows and the other NumPy names
NAN = {"a": [[0.5, float("nan"), 2.0], [float("nan"), float("nan"), float("nan")]], "dt": "float32"}
NAN2 = {"a": [[0.5, float("nan"), 2.0, -1.0], [3.0, 1.5, float("nan"), 0.25]], "dt": "float64"}
for fn in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanargmax", "nanargmin",
           "nanmedian"):
    case(f"{fn}", fn, NAN2)
    case(f"{fn} axis", fn, NAN, axis=1)
    case(f"{fn} axis0 keepdims", fn, NAN2, axis=0, keepdims=True)
    case(f"{fn} i32", fn, I32, axis=0)
case("nansum b", "nansum", B)
case("nansum i8", "nansum", I8, axis=1)
case("nanmax b", "nanmax", B, axis=1)
case("nanargmax keepdims", "nanargmax", NAN2, keepdims=True)
case("nancumsum", "nancumsum", NAN2, axis=1)
case("nancumsum flat", "nancumsum", NAN)
case("nancumsum inf", "nancumsum", {"a": [1.0, float("inf"), float("nan")], "dt": "float32"})
case("nancumprod", "nancumprod", NAN2, axis=0)
case("nancumsum i32 dtype", "nancumsum", I32, axis=1, dtype="float32")
case("nanquantile", "nanquantile", NAN2, 0.3, axis=1)
case("nanquantile q list", "nanquantile", NAN, L(0.25, 0.75), axis=1, keepdims=True)
case("nanquantile nearest", "nanquantile", NAN2, 0.4, method="nearest")
case("nanpercentile", "nanpercentile", NAN2, 40, axis=0)
case("nanpercentile all", "nanpercentile", NAN2, L(10, 90))
case("nanmedian f32 flat", "nanmedian", NAN)
case("nanquantile i32 flat", "nanquantile", I32, 0.5)
case("nanquantile all nan", "nanquantile", {"a": [float("nan"), float("nan")], "dt": "float32"}, 0.5)
for n in (0, 1, 2, 5, 8):
    for fn in ("bartlett", "hamming", "hanning", "blackman"):
        case(f"{fn} {n}", fn, n)
    case(f"kaiser {n}", "kaiser", n, 3.5)
case("kaiser beta0", "kaiser", 6, 0.0)
case("kaiser beta14", "kaiser", 9, 14.0)
case("i0 f32", "i0", {"a": [-12.0, -3.0, 0.0, 0.5, 7.9, 8.1, 20.0], "dt": "float32"})
case("i0 f64", "i0", {"a": [-12.0, -3.0, 0.0, 0.5, 7.9, 8.1, 20.0], "dt": "float64"})
case("i0 i32", "i0", I32)
case("i0 i64", "i0", I64)
case("i0 f16", "i0", H)
for fn in ("fmax", "fmin"):
    case(f"{fn}", fn, NAN2, {"a": [1.0, 1.0, float("nan"), float("nan")], "dt": "float64"})
    case(f"{fn} i32 scalar", fn, I32, 2)
    case(f"{fn} f32 i32", fn, F, I32)
case("fmod f32", "fmod", F, F2)
case("fmod i32", "fmod", I32, 4)
case("fmod i32 neg", "fmod", I32, -4)
case("fmod u8", "fmod", U8, {"a": [4, 4, 2], "dt": "uint8"})
case("fmod b", "fmod", B, B)
case("gcd", "gcd", {"a": [12, -18, 0, 7, 0], "dt": "int32"}, {"a": [8, 12, 5, 0, 0], "dt": "int32"})
case("gcd broadcast", "gcd", I32, 4)
case("gcd i64 u8", "gcd", I64, U8)
case("gcd float", "gcd", F, F2)
case("lcm", "lcm", {"a": [12, -18, 0, 7, 4], "dt": "int32"}, {"a": [8, 12, 5, 0, 6], "dt": "int32"})
case("lcm u8", "lcm", U8, {"a": [2, 3, 4], "dt": "uint8"})
case("lcm float", "lcm", F, I32)
case("ldexp", "ldexp", F, I32)
case("ldexp f64", "ldexp", D, {"a": [1, 2, -1], "dt": "int8"})
case("ldexp i32", "ldexp", I32, I32)
case("ldexp inf", "ldexp", {"a": [float("inf"), 0.0, -1.5], "dt": "float32"}, {"a": [2, 3, 1], "dt": "int32"})
case("ldexp float exponent", "ldexp", F, F2)
case("logaddexp2", "logaddexp2", F, F2)
case("logaddexp2 i32", "logaddexp2", I32, 1)
case("logaddexp2 inf", "logaddexp2", {"a": [float("-inf"), float("inf"), 1.0], "dt": "float64"},
     {"a": [float("-inf"), float("inf"), float("nan")], "dt": "float64"})
case("nextafter", "nextafter", F, F2)
case("nextafter f64", "nextafter", D, {"a": [10.0, -10.0, 2.0], "dt": "float64"})
case("nextafter i32", "nextafter", I32, 0)
case("geomspace", "geomspace", 1.0, 1000.0, 4)
case("geomspace negative", "geomspace", -1.0, -16.0, 5, endpoint=False)
case("geomspace f64", "geomspace", 2.0, 32.0, 5, dtype="float64")
case("geomspace axis", "geomspace", {"a": [1.0, 2.0], "dt": "float32"}, {"a": [100.0, 8.0], "dt": "float32"}, 3,
     axis=1)
case("diagflat", "diagflat", F)
case("diagflat k", "diagflat", V, k=-1)
case("diagflat i32 k", "diagflat", I32, k=2)
case("trapezoid", "trapezoid", F)
case("trapezoid axis dx", "trapezoid", F, dx=0.5, axis=0)
case("trapezoid x", "trapezoid", F, x={"a": [0.0, 1.0, 3.0], "dt": "float32"})
case("trapezoid i32", "trapezoid", I32)
case("vander", "vander", V)
case("vander N increasing", "vander", V, N=3, increasing=True)
case("vander i32", "vander", {"a": [1, 2, 3, 5], "dt": "int32"})
case("vander 2d", "vander", F)
case("corrcoef", "corrcoef", {"a": [[0.5, -1.25, 2.0, 1.0], [3.0, -0.75, 0.0, 1.0], [1.0, 2.0, 3.0, 4.5]],
     "dt": "float32"})
case("corrcoef i32", "corrcoef", I32)
case("corrcoef f64", "corrcoef", D)
case("slogdet", "slogdet", SQ)
case("slogdet negative", "slogdet", {"a": [[0.0, 1.0], [1.0, 0.0]], "dt": "float64"})
case("unravel_index", "unravel_index", {"a": [0, 5, 11, 7], "dt": "int32"}, T(3, 4))
case("unravel_index 2d", "unravel_index", {"a": [[0, 5], [11, 7]], "dt": "int64"}, T(2, 2, 3))
case("argpartition", "argpartition", {"a": [3, 1, 4, 1, 5, 9, 2, 6], "dt": "int32"}, 3)
case("argpartition float", "argpartition", V, 1)
case("argpartition negative", "argpartition", {"a": [-5.0, -3.0, -1.0], "dt": "float32"}, 0)
case("argpartition rows", "argpartition", {"a": [[3.0, 1.0, 2.0], [0.5, -1.0, 7.0]], "dt": "float32"}, 1)
case("argpartition axis0", "argpartition", {"a": [[3, 1], [0, 2], [5, -4]], "dt": "int32"}, 1, axis=0)
case("argpartition flat", "argpartition", {"a": [[3, 1], [0, 2]], "dt": "int32"}, 2, axis=None)
case("argpartition kth float", "argpartition", V, 1.0)
case("histogram", "histogram", {"a": [0.5, 1.0, 1.5, 3.0, 2.0, 2.5, 0.0, 3.0], "dt": "float32"})
case("histogram bins range", "histogram", {"a": [0.5, 1.0, 1.5, 3.0, 2.0, 2.5, 0.0, 3.0], "dt": "float64"}, bins=4,
     range=T(0.5, 2.5))
case("histogram i32", "histogram", {"a": [1, 2, 2, 3, 7, 0], "dt": "int32"}, bins=3)
case("histogram bins float", "histogram", V, bins=2.0)
case("histogram bins negative", "histogram", V, bins=-1)
case("histogram range list", "histogram", V, range=L(0.0, 1.0))
case("histogram range reversed", "histogram", V, range=T(2.0, 1.0))
case("histogram 2d", "histogram", F)

# kops11 (issue 11): transposed convolutions, adaptive pooling, fold / unfold
def A(shape, dt="float32", f=np.sin, tensor=False):  # an array argument of this shape with varied values
    out = {"a": f(np.arange(int(np.prod(shape)), dtype=np.float64) * 0.7).reshape(shape).astype(dt).tolist(),
           "dt": dt}
    return {**out, "tensor": True} if tensor else out  # tensor: passed as a tensor (Keras's adaptive pools need one)


X3 = A((2, 5, 3))
X5 = A((1, 3, 4, 3, 2))
case("conv_transpose 2d", "conv_transpose", X4, A((3, 3, 2, 3), f=np.cos))
case("conv_transpose 2d same strided", "conv_transpose", X4, A((3, 3, 2, 3), f=np.cos), strides=2, padding="same")
case("conv_transpose 2d valid strided", "conv_transpose", X4, A((2, 3, 4, 3), f=np.cos), strides=(3, 2))
case("conv_transpose 2d output_padding", "conv_transpose", X4, A((3, 3, 2, 3), f=np.cos), strides=2,
     padding="same", output_padding=1)
case("conv_transpose 2d valid output_padding", "conv_transpose", X4, A((3, 3, 2, 3), f=np.cos), strides=3,
     output_padding=(1, 2))
case("conv_transpose 2d dilated", "conv_transpose", X4, A((2, 2, 2, 3), f=np.cos), dilation_rate=2)
case("conv_transpose 2d channels_first", "conv_transpose", A((2, 3, 4, 5)), A((3, 2, 2, 3), f=np.cos), strides=2,
     data_format="channels_first")
case("conv_transpose 1d", "conv_transpose", X3, A((3, 4, 3), f=np.cos), strides=2)
case("conv_transpose 1d same", "conv_transpose", X3, A((4, 2, 3), f=np.cos), strides=3, padding="same")
case("conv_transpose 3d", "conv_transpose", X5, A((2, 2, 3, 3, 2), f=np.cos), strides=(2, 1, 2), padding="same")
case("conv_transpose 3d valid", "conv_transpose", X5, A((2, 3, 2, 2, 2), f=np.cos))
case("conv_transpose channels mismatch", "conv_transpose", X4, A((3, 3, 2, 4), f=np.cos))
case("conv_transpose bad padding", "conv_transpose", X4, A((3, 3, 2, 3), f=np.cos), padding="causal")
for fn in ("adaptive_average_pool", "adaptive_max_pool"):
    case(f"{fn} 1d", fn, A((2, 7, 3), tensor=True), 3, data_format="channels_last")
    case(f"{fn} 1d up", fn, A((2, 3, 2), tensor=True), 5, data_format="channels_last")
    case(f"{fn} 1d first", fn, A((2, 3, 8), tensor=True), 3, data_format="channels_first")
    case(f"{fn} 2d", fn, A((2, 7, 5, 3), tensor=True), (3, 2), data_format="channels_last")
    case(f"{fn} 2d first", fn, A((1, 2, 10, 6)), 4, data_format="channels_first")
    case(f"{fn} 2d default", fn, A((1, 2, 6, 6), tensor=True), 3)
    case(f"{fn} 2d up", fn, A((1, 3, 2, 1), tensor=True), (5, 4))
    case(f"{fn} 3d", fn, A((1, 5, 4, 7, 2), tensor=True), (2, 3, 3), data_format="channels_last")
    case(f"{fn} 3d first", fn, A((1, 2, 5, 4, 3), tensor=True), 2, data_format="channels_first")
    case(f"{fn} 4d error", fn, A((1, 2, 2, 2, 2, 2)), 1)
case("unfold", "unfold", A((2, 3, 5, 4)), 2)
case("unfold args", "unfold", A((1, 2, 7, 6)), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
case("unfold 3d error", "unfold", A((2, 5, 4)), 2)
case("fold", "fold", A((2, 12, 12)), (5, 4), 2)
case("fold args", "fold", A((1, 12, 24)), (7, 6), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
case("fold blocks error", "fold", A((1, 12, 16)), (7, 6), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
case("fold stride 2", "fold", A((1, 8, 6)), (4, 6), 2, stride=2)
case("fold 4d error", "fold", A((1, 8, 6, 1)), 4, 2)
case("fold channels error", "fold", A((1, 7, 6)), 4, 2)

# kops11 (issue 11): CTC loss and decoding
LOGITS = A((3, 7, 5), f=lambda v: 2.0 * np.sin(v * 1.3) + np.cos(v * 0.37))
CTC_T = {"a": [[1, 2, 2], [3, 0, 0], [4, 1, 3]], "dt": "int32"}
case("ctc_loss", "ctc_loss", CTC_T, LOGITS, {"a": [3, 1, 2], "dt": "int32"}, {"a": [7, 7, 5], "dt": "int32"})
case("ctc_loss short output", "ctc_loss", CTC_T, LOGITS, {"a": [3, 1, 3], "dt": "int32"},
     {"a": [3, 7, 2], "dt": "int32"})
case("ctc_loss mask_index", "ctc_loss", {"a": [[1, 2, 2], [3, 4, 4], [0, 1, 3]], "dt": "int32"}, LOGITS,
     {"a": [3, 1, 3], "dt": "int32"}, {"a": [7, 6, 7], "dt": "int32"}, mask_index=4)
case("ctc_loss mask_index middle", "ctc_loss", {"a": [[1, 3, 3], [4, 0, 0], [0, 1, 3]], "dt": "int64"},
     A((3, 7, 5), "float64"), {"a": [3, 1, 0], "dt": "int32"}, {"a": [7, 6, 7], "dt": "int32"}, mask_index=2)
case("ctc_loss f16", "ctc_loss", CTC_T, A((3, 7, 5), "float16"), {"a": [3, 1, 2], "dt": "int32"},
     {"a": [7, 7, 5], "dt": "int32"})
LENS = {"a": [7, 5, 2], "dt": "int32"}
case("ctc_decode greedy", "ctc_decode", LOGITS, LENS)
case("ctc_decode greedy no merge", "ctc_decode", LOGITS, LENS, merge_repeated=False)
case("ctc_decode greedy mask_index", "ctc_decode", LOGITS, LENS, mask_index=2)
case("ctc_decode greedy f64", "ctc_decode", A((2, 4, 3), "float64"), {"a": [4, 3], "dt": "int32"}, mask_index=-1)
case("ctc_decode beam", "ctc_decode", LOGITS, LENS, strategy="beam_search")
case("ctc_decode beam top_paths", "ctc_decode", LOGITS, LENS, strategy="beam_search", beam_width=4, top_paths=3)
case("ctc_decode beam narrow", "ctc_decode", LOGITS, LENS, strategy="beam_search", beam_width=1)
case("ctc_decode beam mask_index", "ctc_decode", LOGITS, LENS, strategy="beam_search", beam_width=3,
     mask_index=4, top_paths=2)
case("ctc_decode beam too many paths", "ctc_decode", LOGITS, LENS, strategy="beam_search", beam_width=2,
     top_paths=3)
case("ctc_decode bad strategy", "ctc_decode", LOGITS, LENS, strategy="best")

# kops11 (issue 11): lu_factor, lstsq
LU4 = {"a": [[2.0, 1.0, 0.0, 3.0], [4.0, -1.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0], [0.0, 5.0, -2.0, 1.0]], "dt": "float32"}
case("lu_factor", "lu_factor", {"a": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]], "dt": "float32"})
case("lu_factor 4", "lu_factor", LU4)
case("lu_factor f64", "lu_factor", A((5, 5), "float64", f=lambda v: np.sin(v * v * 0.37)))
case("lu_factor ties", "lu_factor", {"a": [[1.0, 2.0], [-1.0, 3.0]], "dt": "float64"})
case("lu_factor singular", "lu_factor", {"a": [[0.0, 1.0], [0.0, 2.0]], "dt": "float32"})
case("lu_factor int", "lu_factor", {"a": [[1, 2], [3, 4]], "dt": "int32"})
case("lu_factor non-square", "lu_factor", M)
case("lu_factor 1d", "lu_factor", V)
case("lu_factor batched", "lu_factor", A((2, 3, 3)))
case("lstsq", "lstsq", M, {"a": [1.0, 2.0, 3.0], "dt": "float32"})
case("lstsq matrix", "lstsq", A((5, 3), "float64", f=lambda v: np.sin(v * v * 0.37)), A((5, 2), "float64", f=np.cos))
case("lstsq rank deficient", "lstsq", {"a": [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], "dt": "float32"},
     {"a": [1.0, 2.0, 3.5], "dt": "float32"})
case("lstsq rcond", "lstsq", A((4, 3), f=lambda v: np.sin(v * v * 0.37)), A((4, 2), f=np.cos), rcond=0.5)
case("lstsq wide", "lstsq", A((2, 4), "float64"), {"a": [1.0, -1.0], "dt": "float64"})
case("lstsq mismatch", "lstsq", M, V)
case("lstsq 3d", "lstsq", A((3, 2, 2)), A((3, 2)))

# kops11 (issue 11): rearrange (einops)
case("rearrange transpose", "rearrange", X4, "b h w c -> b c h w")
case("rearrange merge", "rearrange", X4, "b h w c -> b (h w c)")
case("rearrange split", "rearrange", X4, "b (h h1) (w w1) c -> b h w (c h1 w1)", h1=2, w1=2)
case("rearrange split batch", "rearrange", X4, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=2)

# kops11 (issue 11): view (bitcast)
case("view int32", "view", F, "int32")
case("view uint8", "view", F, "uint8")
case("view float64", "view", {"a": [[1.0, 2.0, -3.0, 0.5]], "dt": "float32"}, "float64")
case("view same", "view", I32)
case("view f16 i16", "view", H, "int16")
case("view bad size", "view", F, "float64")
case("view scalar", "view", {"a": 1.5, "dt": "float32"}, "float16")


def decode(v, ops):
    if isinstance(v, dict):
        if "a" in v:
            a = np.array(v["a"], dtype=v["dt"])
            return ops.convert_to_tensor(a) if v.get("tensor") else a
        if "t" in v:
            return tuple(decode(x, ops) for x in v["t"])
        if "l" in v:
            return [decode(x, ops) for x in v["l"]]
        return {k: decode(x, ops) for k, x in v.items()}
    return v


def encode(out):
    if isinstance(out, (tuple, list)):
        return [encode(o) for o in out]
    if hasattr(out, "numpy") or isinstance(out, np.ndarray):
        a = np.asarray(out)
        name = str(getattr(out, "dtype", a.dtype))
        name = name.replace("<dtype: '", "").replace("'>", "")
        return {"a": a.tolist(), "dt": name, "shape": list(a.shape)}
    if isinstance(out, (int, float, bool, str)) or out is None:
        return out
    return repr(out)


def run(ops) -> dict:
    results = {}
    for label, fn, args, kwargs in CASES:
        try:
            out = getattr(ops, fn)(*[decode(a, ops) for a in args], **{k: decode(v, ops) for k, v in kwargs.items()})
            results[label] = {"out": encode(out)}
        except Exception as e:  # noqa: BLE001 - a case Keras rejects is recorded as its error type
            results[label] = {"error": type(e).__name__}
    return results


def symbolic(keras, ops, results) -> dict:
    """Per case, the operation nodes of a functional model that applies it to ``Input``s standing for
    its array arguments: their module, class, config and inbound-node arguments, as ``get_config`` saves
    them (a case whose result is no KerasTensor, that Keras rejects symbolically, or that fails eagerly, is
    left out)."""
    out = {}
    for label, fn, args, kwargs in CASES:
        if "error" in results[label]:
            continue
        keras.backend.clear_session()
        inputs = []

        def sym(v, inputs=inputs):
            if isinstance(v, dict) and "a" in v:
                a = np.array(v["a"], dtype=v["dt"])
                inputs.append(keras.Input(batch_shape=a.shape, dtype=v["dt"]))
                return inputs[-1]
            if isinstance(v, dict) and "l" in v:
                return [sym(x) for x in v["l"]]
            return decode(v, ops)

        try:
            res = getattr(ops, fn)(*[sym(a) for a in args], **{k: sym(v) for k, v in kwargs.items()})
            flat = res if isinstance(res, (tuple, list)) else [res]
            if not inputs or not all(isinstance(r, keras.KerasTensor) for r in flat):
                continue
            model = keras.Model(inputs, list(flat))
            layers = model.get_config()["layers"]
            out[label] = [{k: e[k] for k in ("module", "class_name", "config", "inbound_nodes")}
                          for e in layers if e["module"].startswith("keras.src.ops")]
        except Exception as e:  # noqa: BLE001 - recorded as the error's type
            out[label] = {"error": type(e).__name__}
    return json.loads(json.dumps(out, default=repr))


def main() -> None:
    if "--tapeflow" in sys.argv:
        import tapeflow.keras as keras
        import tapeflow.keras.ops as ops
    else:
        import keras
        import keras.ops as ops
    out = sys.argv[-1]
    results = run(ops)
    data = {"cases": CASES, "results": results, "symbolic": symbolic(keras, ops, results)}
    with open(out, "w") as f:
        json.dump(data, f, indent=0)


if __name__ == "__main__":
    main()
