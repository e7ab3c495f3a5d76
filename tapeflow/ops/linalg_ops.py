"""Linear algebra (``tf.linalg``): decompositions, solves, diagonals, norms.

Each op: ``defop`` (NumPy kernel + shape rule), ``defgrad`` (the standard
matrix-calculus rule, written with tapeflow ops so higher orders work), then
the public function. Everything batches over leading dimensions, as TF.

Composites (trace, norm, logdet, cholesky_solve, lstsq, pinv, clipping)
are built from the ops here and get their gradients for free.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.context import state
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops, threads
from tapeflow.ops._helpers import check_float, dtype_mismatch, scalar_int, t
from tapeflow.ops.registry import defgrad, defop


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


def _dims(shape: tuple) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _check_matrix(x: Tensor, op: str, square: bool = True) -> tuple:
    s = x._shape_tuple()
    if len(s) < 2:
        raise _err(op, f"Input must have rank >= 2, got shape {_dims(s)}; {op} works on (batches of) matrices")
    if square and s[-1] is not None and s[-2] is not None and s[-1] != s[-2]:
        raise _err(op, f"Input matrix must be square. (got shape {_dims(s)})")
    return s


def _lapack_work(x: Any) -> float:
    """About the multiply-adds of a decomposition or solve of ``x`` (batch x m x n x min(m, n))."""
    shape = getattr(x, "shape", ())
    return float(x.size) * min(shape[-2:]) if len(shape) >= 2 else 0.0


def _lapack(kernel):
    """Wraps a kernel that calls LAPACK (np.linalg), which has no float16:
    half inputs are computed in float32 and the results cast back, as TF's
    half kernels do internally. The BLAS gets the thread count the kernel's size and the
    machine's load call for (threads.before_blas), as a matmul does: LAPACK's blocked
    factorizations on OpenBLAS's default threads beside a busy neighbour ran 10-80x slower."""

    def run(*arrays, **attrs):
        threads.before_blas(_lapack_work(arrays[0]) if arrays else 0.0)
        if not any(getattr(a, "dtype", None) == np.float16 for a in arrays):
            return kernel(*arrays, **attrs)
        outs = kernel(*[a.astype(np.float32) if getattr(a, "dtype", None) == np.float16 else a for a in arrays],
                      **attrs)
        if isinstance(outs, tuple):
            return tuple(o.astype(np.float16) if o.dtype == np.float32 else o for o in outs)
        return outs.astype(np.float16)

    return run


def _float_input(x: Any, op: str) -> Tensor:
    x = t(x)
    check_float(x, op)
    _no_complex(x, op)
    return x


def _no_complex(x: Tensor, op: str) -> None:
    if x._value.dtype.kind == "c":
        raise NotImplementedError(f"{op} of complex matrices ({x.dtype.name}) is not implemented in tapeflow: its "
                                  "gradients would need conjugate transposes; use float32/float64")


def _pair(a: Any, b: Any, op: str) -> tuple[Tensor, Tensor]:
    a = t(a)
    b = b if isinstance(b, Tensor) else convert_to_tensor(b, dtype_hint=a.dtype)
    check_float(a, op)
    _no_complex(a, op)
    if a._value.dtype != b._value.dtype:
        raise dtype_mismatch(op, a, b)
    return a, b


def _batch(s: tuple) -> tuple:
    return tuple(s[:-2])


def _same_batch(op: str, sa: tuple, sb: tuple) -> None:
    # MatrixSolve-style ops need equal batch shapes (no broadcasting), as TF.
    ba, bb = _batch(sa), _batch(sb)
    if len(ba) != len(bb) or any(x is not None and y is not None and x != y for x, y in zip(ba, bb)):
        raise _err(op, f"Input matrix and right-hand side must have the same batch shape, got matrix "
                   f"{_dims(sa)} and rhs {_dims(sb)}; tile or reshape one of them")


def matrix_transpose(a: Any, name: str | None = None, conjugate: bool = False) -> Tensor:
    """Transposes the last two dimensions (``tf.linalg.matrix_transpose``)."""
    x = t(a)
    nd = len(x._shape_tuple())
    if nd < 2:
        raise ValueError(f"Argument 'a' should be a (batch) matrix with rank >= 2.  Received: {x.shape}")
    perm = list(range(nd - 2)) + [nd - 1, nd - 2]
    return array_ops.transpose(x, perm, conjugate=conjugate)


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """Conjugate transpose of the last two dimensions; for real dtypes, the transpose."""
    return matrix_transpose(matrix, conjugate=True)


_mt = matrix_transpose


def _eye_like(x: Tensor) -> Tensor:
    """Identity matrices shaped like the (square) batch of matrices ``x``.

    Built with ops (not ``tf.eye``) so unknown batch dims work in graphs."""
    return set_diag(array_ops.zeros_like(x), array_ops.ones_like(diag_part(x)))


def _safe_reciprocal(x: Tensor, eps: float = 1e-20) -> Tensor:
    # x / (x^2 + eps): 1/x away from 0, and 0 (not inf) at exact ties.
    return math_ops.divide_(x, math_ops.add(math_ops.multiply(x, x), eps))


def _expand2(x: Tensor) -> Tensor:
    """Adds two trailing unit axes (per-matrix scalars → broadcastable)."""
    return array_ops.expand_dims(array_ops.expand_dims(x, -1), -1)


# ----------------------------------------------------------------------------
# Diagonals and bands
# ----------------------------------------------------------------------------

def _diag_len(m: int, n: int, k: int) -> int:
    return max(0, min(m + min(k, 0), n - max(k, 0)))


def _diag_index(m: int, n: int, k: int) -> tuple:
    length = _diag_len(m, n, k)
    i = np.arange(length)
    return i + max(-k, 0), i + max(k, 0)


def _matrix_diag_kernel(d, k, num_rows, num_cols, padding_value):
    out = np.full(d.shape[:-1] + (num_rows, num_cols), padding_value, dtype=d.dtype)
    r, c = _diag_index(num_rows, num_cols, k)
    out[..., r, c] = d[..., : len(r)]
    return out


def _matrix_diag_shape(specs, k, num_rows, num_cols, padding_value):
    s, dt = specs[0]
    return [(None if s is None else tuple(s[:-1]) + (num_rows, num_cols), dt)]


MATRIX_DIAG = defop("MatrixDiagV3", _matrix_diag_kernel, shape=_matrix_diag_shape)


@defgrad("MatrixDiagV3", inputs=False)
def _matrix_diag_grad(op, g):
    return diag_part(g, k=op.get_attr("k"))


def _int_attr(v: Any, what: str) -> int:
    if isinstance(v, Tensor):
        v = v.numpy()
    arr = np.asarray(v)
    if arr.size != 1 or arr.dtype.kind not in "iu":
        raise NotImplementedError(
            f"{what}={v!r}: tapeflow supports a single integer diagonal offset here; "
            "bands of diagonals (a pair k=(lo, hi)) are not implemented yet")
    return int(arr.reshape(()))


