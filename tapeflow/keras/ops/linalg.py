"""``keras.ops.linalg``: decompositions, solves and norms, as Keras 3's TensorFlow backend does them."""

from __future__ import annotations

from typing import Any

from tapeflow.keras.ops._base import convert, float_of, keras_op, tf


@keras_op("Cholesky", "linalg")
def cholesky(x: Any, upper: bool = False) -> Any:
    """``keras.ops.cholesky``: the lower (``upper=True``: upper) Cholesky factor; a matrix that is not
    positive definite raises ValueError, as Keras's check of TF's NaNs does."""
    t = tf()
    out = t.linalg.cholesky(convert(x))
    try:
        out = t.debugging.check_numerics(out, "Cholesky")
    except t.errors.InvalidArgumentError as e:
        raise ValueError(f"Cholesky decomposition failed: {e}") from None
    return t.linalg.adjoint(out) if upper else out


@keras_op("CholeskyInverse", "linalg")
def cholesky_inverse(x: Any, upper: bool = False) -> Any:
    """``keras.ops.cholesky_inverse``: the inverse of the matrix whose Cholesky factor is ``x``."""
    t = tf()
    x = convert(x)
    inv_chol = t.linalg.triangular_solve(x, t.eye(x.shape[-1], dtype=x.dtype), lower=not upper)
    if upper:
        return t.matmul(inv_chol, inv_chol, transpose_b=True)
    return t.matmul(inv_chol, inv_chol, transpose_a=True)


def _unary(name: str, cls: str, fn: Any, doc: str) -> Any:
    def impl(x: Any) -> Any:
        return fn(convert(x))

    impl.__name__ = name
    impl.__doc__ = f"``keras.ops.{name}``: {doc}"
    return keras_op(cls, "linalg")(impl)


det = _unary("det", "Det", lambda x: tf().linalg.det(x), "the determinant.")
inv = _unary("inv", "Inv", lambda x: tf().linalg.inv(x), "the inverse.")
eigh = _unary("eigh", "Eigh", lambda x: tuple(tf().linalg.eigh(x)), "(eigenvalues, eigenvectors) of Hermitian x.")