def diag(diagonal: Any, name: str | None = None, k: Any = 0, num_rows: Any = -1, num_cols: Any = -1,
         padding_value: Any = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """Batched diagonal matrices with ``diagonal`` on the ``k``-th diagonal (``tf.linalg.diag``)."""
    d = t(diagonal)
    if d.dtype is dtypes.string:
        raise TypeError("tf.linalg.diag: cannot build a matrix of strings (Cannot convert 0 to EagerTensor of "
                        "dtype string)")
    k = _int_attr(k, "k")
    s = d._shape_tuple()
    if len(s) < 1:
        raise _err("MatrixDiagV3", f"diagonal must be at least 1-dim, received shape {_dims(s)}")
    n = s[-1]
    if n is None:
        pad0 = not isinstance(padding_value, Tensor) and np.all(np.asarray(padding_value) == 0)
        if int(num_rows) != -1 or int(num_cols) != -1 or not pad0:
            raise NotImplementedError("tf.linalg.diag of a diagonal with an unknown length is implemented only for "
                                      "the default num_rows/num_cols and padding_value=0")
        # The diagonal on an identity of its run-time length; k != 0 pads |k|
        # zero rows and columns around it to move it off the main diagonal.
        from tapeflow.ops import indexing_ops, shape_ops

        n_t = shape_ops.shape_of(d)[-1]
        eye = shape_ops.eye_dynamic(n_t, n_t, None, dtypes.bool)
        out = math_ops.where(eye, array_ops.expand_dims(d, -1), array_ops.zeros_like(d[..., :1, None]))
        if k:
            batch = [[0, 0]] * (len(s) - 1)
            out = indexing_ops.pad(out, batch + ([[0, k], [k, 0]] if k > 0 else [[-k, 0], [0, -k]]))
        return out
    num_rows, num_cols = int(num_rows), int(num_cols)
    min_rows, min_cols = n + max(-k, 0), n + max(k, 0)
    if num_rows == -1 and num_cols == -1:
        num_rows, num_cols = max(min_rows, min_cols), max(min_rows, min_cols)
    elif num_rows == -1:
        num_rows = min_rows
    elif num_cols == -1:
        num_cols = min_cols
    if _diag_len(num_rows, num_cols, k) != n:
        raise _err("MatrixDiagV3", f"The number of diagonals provided in the input does not match num_rows and "
                   f"num_cols: diagonal of length {n} at k={k} does not fit a {num_rows}x{num_cols} matrix")
    pad = np.asarray(padding_value.numpy() if isinstance(padding_value, Tensor) else padding_value)
    return execute(MATRIX_DIAG, (d,), {"k": k, "num_rows": num_rows, "num_cols": num_cols,
                                       "padding_value": pad.astype(d._value.dtype)[()]})


def _diag_part_kernel(x, k):
    return np.diagonal(x, offset=k, axis1=-2, axis2=-1).copy()


def _diag_part_shape(specs, k):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    m, n = s[-2], s[-1]
    length = None if m is None or n is None else _diag_len(m, n, k)
    return [(tuple(s[:-2]) + (length,), dt)]


MATRIX_DIAG_PART = defop("MatrixDiagPartV3", _diag_part_kernel, shape=_diag_part_shape)


@defgrad("MatrixDiagPartV3", inputs=True)
def _diag_part_grad(op, g):
    s = op.input_shapes[0]
    k = op.get_attr("k")
    if s[-2] is None or s[-1] is None:  # traced with unknown matrix dims
        return set_diag(array_ops.zeros_like(op.inputs[0]), g, k=k)
    return diag(g, k=k, num_rows=s[-2], num_cols=s[-1])


def diag_part(input: Any, name: str | None = None, k: Any = 0, padding_value: Any = 0,  # noqa: A002
              align: str = "RIGHT_LEFT") -> Tensor:
    """The ``k``-th diagonal of each matrix (``tf.linalg.diag_part``)."""
    x = t(input)
    k = _int_attr(k, "k")
    s = _check_matrix(x, "MatrixDiagPartV3", square=False)
    m, n = s[-2], s[-1]
    if m is not None and n is not None and not (-m < k < n or (k == 0)):
        raise _err("MatrixDiagPartV3", f"lower_diag_index is out of bound: {k}. It must be between {-m} and {n} "
                   f"(exclusive) for a matrix of shape {_dims(s)}")
    return execute(MATRIX_DIAG_PART, (x,), {"k": k})


def _set_diag_kernel(x, d, k):
    out = x.copy()
    r, c = _diag_index(x.shape[-2], x.shape[-1], k)
    out[..., r, c] = d
    return out


def _set_diag_shape(specs, k):
    return [specs[0]]


MATRIX_SET_DIAG = defop("MatrixSetDiagV3", _set_diag_kernel, shape=_set_diag_shape)


@defgrad("MatrixSetDiagV3", inputs=False)
def _set_diag_grad(op, g):
    k = op.get_attr("k")
    dpart = diag_part(g, k=k)
    return set_diag(g, array_ops.zeros_like(dpart), k=k), dpart


def set_diag(input: Any, diagonal: Any, name: str | None = None, k: Any = 0,  # noqa: A002
             align: str = "RIGHT_LEFT") -> Tensor:
    """Replaces the ``k``-th diagonal of each matrix (``tf.linalg.set_diag``)."""
    x, d = _pair_any(input, diagonal, "MatrixSetDiagV3")
    k = _int_attr(k, "k")
    s = _check_matrix(x, "MatrixSetDiagV3", square=False)
    sd = d._shape_tuple()
    if None not in s:
        want = tuple(s[:-2]) + (_diag_len(s[-2], s[-1], k),)
        if None not in sd and tuple(sd) != want:
            raise _err("MatrixSetDiagV3", f"diagonal must have shape {_dims(want)} to match input of shape "
                       f"{_dims(s)} at k={k}, but received diagonal of shape {_dims(sd)}")
    return execute(MATRIX_SET_DIAG, (x, d), {"k": k})


def _pair_any(a: Any, b: Any, op: str) -> tuple[Tensor, Tensor]:
    a = t(a)
    b = b if isinstance(b, Tensor) else convert_to_tensor(b, dtype_hint=a.dtype)
    if a._value.dtype != b._value.dtype:
        raise dtype_mismatch(op, a, b)
    return a, b


def _band_part_kernel(x, num_lower, num_upper):
    m, n = x.shape[-2], x.shape[-1]
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    keep = np.ones((m, n), dtype=bool)
    if num_lower >= 0:
        keep &= (i - j) <= num_lower
    if num_upper >= 0:
        keep &= (j - i) <= num_upper
    return np.where(keep, x, np.zeros((), dtype=x.dtype))


MATRIX_BAND_PART = defop("MatrixBandPart", _band_part_kernel,
                         shape=lambda specs, num_lower, num_upper: [specs[0]])


@defgrad("MatrixBandPart", inputs=False)
def _band_part_grad(op, g):
    return band_part(g, op.get_attr("num_lower"), op.get_attr("num_upper"))


def band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Keeps ``num_lower`` sub- and ``num_upper`` super-diagonals (negative: all); zeros the rest."""
    x = t(input)
    s = _check_matrix(x, "MatrixBandPart", square=False)
    lo = scalar_int(num_lower, "num_lower", "MatrixBandPart")
    hi = scalar_int(num_upper, "num_upper", "MatrixBandPart")
    for v, what, dim, name in ((lo, "num_lower", s[-2], "rows"), (hi, "num_upper", s[-1], "columns")):
        if dim is not None and v > dim:
            raise _err("MatrixBandPart", f"{what} must be negative or less or equal to number of {name} ({dim}) "
                       f"got: {v}")
    return execute(MATRIX_BAND_PART, (x,), {"num_lower": lo, "num_upper": hi})


def trace(x: Any, name: str | None = None) -> Tensor:
    """Sum of the main diagonal of each matrix (``tf.linalg.trace``)."""
    return math_ops.reduce_sum(diag_part(x), axis=-1)


# ----------------------------------------------------------------------------
# Inverse and determinants
# ----------------------------------------------------------------------------

_UNBLOCKED_LU = 16  # Eigen's PartialPivLU factors matrices up to this size unblocked


def _eigen_lu(a: np.ndarray) -> tuple:
    """Eigen's unblocked partial-pivoting LU (what TF's MatrixInverse and
    determinants run for n <= 16), batched over the leading axes: the diagonal
    of U and the permutation's sign. Dividing by the pivot (LAPACK multiplies by
    its reciprocal) makes exactly singular inputs give an exact zero pivot, as TF.
    """
    n = a.shape[-1]
    lu = np.array(a.reshape(-1, n, n), copy=True)
    rows = np.arange(lu.shape[0])
    sign = np.ones(lu.shape[0], dtype=a.dtype)
    with np.errstate(all="ignore"):
        for k in range(n):
            p = np.argmax(np.abs(lu[:, k:, k]), axis=1) + k
            swap = p != k
            if swap.any():
                rk, rp = lu[rows, k].copy(), lu[rows, p].copy()
                lu[rows, k], lu[rows, p] = np.where(swap[:, None], rp, rk), np.where(swap[:, None], rk, rp)
                sign = np.where(swap, -sign, sign)
            piv = lu[:, k, k]
            nz = piv != 0  # a zero pivot column is left as is (Eigen records it and goes on)
            lu[:, k + 1:, k] = np.where(nz[:, None], lu[:, k + 1:, k] / np.where(nz, piv, 1)[:, None],
                                        lu[:, k + 1:, k])
            lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k, None] * lu[:, k, None, k + 1:]
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    return diag.reshape(a.shape[:-1]), sign.reshape(a.shape[:-2])


def _not_invertible(x: np.ndarray) -> InvalidArgumentError:
    return _err("MatrixInverse", f"Input is not invertible. (a matrix of the batch of shape {list(x.shape)} "
                "is singular; use tf.linalg.pinv for a pseudo-inverse)")


def _inverse_kernel(x, adjoint):
    if x.shape[-1] == 0:
        return x.copy()
    if adjoint:  # TF factors the adjoint itself (its zero pivots are not those of x)
        x = np.swapaxes(x, -1, -2)
    if np.isnan(x).any():  # LAPACK would return NaNs; TF's pivot check rejects them
        raise _not_invertible(x)
    if x.shape[-1] <= _UNBLOCKED_LU and not (np.abs(_eigen_lu(x)[0]).min(axis=-1) > 0).all():
        raise _not_invertible(x)
    try:
        return np.linalg.inv(x)
    except np.linalg.LinAlgError:
        if x.shape[-1] > _UNBLOCKED_LU:
            raise _not_invertible(x) from None
        # LAPACK's rounding found a zero pivot where Eigen's did not: TF inverts it.
        return np.linalg.pinv(x.astype(np.float64)).astype(x.dtype)


def _square_same(specs, **attrs):
    return [specs[0]]


MATRIX_INVERSE = defop("MatrixInverse", _lapack(_inverse_kernel), shape=_square_same)


@defgrad("MatrixInverse", inputs=False, outputs=True)
def _inverse_grad(op, g):
    y = op.outputs[0]
    if op.get_attr("adjoint"):
        # y = inv(a)^T: d<g, y> = -<y g^T y, da>
        return math_ops.negative(math_ops.matmul(y, math_ops.matmul(g, y, transpose_a=True)))
    return math_ops.negative(math_ops.matmul(y, math_ops.matmul(g, y, transpose_b=True), transpose_a=True))


def inv(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """Inverse of each square matrix; a singular one raises ``InvalidArgumentError``."""
    x = _float_input(input, "MatrixInverse")
    _check_matrix(x, "MatrixInverse")
    return execute(MATRIX_INVERSE, (x,), {"adjoint": bool(adjoint)})


def _batch_shape_rule(specs, **attrs):
    s, dt = specs[0]
    return [(None if s is None else tuple(s[:-2]), dt)]


def _det_kernel(x):
    n = x.shape[-1]
    if n == 0 or n > _UNBLOCKED_LU:
        return np.asarray(np.linalg.det(x), dtype=x.dtype)
    diag, sign = _eigen_lu(x)  # as TF: the product of the LU pivots (exactly 0 for an exact zero pivot)
    with np.errstate(all="ignore"):
        return np.asarray(sign * np.prod(diag, axis=-1), dtype=x.dtype)


MATRIX_DETERMINANT = defop("MatrixDeterminant", _lapack(_det_kernel), shape=_batch_shape_rule)


@defgrad("MatrixDeterminant", inputs=True, outputs=True)
def _det_grad(op, g):
    a, det = op.inputs[0], op.outputs[0]
    return math_ops.multiply(_expand2(math_ops.multiply(g, det)), inv(a, adjoint=True))


def det(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Determinant of each square matrix (``tf.linalg.det``)."""
    x = _float_input(input, "MatrixDeterminant")
    _check_matrix(x, "MatrixDeterminant")
    return execute(MATRIX_DETERMINANT, (x,))


def _slogdet_kernel(x):
    n = x.shape[-1]
    if n == 0 or n > _UNBLOCKED_LU:
        sign, logabs = np.linalg.slogdet(x)
    else:  # TF's SLogDet over Eigen's LU pivots
        diag, sign = _eigen_lu(x)
        with np.errstate(all="ignore"):
            absd = np.abs(diag)
            logabs = np.sum(np.log(absd), axis=-1)
            sign = sign * np.prod(diag / absd, axis=-1)
    # TF: a non-finite log|det| (a zero pivot, NaN) gives sign 0 and log|det| = +-inf
    bad = ~np.isfinite(logabs)
    sign = np.where(bad, 0, sign)
    logabs = np.where(bad, np.where(logabs > 0, np.inf, -np.inf), logabs)
    return np.asarray(sign, dtype=x.dtype), np.asarray(logabs, dtype=x.dtype)


LOG_MATRIX_DETERMINANT = defop("LogMatrixDeterminant", _lapack(_slogdet_kernel),
                               shape=lambda specs: _batch_shape_rule(specs) * 2, num_outputs=2)


@defgrad("LogMatrixDeterminant", inputs=True)
def _slogdet_grad(op, g_sign, g_logabs):
    # The sign is piecewise constant: only log|det| carries a gradient.
    return math_ops.multiply(_expand2(g_logabs), inv(op.inputs[0], adjoint=True))