@keras_op("Norm", "linalg")
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """``keras.ops.norm``: a vector norm over one axis, a matrix norm over two (NumPy's ``ord``s)."""
    t = tf()
    x = convert(x)
    ndim = len(x.shape)
    axis = tuple(range(ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    if any(a < -ndim or a >= ndim for a in axis):
        raise ValueError("All `axis` values must be in the range [-ndim, ndim). "
                         f"Received inputs with ndim={ndim}, while axis={axis}")
    x = t.cast(x, float_of(x))
    inf = float("inf")
    if len(axis) == 1:
        a = axis[0]
        if ord is None or ord == 2:
            return t.sqrt(t.reduce_sum(x * x, axis=a, keepdims=keepdims))
        if ord == inf:
            return t.reduce_max(t.abs(x), axis=a, keepdims=keepdims)
        if ord == -inf:
            return t.reduce_min(t.abs(x), axis=a, keepdims=keepdims)
        if ord == 0:
            return t.reduce_sum(t.cast(t.not_equal(x, 0), x.dtype), axis=a, keepdims=keepdims)
        if isinstance(ord, str):
            raise ValueError(f"Invalid `ord` argument for vector norm. Received: ord={ord}")
        p = t.cast(ord, x.dtype)
        return t.pow(t.reduce_sum(t.pow(t.abs(x), p), axis=a, keepdims=keepdims), 1.0 / p)
    if len(axis) != 2:
        raise ValueError(f"Invalid axis values. Received: axis={axis}")
    row, col = (a + ndim if a < 0 else a for a in axis)
    if ord is None or ord == "fro":
        return t.sqrt(t.reduce_sum(x * x, axis=list(axis), keepdims=keepdims))
    if ord in (1, -1, inf, -inf):
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        if not keepdims and outer > inner:
            outer -= 1
        reduce = t.reduce_max if ord in (1, inf) else t.reduce_min
        return reduce(t.reduce_sum(t.abs(x), axis=inner, keepdims=keepdims), axis=outer, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        perm = [d for d in range(ndim) if d not in (row, col)] + [row, col]
        s = t.linalg.svd(t.transpose(x, perm), compute_uv=False)
        out = {2: t.reduce_max, -2: t.reduce_min, "nuc": t.reduce_sum}[ord](s, axis=-1)
        if keepdims:
            out = t.expand_dims(t.expand_dims(out, axis[0]), axis[1])
        return out
    raise ValueError(f"Invalid `ord` argument for matrix norm. Received: ord={ord}")


@keras_op("Qr", "linalg")
def qr(x: Any, mode: str = "reduced") -> Any:
    """``keras.ops.qr``: (q, r), ``mode`` ``"reduced"`` or ``"complete"``."""
    if mode not in ("reduced", "complete"):
        raise ValueError("`mode` argument value not supported. Expected one of {'reduced', 'complete'}. "
                         f"Received: mode={mode}")
    return tuple(tf().linalg.qr(convert(x), full_matrices=mode == "complete"))


def _vector_rhs(fn: Any, a: Any, b: Any) -> Any:
    # TF's solvers take matrices: a vector b becomes a column and back
    t = tf()
    a, b = convert(a), convert(b)
    if len(b.shape) == len(a.shape) - 1:
        return t.squeeze(fn(a, t.expand_dims(b, -1)), axis=-1)
    return fn(a, b)


@keras_op("Solve", "linalg", tensors=2)
def solve(a: Any, b: Any) -> Any:
    """``keras.ops.solve``: x with a x = b (b a vector or matrices)."""
    return _vector_rhs(lambda a, b: tf().linalg.solve(a, b), a, b)


@keras_op("SolveTriangular", "linalg", tensors=2)
def solve_triangular(a: Any, b: Any, lower: bool = False) -> Any:
    """``keras.ops.solve_triangular``: x with a x = b for triangular a (upper unless ``lower``)."""
    return _vector_rhs(lambda a, b: tf().linalg.triangular_solve(a, b, lower=lower), a, b)


@keras_op("SVD", "linalg")
def svd(x: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """``keras.ops.svd``: (u, s, vh) as NumPy orders them, or s alone when ``compute_uv=False``."""
    t = tf()
    if not compute_uv:
        return t.linalg.svd(convert(x), full_matrices=full_matrices, compute_uv=False)
    s, u, v = t.linalg.svd(convert(x), full_matrices=full_matrices)
    return u, s, t.linalg.adjoint(v)


@keras_op("MatrixRank", "linalg")
def matrix_rank(x: Any, tol: Any = None) -> Any:
    """``keras.ops.matrix_rank``: the number of singular values above ``tol``."""
    return tf().linalg.matrix_rank(convert(x), tol=tol)


@keras_op("Pinv", "linalg")
def pinv(x: Any, rcond: Any = None) -> Any:
    """``keras.ops.pinv``: the Moore-Penrose pseudo-inverse."""
    return tf().linalg.pinv(convert(x), rcond=rcond)


_UNSUPPORTED = ("eig", "lu_factor", "lstsq", "jvp")


# ---- lu_factor, lstsq and jvp (kops11, issue 11), as Keras 3.15's TensorFlow backend computes them


@keras_op("LuFactor", "linalg")
def lu_factor(x: Any) -> tuple:
    """``keras.ops.lu_factor``: ``(lu, pivots)`` of a square matrix by partial pivoting (TF's ``Lu``:
    unit-diagonal L below, U on and above the diagonal; ``pivots`` the inverse of its row permutation),
    built from tapeflow ops so that it differentiates."""
    from tapeflow.framework.errors import InvalidArgumentError

    t = tf()
    x = convert(x)
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise ValueError(f"Expected input to have rank >= 2. Received input with shape {shape}.")
    if shape[-2] != shape[-1]:
        raise ValueError(f"LU decomposition failed: Expected a square matrix. Received non-square input with shape "
                         f"{shape}. LU decomposition is only supported for square matrices in Tensorflow.")
    name = x.dtype.name
    if name not in ("float16", "float32", "float64"):
        raise InvalidArgumentError(None, None, f"Value for attr 'T' of {name} is not in the list of allowed values: "
                                   "double, float, half, complex64, complex128")
    if len(shape) > 2:  # Keras inverts TF's batched permutations with invert_permutation, which takes one
        raise InvalidArgumentError(None, None, "invert_permutation expects a 1D vector.")
    n = shape[0]
    eye = t.eye(n, dtype=x.dtype)
    rows = t.eye(n, dtype=x.dtype)  # the row permutation so far, as a matrix
    a = x
    for k in range(n - 1):
        piv = t.argmax(t.abs(a[k:, k]), output_type="int32") + k
        ek, ep = t.one_hot(k, n, dtype=x.dtype), t.one_hot(piv, n, dtype=x.dtype)
        swap = eye - t.tensordot(ek - ep, ek - ep, axes=0)  # exchanges rows k and piv (identity if equal)
        a, rows = t.matmul(swap, a), t.matmul(swap, rows)
        low = t.math.divide_no_nan(a[k + 1:, k], a[k, k])
        rest = a[k + 1:, k + 1:] - t.tensordot(low, a[k, k + 1:], axes=0)
        a = t.concat([a[:k + 1], t.concat([a[k + 1:, :k], low[:, None], rest], axis=1)], axis=0)
    if t.executing_eagerly() and bool(t.reduce_any(t.equal(t.linalg.diag_part(a), 0)).numpy()):
        raise InvalidArgumentError(None, None, "Input is not invertible. [Op:Lu]")
    perm = t.argmax(rows, axis=1, output_type="int32")
    return a, t.math.invert_permutation(perm)


@keras_op("Lstsq", "linalg", tensors=2)
def lstsq(a: Any, b: Any, rcond: Any = None) -> Any:
    """``keras.ops.lstsq``: the least-squares solution x of ``a x = b`` (the smallest-norm one), through
    the SVD, singular values below ``rcond`` times the largest counted as zero."""
    import numpy as np

    t = tf()
    a, b = convert(a), convert(b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = len(b.shape) == 1
    if vector:
        b = b[:, None]
    if len(a.shape) != 2:
        raise TypeError(f"{len(a.shape)}-dimensional array given. Array must be two-dimensional")
    if len(b.shape) != 2:
        raise TypeError(f"{len(b.shape)}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    eps = float(np.finfo(a.dtype.name).eps)
    rcond = eps * max(n, m) if rcond is None else t.where(rcond < 0, eps, rcond)
    s, u, v = t.linalg.svd(a, full_matrices=False)
    mask = s >= t.cast(rcond, s.dtype) * s[0]
    s_inv = t.where(mask, 1 / t.where(mask, s, t.ones_like(s)), t.zeros_like(s))[:, None]
    x = t.matmul(v, s_inv * t.matmul(u, b, transpose_a=True))
    return t.reshape(x, [-1]) if vector else x


@keras_op("JVP", "linalg", tensors=3)
def jvp(fun: Any, primals: Any, tangents: Any, has_aux: bool = False) -> tuple:
    """``keras.ops.jvp``: ``(fun(*primals), J tangents)`` (and ``fun``'s auxiliary output with
    ``has_aux``), forward mode through ``tf.autodiff.ForwardAccumulator``."""
    from tapeflow.framework import nest

    t = tf()
    primal_flat = [convert(p) for p in nest.flatten(primals)]
    tangent_flat = [t.cast(convert(v), p.dtype) for v, p in zip(nest.flatten(tangents), primal_flat)]
    primals = nest.pack_sequence_as(primals, primal_flat)
    with t.autodiff.ForwardAccumulator(primal_flat, tangent_flat) as acc:
        if has_aux:
            out, aux = fun(*primals)
        else:
            out = fun(*primals)
        tangents_out = [acc.jvp(o) for o in nest.flatten(out)]
    tangents_out = nest.pack_sequence_as(out, tangents_out)
    return (out, tangents_out, aux) if has_aux else (out, tangents_out)