def slogdet(input: Any, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``(sign, log|det|)`` of each square matrix (``tf.linalg.slogdet``)."""
    x = _float_input(input, "LogMatrixDeterminant")
    _check_matrix(x, "LogMatrixDeterminant")
    sign, logabs = execute(LOG_MATRIX_DETERMINANT, (x,))
    return sign, logabs


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """log(det(matrix)) of Hermitian positive-definite matrices, via Cholesky (as TF)."""
    chol = cholesky(matrix)
    return math_ops.multiply(2.0, math_ops.reduce_sum(math_ops.log(diag_part(chol)), axis=-1))


# ----------------------------------------------------------------------------
# Solves
# ----------------------------------------------------------------------------

def _solve_kernel(a, b, adjoint):
    if adjoint:
        a = np.swapaxes(a, -1, -2)
    try:
        if 0 < a.shape[-1] <= _UNBLOCKED_LU and not (np.abs(_eigen_lu(a)[0]).min(axis=-1) > 0).all():
            raise np.linalg.LinAlgError  # an exact zero pivot of TF's LU (LAPACK's rounding may miss it)
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise _err("MatrixSolve", f"Input matrix is not invertible. (matrix of the batch of shape "
                   f"{list(a.shape)} is singular; use tf.linalg.lstsq for a least-squares solution)") from None


def _rhs_shape(specs, **attrs):
    return [specs[1]]


MATRIX_SOLVE = defop("MatrixSolve", _lapack(_solve_kernel), shape=_rhs_shape)


@defgrad("MatrixSolve", inputs=True, outputs=True)
def _solve_grad(op, g):
    a, c = op.inputs[0], op.outputs[0]
    adj = op.get_attr("adjoint")
    gb = solve(a, g, adjoint=not adj)
    if adj:
        return math_ops.negative(math_ops.matmul(c, gb, transpose_b=True)), gb
    return math_ops.negative(math_ops.matmul(gb, c, transpose_b=True)), gb


def _check_rhs(op: str, a: Tensor, b: Tensor) -> None:
    sa = _check_matrix(a, op)
    sb = b._shape_tuple()
    if len(sb) < 2:
        raise _err(op, f"rhs must have rank >= 2 (shape [..., M, K]), got shape {_dims(sb)}; "
                   "add a trailing axis with tf.expand_dims(rhs, -1)")
    if sa[-1] is not None and sb[-2] is not None and sa[-1] != sb[-2]:
        raise _err(op, f"Input matrix and right-hand side must have the same number of rows: matrix "
                   f"{_dims(sa)} vs rhs {_dims(sb)}")


def solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """Solves ``matrix @ x = rhs`` (or ``adjoint(matrix) @ x = rhs``) per batch member."""
    a, b = _pair(matrix, rhs, "MatrixSolve")
    _check_rhs("MatrixSolve", a, b)
    _same_batch("MatrixSolve", a._shape_tuple(), b._shape_tuple())
    return execute(MATRIX_SOLVE, (a, b), {"adjoint": bool(adjoint)})


def _substitute(a, b, lower):
    # Row-by-row substitution: used only when LAPACK refuses a singular
    # triangle, so that (as TF) a zero pivot yields inf/nan instead of an error.
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype=np.result_type(a, b))
    rows = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in rows:
            acc = np.einsum("...j,...jk->...k", a[..., i, :], x)
            x[..., i, :] = (b[..., i, :] - acc) / a[..., i, i][..., None]
    return x


def _triangular_solve_kernel(a, b, lower, adjoint):
    tri = np.tril(a) if lower else np.triu(a)
    eff_lower = lower
    if adjoint:
        tri = np.swapaxes(tri, -1, -2)
        eff_lower = not lower
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return np.linalg.solve(np.broadcast_to(tri, batch + tri.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))
    except np.linalg.LinAlgError:
        return _substitute(tri, b, eff_lower)


def _tri_shape(specs, **attrs):
    from tapeflow.ops import shapes

    (sa, dt), (sb, _) = specs
    if sa is None or sb is None:
        return [(None, dt)]
    return [(tuple(shapes.broadcast_shape(sa[:-2], sb[:-2], "MatrixTriangularSolve")) + tuple(sb[-2:]), dt)]


MATRIX_TRIANGULAR_SOLVE = defop("MatrixTriangularSolve", _lapack(_triangular_solve_kernel), shape=_tri_shape)


@defgrad("MatrixTriangularSolve", inputs=True, outputs=True)
def _triangular_solve_grad(op, g):
    a, c = op.inputs[0], op.outputs[0]
    lower, adj = op.get_attr("lower"), op.get_attr("adjoint")
    gb = triangular_solve(a, g, lower=lower, adjoint=not adj)
    if adj:
        ga = math_ops.negative(math_ops.matmul(c, gb, transpose_b=True))
    else:
        ga = math_ops.negative(math_ops.matmul(gb, c, transpose_b=True))
    ga = band_part(ga, -1, 0) if lower else band_part(ga, 0, -1)
    return ga, gb


def triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                     name: str | None = None) -> Tensor:
    """Solves with the lower (or upper) triangle of ``matrix``; the other triangle is ignored.

    Batch dimensions broadcast, as TF's ``MatrixTriangularSolve``.
    """
    a, b = _pair(matrix, rhs, "MatrixTriangularSolve")
    _check_rhs("MatrixTriangularSolve", a, b)
    return execute(MATRIX_TRIANGULAR_SOLVE, (a, b), {"lower": bool(lower), "adjoint": bool(adjoint)})


# ----------------------------------------------------------------------------
# Cholesky
# ----------------------------------------------------------------------------

def _cholesky_kernel(x):
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        pass
    # As TF 2.x on CPU: a matrix that is not positive definite does not raise;
    # its factor comes back with NaN in the lower triangle (zeros above).
    flat = x.reshape((-1,) + x.shape[-2:])
    out = np.zeros_like(flat)
    nan_lower = np.tril(np.full(x.shape[-2:], np.nan, dtype=x.dtype))
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[i] = nan_lower
    return out.reshape(x.shape)


CHOLESKY = defop("Cholesky", _lapack(_cholesky_kernel), shape=_square_same)


@defgrad("Cholesky", inputs=False, outputs=True)
def _cholesky_grad(op, g):
    # grad_a = sym(L^-T Φ(L^T g) L^-1), Φ = lower triangle with halved diagonal.
    chol = op.outputs[0]
    l_inv = triangular_solve(chol, _eye_like(chol), lower=True)
    middle = math_ops.matmul(chol, g, transpose_a=True)
    middle = set_diag(middle, math_ops.multiply(0.5, diag_part(middle)))
    middle = band_part(middle, -1, 0)
    ga = math_ops.matmul(math_ops.matmul(l_inv, middle, transpose_a=True), l_inv)
    return math_ops.multiply(math_ops.add(ga, _mt(ga)), 0.5)


def cholesky(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Lower Cholesky factor of each symmetric positive-definite matrix (reads the lower triangle).

    As TF 2.x on CPU, a matrix that is not positive definite gives NaNs in
    its factor rather than an error; check with ``tf.debugging`` if needed.
    """
    x = _float_input(input, "Cholesky")
    _check_matrix(x, "Cholesky")
    return execute(CHOLESKY, (x,))


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """Solves ``A x = rhs`` given ``chol = cholesky(A)`` (``tf.linalg.cholesky_solve``)."""
    y = triangular_solve(chol, rhs, lower=True, adjoint=False)
    return triangular_solve(chol, y, lower=True, adjoint=True)


# ----------------------------------------------------------------------------
# QR, SVD, eigh
# ----------------------------------------------------------------------------

def _qr_kernel(x, full_matrices):
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return q, r


def _qr_shape(specs, full_matrices):
    s, dt = specs[0]
    if s is None:
        return [(None, dt), (None, dt)]
    m, n = s[-2], s[-1]
    b = tuple(s[:-2])
    k = None if m is None or n is None else min(m, n)
    if full_matrices:
        return [(b + (m, m), dt), (b + (m, n), dt)]
    return [(b + (m, k), dt), (b + (k, n), dt)]


QR = defop("Qr", _lapack(_qr_kernel), shape=_qr_shape, num_outputs=2)


def _solve_right_upper(x: Tensor, r: Tensor) -> Tensor:
    """x @ inv(r)^T for upper-triangular r, via a triangular solve."""
    return _mt(triangular_solve(r, _mt(x), lower=False, adjoint=False))


def _qr_grad_deep(q, r, dq, dr):
    # m >= n, reduced QR (arXiv:2009.10071).
    qdq = math_ops.matmul(q, dq, transpose_a=True)
    qdq_ = math_ops.subtract(qdq, _mt(qdq))
    rdr = math_ops.matmul(r, dr, transpose_b=True)
    rdr_ = math_ops.subtract(rdr, _mt(rdr))
    tril = band_part(math_ops.add(qdq_, rdr_), -1, 0)
    ga = math_ops.matmul(q, math_ops.add(dr, _solve_right_upper(tril, r)))
    gb = _solve_right_upper(math_ops.subtract(dq, math_ops.matmul(q, qdq)), r)
    return math_ops.add(ga, gb)


@defgrad("Qr", inputs=True, outputs=True)
def _qr_grad(op, dq, dr):
    q, r = op.outputs
    sq, sr = q._shape_tuple(), r._shape_tuple()
    m, n = sr[-2], sr[-1]
    if m is None or n is None:
        raise NotImplementedError(f"QrGrad not implemented with dynamic shapes (r has shape {_dims(sr)})")
    if m > n and sq[-1] == sq[-2]:
        raise NotImplementedError(f"QrGrad not implemented when nrows > ncols and full_matrices is true "
                                  f"(r has shape {_dims(sr)}); use full_matrices=False")
    if m >= n:
        return _qr_grad_deep(q, r, dq, dr)
    # Wide: a = [x | y], r = [u | v]; reduce to the square case for x.
    a = op.inputs[0]
    y = a[..., :, m:]
    u = r[..., :, :m]
    dv = dr[..., :, m:]
    du = dr[..., :, :m]
    dy = math_ops.matmul(q, dv)
    dx = _qr_grad_deep(q, u, math_ops.add(dq, math_ops.matmul(y, dv, transpose_b=True)), du)
    return array_ops.concat([dx, dy], axis=-1)


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """QR decomposition ``(q, r)`` of each matrix (``tf.linalg.qr``)."""
    x = _float_input(input, "Qr")
    _check_matrix(x, "Qr", square=False)
    q, r = execute(QR, (x,), {"full_matrices": bool(full_matrices)})
    return q, r


def _svd_kernel(x, full_matrices, compute_uv):
    try:
        return _svd_lapack(x, full_matrices, compute_uv)
    except np.linalg.LinAlgError:
        # As TF: a failed decomposition (e.g. NaN input) gives NaN outputs.
        shapes = _svd_shape([(x.shape, x.dtype)], full_matrices, compute_uv)
        return tuple(np.full(sh, np.nan, dtype=x.dtype) for sh, _ in shapes)


def _svd_lapack(x, full_matrices, compute_uv):
    if not compute_uv:
        s = np.linalg.svd(x, compute_uv=False)
        empty = np.zeros(x.shape[:-2] + (0,), dtype=x.dtype)  # u, v not computed
        return s.astype(x.dtype), empty, empty
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return s.astype(x.dtype), u, np.swapaxes(vh, -1, -2).copy()


def _svd_shape(specs, full_matrices, compute_uv):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)] * 3
    m, n = s[-2], s[-1]
    b = tuple(s[:-2])
    k = None if m is None or n is None else min(m, n)
    if not compute_uv:
        return [(b + (k,), dt), (b + (0,), dt), (b + (0,), dt)]
    if full_matrices:
        return [(b + (k,), dt), (b + (m, m), dt), (b + (n, n), dt)]
    return [(b + (k,), dt), (b + (m, k), dt), (b + (n, k), dt)]


SVD = defop("Svd", _lapack(_svd_kernel), shape=_svd_shape, num_outputs=3)


@defgrad("Svd", inputs=True, outputs=True)
def _svd_grad(op, gs, gu, gv):
    a = op.inputs[0]
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True)
        return math_ops.matmul(u, math_ops.matmul(diag(gs), v, transpose_b=True))
    full = op.get_attr("full_matrices")
    sa = a._shape_tuple()
    m, n = sa[-2], sa[-1]
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with unknown inner matrix shape")
    gs_mat = diag(gs)
    s, u, v = op.outputs
    transposed = m > n
    if transposed:  # differentiate a^T = v s u^T, transpose at the end
        m, n = n, m
        u, v = v, u
        gu, gv = gv, gu
    if full and n - m > 1:
        raise NotImplementedError(f"svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True "
                                  f"(input shape {_dims(sa)}); use full_matrices=False")
    s_mat = diag(s)
    s2 = math_ops.square(s)
    f = set_diag(_safe_reciprocal(math_ops.subtract(array_ops.expand_dims(s2, -2), array_ops.expand_dims(s2, -1))),
                 array_ops.zeros_like(s))
    v1 = v[..., :, :m]
    gv1 = gv[..., :, :m]
    f_u = math_ops.multiply(f, math_ops.matmul(u, gu, transpose_a=True))
    f_v = math_ops.multiply(f, math_ops.matmul(v1, gv1, transpose_a=True))
    inner = math_ops.add(math_ops.add(gs_mat, math_ops.matmul(math_ops.add(f_u, _mt(f_u)), s_mat)),
                         math_ops.matmul(s_mat, math_ops.add(f_v, _mt(f_v))))
    ga = math_ops.matmul(u, math_ops.matmul(inner, v1, transpose_b=True))
    if m != n:
        gv1t = _mt(gv1)
        rest = math_ops.subtract(gv1t, math_ops.matmul(math_ops.matmul(gv1t, v1), v1, transpose_b=True))
        if full:
            v2 = v[..., :, m:n]
            gv2 = gv[..., :, m:n]
            rest = math_ops.subtract(rest, math_ops.matmul(math_ops.matmul(v1, gv2, transpose_a=True), v2,
                                                           transpose_b=True))
        u_s_inv = math_ops.matmul(u, diag(_safe_reciprocal(s)))
        ga = math_ops.add(ga, math_ops.matmul(u_s_inv, rest))
    return _mt(ga) if transposed else ga


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True, name: str | None = None) -> Any:
    """Singular values ``s`` (descending) and, with ``compute_uv``, ``(s, u, v)``.

    As TF: ``a = u @ diag(s) @ transpose(v)`` — ``v`` is returned *not*
    transposed (NumPy returns ``vh``). Singular vectors are unique only up
    to sign; gradients are right for losses that do not depend on it.

    >>> s, u, v = tf.linalg.svd(tf.constant([[3.0, 0.0], [0.0, 2.0]]))
    >>> s.numpy().tolist()
    [3.0, 2.0]
    """
    x = _float_input(tensor, "Svd")
    _check_matrix(x, "Svd", square=False)
    s, u, v = execute(SVD, (x,), {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)})
    if not compute_uv:
        return s
    return s, u, v


def _eigh_kernel(x, compute_v):
    if not np.isfinite(x).all():
        raise _err("SelfAdjointEigV2", f"Self-adjoint eigen decomposition was not successful. The input might not be "
                   f"valid. (a matrix of the batch of shape {list(x.shape)} has NaN or inf entries)")
    if not compute_v:
        e = np.linalg.eigvalsh(x)
        return e, np.zeros(x.shape[:-2] + (0,), dtype=x.dtype)  # v not computed
    e, v = np.linalg.eigh(x)
    return e, v


def _eigh_shape(specs, compute_v):
    s, dt = specs[0]
    if s is None:
        return [(None, dt), (None, dt)]
    return [(tuple(s[:-1]), dt), (tuple(s) if compute_v else tuple(s[:-2]) + (0,), dt)]


SELF_ADJOINT_EIG = defop("SelfAdjointEigV2", _lapack(_eigh_kernel), shape=_eigh_shape, num_outputs=2)


@defgrad("SelfAdjointEigV2", inputs=True, outputs=True)
def _eigh_grad(op, ge, gv):
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        # f[i, j] = 1 / (e_j - e_i) off the diagonal (inf/nan at repeated eigenvalues, as TF)
        f = set_diag(_safe_reciprocal(math_ops.subtract(array_ops.expand_dims(e, -2), array_ops.expand_dims(e, -1))),
                     array_ops.zeros_like(e))
        inner = math_ops.add(diag(ge), math_ops.multiply(f, math_ops.matmul(v, gv, transpose_a=True)))
    else:
        _, v = eigh(op.inputs[0])
        inner = diag(ge)
    ga = math_ops.matmul(v, math_ops.matmul(inner, v, transpose_b=True))
    # The kernel reads only the lower triangle: symmetrize into it.
    ga = band_part(math_ops.add(ga, _mt(ga)), -1, 0)
    return set_diag(ga, math_ops.multiply(0.5, diag_part(ga)))


def eigh(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and eigenvectors (columns) of self-adjoint matrices.

    Only the lower triangle is read, as TF. Eigenvector signs are
    arbitrary; gradients need distinct eigenvalues.

    >>> e, v = tf.linalg.eigh(tf.constant([[2.0, 0.0], [0.0, 1.0]]))
    >>> e.numpy().tolist()
    [1.0, 2.0]
    """
    x = _float_input(tensor, "SelfAdjointEigV2")
    _check_matrix(x, "SelfAdjointEigV2")
    e, v = execute(SELF_ADJOINT_EIG, (x,), {"compute_v": True})
    return e, v


def eigvalsh(tensor: Any, name: str | None = None) -> Tensor:
    """Eigenvalues (ascending) of self-adjoint matrices."""
    x = _float_input(tensor, "SelfAdjointEigV2")
    _check_matrix(x, "SelfAdjointEigV2")
    e, _ = execute(SELF_ADJOINT_EIG, (x,), {"compute_v": False})
    return e


# Vectorized-jacobian batching rules (contract: tapeflow/eager/batching.py).
# Every op here maps over leading axes, so a batch axis in front is one more
# leading axis; inputs only need lining up.

def _with_batch(a: Tensor, batched: bool, size: int) -> Tensor:
    """``a`` with the batch axis in front (an unbatched value is repeated)."""
    if batched:
        return a
    s = tuple(a._shape_tuple())
    return array_ops.broadcast_to(array_ops.reshape(a, (1,) + s), (size,) + s)


def _lift_batch(a: Tensor, batched: bool, rank: int) -> Tensor:
    """A batched ``a`` padded with unit axes after the batch axis to logical ``rank``."""
    s = tuple(a._shape_tuple())
    if not batched or len(s) - 1 >= rank:
        return a
    return array_ops.reshape(a, (s[0],) + (1,) * (rank - len(s) + 1) + s[1:])


def _rule_as_is(op):
    def rule(size, args, batched, attrs):
        return execute(op, tuple(args), attrs)

    return rule


def _rule_materialized(op):
    def rule(size, args, batched, attrs):
        return execute(op, tuple(_with_batch(a, b, size) for a, b in zip(args, batched)), attrs)

    return rule


def _triangular_solve_rule(size, args, batched, attrs):
    # Batch dims broadcast here: line up the logical ranks, NumPy does the rest.
    rank = max(len(a._shape_tuple()) - (1 if b else 0) for a, b in zip(args, batched))
    return execute(MATRIX_TRIANGULAR_SOLVE, tuple(_lift_batch(a, b, rank) for a, b in zip(args, batched)), attrs)


for _op in (MATRIX_INVERSE, MATRIX_DETERMINANT, LOG_MATRIX_DETERMINANT, CHOLESKY, QR, SVD, SELF_ADJOINT_EIG,
            MATRIX_DIAG, MATRIX_DIAG_PART, MATRIX_BAND_PART):
    _op.batch = _rule_as_is(_op)
for _op in (MATRIX_SET_DIAG, MATRIX_SOLVE):
    _op.batch = _rule_materialized(_op)
MATRIX_TRIANGULAR_SOLVE.batch = _triangular_solve_rule


# ----------------------------------------------------------------------------
# Composites: matvec, lstsq, pinv
# ----------------------------------------------------------------------------

def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: str | None = None) -> Tensor:
    """Matrix-vector product ``a @ b`` over the last axes (``tf.linalg.matvec``)."""
    a = t(a)
    b = b if isinstance(b, Tensor) else convert_to_tensor(b, dtype_hint=a.dtype)
    if state._graph is None and b._shape_tuple():
        # Eagerly, the same three ops without expand_dims'/squeeze's argument checks (always met here).
        sb = b._shape_tuple()
        bx = execute(array_ops.RESHAPE, (b,), {"shape": sb + (1,)})
        out = math_ops._matmul(a, bx, transpose_a or adjoint_a, False, False, False)
        return execute(array_ops.RESHAPE, (out,), {"shape": out._shape_tuple()[:-1]})
    out = math_ops.matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a or adjoint_a)
    return array_ops.squeeze(out, axis=-1)


def lstsq(matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: bool = True, name: str | None = None) -> Tensor:
    """Least-squares solution of ``matrix @ x = rhs`` (``tf.linalg.lstsq``).

    ``fast=True`` (TF's default) solves the regularized normal equations by
    Cholesky: ``(AᵀA + λI)⁻¹Aᵀb`` when rows >= cols, else
    ``Aᵀ(AAᵀ + λI)⁻¹b``. ``fast=False`` returns the minimum-norm solution
    ``pinv(A) @ b`` (only for ``l2_regularizer=0``).
    """
    a, b = _pair(matrix, rhs, "MatrixSolveLs")
    sa = _check_matrix(a, "MatrixSolveLs", square=False)
    sb = b._shape_tuple()
    if len(sb) < 2:
        raise _err("MatrixSolveLs", f"rhs must have rank >= 2 (shape [..., M, K]), got shape {_dims(sb)}")
    if sa[-2] is not None and sb[-2] is not None and sa[-2] != sb[-2]:
        raise _err("MatrixSolveLs", f"matrix and rhs must have the same number of rows: matrix {_dims(sa)} vs "
                   f"rhs {_dims(sb)}")
    _same_batch("MatrixSolveLs", sa, sb)
    lam = l2_regularizer.numpy() if isinstance(l2_regularizer, Tensor) else l2_regularizer
    lam = float(lam)
    if not fast:
        if lam != 0.0:
            raise NotImplementedError("tf.linalg.lstsq(fast=False) with l2_regularizer != 0 is not implemented "
                                      "(TF ignores it there too); use fast=True")
        return math_ops.matmul(pinv(a), b)
    m, n = sa[-2], sa[-1]
    if m is None or n is None:
        raise NotImplementedError("tf.linalg.lstsq needs the matrix's last two dimensions to be known")
    if m >= n:
        gram = math_ops.matmul(a, a, transpose_a=True)
        if lam:
            gram = math_ops.add(gram, math_ops.multiply(_eye_like(gram), lam))
        return cholesky_solve(cholesky(gram), math_ops.matmul(a, b, transpose_a=True))
    gram = math_ops.matmul(a, a, transpose_b=True)
    if lam:
        gram = math_ops.add(gram, math_ops.multiply(_eye_like(gram), lam))
    return math_ops.matmul(a, cholesky_solve(cholesky(gram), b), transpose_a=True)


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """Moore-Penrose pseudo-inverse via SVD (``tf.linalg.pinv``).

    Singular values below ``rcond * max(s)`` are dropped; ``rcond`` defaults
    to ``10 * max(rows, cols) * eps(dtype)``, as TF.
    """
    x = _float_input(a, "pinv")
    s_ = _check_matrix(x, "pinv", square=False)
    if rcond is None:
        m, n = s_[-2], s_[-1]
        if m is None or n is None:
            raise NotImplementedError("tf.linalg.pinv with rcond=None needs known matrix dimensions")
        rcond = 10.0 * max(m, n) * float(np.finfo(x._value.dtype).eps)
    s, u, v = svd(x, full_matrices=False)
    cutoff = math_ops.multiply(math_ops.reduce_max(s, axis=-1, keepdims=True), rcond)
    keep = math_ops.greater(s, cutoff)
    safe_s = math_ops.where(keep, s, array_ops.ones_like(s))
    s_inv = math_ops.where(keep, math_ops.reciprocal(safe_s), array_ops.zeros_like(s))
    return math_ops.matmul(math_ops.multiply(v, array_ops.expand_dims(s_inv, -2)), u, transpose_b=True)


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """Number of singular values above ``tol`` (default ``eps * max(rows, cols) * max(s)``), as int32."""
    x = _float_input(a, "matrix_rank")
    sh = _check_matrix(x, "matrix_rank", square=False)
    s = svd(x, compute_uv=False)
    if tol is None:
        if sh[-2] is None or sh[-1] is None:
            raise NotImplementedError("tf.linalg.matrix_rank with tol=None needs known matrix dimensions")
        eps = float(np.finfo(x._value.dtype).eps)
        tol = math_ops.multiply(math_ops.reduce_max(s, axis=-1, keepdims=True), eps * max(sh[-2], sh[-1]))
    return math_ops.reduce_sum(math_ops.cast(math_ops.greater(s, tol), dtypes.int32), axis=-1)


CROSS = defop("Cross", lambda a, b: np.cross(a, b), shape=lambda specs: [specs[0]])
CROSS.batch = _rule_materialized(CROSS)


@defgrad("Cross", inputs=True)
def _cross_grad(op, g):
    a, b = op.inputs
    return cross(b, g), cross(g, a)


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """Cross product of 3-vectors along the last axis (``tf.linalg.cross``); shapes must match."""
    from tapeflow.framework.errors import FailedPreconditionError

    x, y = _pair_any(a, b, "Cross")
    sa, sb = x._shape_tuple(), y._shape_tuple()
    if len(sa) != len(sb) or any(p is not None and q is not None and p != q for p, q in zip(sa, sb)):
        raise _err("Cross", f"Both inputs must be of same shape: {_dims(sa)} vs. {_dims(sb)}")
    if not sa or (sa[-1] is not None and sa[-1] != 3):
        raise FailedPreconditionError(None, None, f"Cross-products are only defined for 3-element vectors, got "
                                      f"shape {_dims(sa)} [Op:Cross]")
    return execute(CROSS, (x, y))


# ----------------------------------------------------------------------------
# Norms and clipping
# ----------------------------------------------------------------------------

def _norm_axis(axis: Any, ndim: int) -> tuple:
    if axis is None:
        return ()
    if isinstance(axis, Tensor):
        axis = axis.numpy().tolist()
    if isinstance(axis, (list, tuple)):
        ax = [int(a) for a in axis]
    else:
        try:
            ax = [int(axis)]
        except (TypeError, ValueError):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}") from None
    if len(ax) > 2 or (len(ax) == 2 and ax[0] % max(ndim, 1) == ax[1] % max(ndim, 1)):
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
    for a in ax:
        if not -ndim <= a < ndim:
            raise ValueError(f"'axis' {a} is out of range for a tensor of rank {ndim}")
    return tuple(a % ndim for a in ax)


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Any = None,  # noqa: A002
         name: str | None = None) -> Tensor:
    """Vector and matrix norms, as ``tf.norm``.

    ``axis=None`` or an int: a vector norm (over all entries / along the
    axis) with ``ord`` 'euclidean', 1, 2, np.inf or any p > 0. ``axis`` a
    pair: a matrix norm with ``ord`` 'euclidean'/'fro', 1 (max column sum),
    2 (largest singular value) or np.inf (max row sum).

    >>> float(tf.norm(tf.constant([3.0, 4.0])))
    5.0
    >>> float(tf.norm(tf.constant([[1.0, -2.0], [3.0, 4.0]]), ord=1, axis=[0, 1]))
    6.0
    """
    x = t(tensor)
    if x._value.dtype.kind == "c":  # |z|^2 needs the modulus, not z * z
        x = math_ops.abs(x)
    nd = len(x._shape_tuple())
    ax = _norm_axis(axis, nd)
    is_matrix = len(ax) == 2
    if is_matrix:
        if not (ord in ("euclidean", "fro") or (not isinstance(ord, str) and ord in (1, 2, np.inf))):
            raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, 2, inf], got {ord}")
    else:
        if not (ord == "euclidean" or (not isinstance(ord, str) and np.isreal(ord) and ord > 0)):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    red_axis = list(ax) if ax else None
    if is_matrix:
        r0, c0 = ax
        if ord in ("euclidean", "fro"):
            result = math_ops.sqrt(math_ops.reduce_sum(math_ops.multiply(x, x), axis=red_axis, keepdims=True))
        elif ord == 2:
            perm = [i for i in range(nd) if i not in ax] + [r0, c0]
            moved = array_ops.transpose(x, perm)
            smax = math_ops.reduce_max(svd(moved, compute_uv=False), axis=-1)
            result = _expand_at(smax, sorted(ax), nd)
        else:
            ab = math_ops.abs(x)
            sum_ax, max_ax = (r0, c0) if ord == 1 else (c0, r0)
            result = math_ops.reduce_max(math_ops.reduce_sum(ab, axis=sum_ax, keepdims=True), axis=max_ax,
                                         keepdims=True)
    else:
        if ord == "euclidean" or ord == 2:
            result = math_ops.sqrt(math_ops.reduce_sum(math_ops.multiply(x, x), axis=red_axis, keepdims=True))
        elif ord == np.inf:
            result = math_ops.reduce_max(math_ops.abs(x), axis=red_axis, keepdims=True)
        elif ord == 1:
            result = math_ops.reduce_sum(math_ops.abs(x), axis=red_axis, keepdims=True)
        else:
            p = float(ord)
            powered = math_ops.reduce_sum(math_ops.pow(math_ops.abs(x), p), axis=red_axis, keepdims=True)
            result = math_ops.pow(powered, 1.0 / p)
    if not keepdims:
        result = array_ops.squeeze(result, axis=red_axis) if red_axis else array_ops.reshape(result, ())
    return result


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None, name: str | None = None) -> tuple:  # noqa: A002
    """``(tensor / norm, norm)`` with the norm kept broadcastable (``tf.linalg.normalize``)."""
    x = t(tensor)
    n = norm(x, ord=ord, axis=axis, keepdims=True)
    return math_ops.divide_(x, n), n


def _expand_at(x: Tensor, axes: list, ndim: int) -> Tensor:
    for a in axes:
        x = array_ops.expand_dims(x, a)
    return x


def _l2_sum(v: Tensor, axes: Any = None, keepdims: bool = False) -> Tensor:
    return math_ops.reduce_sum(math_ops.multiply(v, v), axis=axes, keepdims=keepdims)


def clip_by_norm(t_: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """Rescales ``t`` so its L2 norm (over ``axes``) is at most ``clip_norm``.

    ``t * clip_norm / max(norm(t), clip_norm)``; a zero tensor stays zero
    (with a finite gradient). ``IndexedSlices`` clip their values.
    """
    if isinstance(t_, IndexedSlices):
        values = clip_by_norm(t_.values, clip_norm, axes)
        return IndexedSlices(values, t_.indices, t_.dense_shape)
    x = t(t_)
    check_float(x, "clip_by_norm")
    # As TF: a negative clip_norm counts as 0; a tensor one is cast to t's dtype.
    if isinstance(clip_norm, Tensor):
        cn = _cast_like(math_ops.maximum(clip_norm, 0), x)
    else:
        cn = convert_to_tensor(max(clip_norm, 0) if np.isscalar(clip_norm) else clip_norm, dtype=x.dtype)
    l2sum = _l2_sum(x, axes, keepdims=True)
    positive = math_ops.greater(l2sum, 0)
    safe = math_ops.where(positive, l2sum, array_ops.ones_like(l2sum))  # no inf gradient at 0
    l2norm = math_ops.where(positive, math_ops.sqrt(safe), l2sum)
    return math_ops.divide_(math_ops.multiply(x, cn), math_ops.maximum(l2norm, cn))


def _check_list(t_list: Any, fn: str) -> list:
    if isinstance(t_list, (Tensor, IndexedSlices, str)) or not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}. ({fn} takes a "
                        "list or tuple of tensors, e.g. the gradients from tape.gradient)")
    return list(t_list)


def global_norm(t_list: Any, name: str | None = None) -> Tensor:
    """sqrt(sum of squares of every entry of every tensor); ``None`` entries are skipped."""
    items = _check_list(t_list, "global_norm")
    sums = []
    for v in items:
        if v is None:
            continue
        val = v.values if isinstance(v, IndexedSlices) else t(v)
        sums.append(_l2_sum(val))
    if not sums:  # as TF: the norm of nothing is a float32 zero
        return convert_to_tensor(np.float32(0.0))
    d = sums[0]._value.dtype
    for s in sums[1:]:
        if s._value.dtype != d:
            raise dtype_mismatch("global_norm", sums[0], s)
    total = sums[0] if len(sums) == 1 else math_ops.add_n(sums)
    return math_ops.sqrt(total)


def clip_by_global_norm(t_list: Any, clip_norm: Any, use_norm: Any = None,
                        name: str | None = None) -> tuple[list, Tensor]:
    """Scales every tensor by ``clip_norm / max(global_norm, clip_norm)``.

    Returns ``(list_clipped, global_norm)``. ``None`` entries pass through;
    ``IndexedSlices`` keep their indices. An infinite norm makes every
    entry NaN, as TF.

    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), None], 1.0)
    >>> float(norm), clipped[0].numpy().tolist(), clipped[1]
    (5.0, [0.6000000238418579, 0.800000011920929], None)
    """
    items = _check_list(t_list, "clip_by_global_norm")
    gn = global_norm(items) if use_norm is None else t(use_norm)
    cn = clip_norm if isinstance(clip_norm, Tensor) else convert_to_tensor(clip_norm, dtype_hint=gn.dtype)
    one = convert_to_tensor(1.0, dtype=cn.dtype)
    scale = math_ops.multiply(cn, math_ops.minimum(math_ops.divide_(one, gn), math_ops.divide_(one, cn)))
    scale = math_ops.add(scale, math_ops.subtract(gn, gn))  # NaN when the norm is inf, as TF
    out = []
    for v in items:
        if v is None:
            out.append(None)
        elif isinstance(v, IndexedSlices):
            vals = v.values
            out.append(IndexedSlices(math_ops.multiply(vals, _cast_like(scale, vals)), v.indices, v.dense_shape))
        else:
            x = t(v)
            out.append(math_ops.multiply(x, _cast_like(scale, x)))
    return out, gn


def _cast_like(s: Tensor, x: Tensor) -> Tensor:
    return s if s._value.dtype == x._value.dtype else math_ops.cast(s, dtypes.from_numpy(x._value.dtype))


def clip_by_average_norm(t_: Any, clip_norm: Any, name: str | None = None) -> Tensor:
    """``t * clip_norm / max(l2norm(t) / size(t), clip_norm)`` (TF1's ``clip_by_average_norm``)."""
    x = t(t_)
    check_float(x, "clip_by_average_norm")
    cn = clip_norm if isinstance(clip_norm, Tensor) else convert_to_tensor(clip_norm, dtype_hint=x.dtype)
    size = 1
    for d in x._shape_tuple():
        if d is None:
            raise NotImplementedError("clip_by_average_norm needs a fully known shape")
        size *= d
    l2norm_inv = math_ops.rsqrt(_l2_sum(x))
    one = convert_to_tensor(1.0, dtype=x.dtype)
    factor = math_ops.minimum(math_ops.multiply(l2norm_inv, float(size)), math_ops.divide_(one, cn))
    return math_ops.multiply(math_ops.multiply(x, cn), factor)


def tensor_diag(diagonal: Any, name: str | None = None) -> Tensor:
    """``tf.linalg.tensor_diag`` (TF's ``Diag``): a rank-2k tensor, ``diagonal[i1..ik]`` at
    ``[i1..ik, i1..ik]``, zeros elsewhere."""
    d = convert_to_tensor(diagonal)
    shape = d._shape_tuple()
    if not shape:
        raise InvalidArgumentError(None, None, "Input must be at least rank 1, got 0 [Op:Diag]")
    n = int(np.prod(shape))
    flat = array_ops.reshape(d, [n])
    return array_ops.reshape(diag(flat), list(shape) + list(shape))


def tensor_diag_part(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """``tf.linalg.tensor_diag_part`` (TF's ``DiagPart``): of a rank-2k tensor of shape ``s + s``, the values at
    ``[i1..ik, i1..ik]`` (shape ``s``)."""
    x = convert_to_tensor(input)
    shape = x._shape_tuple()
    k = len(shape) // 2
    dims = ",".join(str(d) for d in shape)
    if len(shape) % 2 or not shape:
        raise InvalidArgumentError(None, None, "The rank of the tensor should be                                  "
                                   f"        even and positive, got shape [{dims}] [Op:DiagPart]")
    for i in range(k):
        if shape[i] != shape[i + k]:
            raise InvalidArgumentError(None, None, f"Invalid shape [{dims}]: dimensions {i} and {i + k} do not "
                                       "match. [Op:DiagPart]")
    n = int(np.prod(shape[:k]))
    return array_ops.reshape(diag_part(array_ops.reshape(x, [n, n])), list(shape[:k]))
