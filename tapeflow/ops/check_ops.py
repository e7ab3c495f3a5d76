"""TF's ``tf.debugging.assert_*`` checks (eager), with TF's exception types
and messages. Inside ``tf.function`` a check on values is a graph node that
runs the check when the function runs (see ``_in_graph``); checks on static
shapes and dtypes work in both modes."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.context import state
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, convert_to_tensor


def _tensor(x: Any, dtype: Any = None) -> Tensor:
    from tapeflow.framework.variables import Variable

    if isinstance(x, Variable):
        return x._snapshot()
    if isinstance(x, Tensor):
        return x
    return convert_to_tensor(x, dtype_hint=dtype)


def _eager_only(name: str) -> None:
    if state.graph is not None:
        raise NotImplementedError(
            f"tf.debugging.{name} checks tensor values, which inside tf.function needs an Assert op that tapeflow "
            "does not have yet: call it outside the traced function.")


def _values(x: Tensor) -> np.ndarray:
    return np.asarray(x._value)


def _pair(name: str, x: Any, y: Any) -> tuple[Tensor, Tensor]:
    _eager_only(name)
    x = _tensor(x)
    y = _tensor(y, dtype=x.dtype)
    if x.dtype is not y.dtype:
        raise InvalidArgumentError(
            None, None, f"{name}: x has dtype {x.dtype.name} but y has dtype {y.dtype.name}; cast one of them "
            "(tf.cast) so both match.")
    try:
        np.broadcast_shapes(x._shape_tuple(), y._shape_tuple())
    except ValueError:
        raise InvalidArgumentError(
            None, None, f"Incompatible shapes: {list(x._shape_tuple())} vs. {list(y._shape_tuple())} "
            f"[Op:{name}]") from None
    return x, y


def _fail_compare(x: np.ndarray, y: np.ndarray, ok: np.ndarray, cond: str, message: Any, summarize: Any) -> None:
    # TF's eager text: the differing entries only when both shapes are one non-scalar shape; summarize < 0
    # shows everything, 0 nothing but the condition.
    n = 3 if summarize is None else int(summarize)
    n = max(x.size, y.size) if n < 0 else n
    text = [str(message)] if message else []
    text.append(f"Condition {cond} did not hold.")
    if n > 0:
        if x.shape == y.shape and x.ndim:
            bad = np.argwhere(~np.broadcast_to(ok, x.shape))
            k = min(len(bad), n)
            text += [f"Indices of first {k} different values:", str(bad[:k]), "Corresponding x values:",
                     str(x[tuple(bad[:k].T)]), "Corresponding y values:", str(y[tuple(bad[:k].T)])]
        text += [f"First {min(x.size, n)} elements of x:", str(x.reshape(-1)[:n]),
                 f"First {min(y.size, n)} elements of y:", str(y.reshape(-1)[:n])]
    raise InvalidArgumentError(None, None, "\n".join(text))


def _summarize(value: Any, summarize: Any) -> str:
    """One entry of an eager ``Assert``'s "Summarized data", as TF writes it: the first ``summarize``
    elements joined by ", " (then "..." if there are more), a scalar as itself, a string as its bytes."""
    v = np.asarray(_tensor(value.encode() if isinstance(value, str) else value)._value)
    n = 3 if summarize is None else int(summarize)
    n = v.size if n < 0 else n
    if not v.ndim:
        return str(v[()]) if n else ""
    flat = v.reshape(-1)
    return ", ".join([str(e) for e in flat[:n]] + (["..."] if flat.size > n else []))


def _assert_failed(condition: Any, data: Any, summarize: Any) -> None:
    raise InvalidArgumentError(None, None, f"Expected '{condition!s}' to be true. Summarized data: "
                               + "\n".join(_summarize(d, summarize) for d in data))


def _compare(name: str, fn, cond: str, x: Any, y: Any, message: Any, summarize: Any) -> None:
    x, y = _pair(name, x, y)
    xv, yv = _values(x), _values(y)
    ok = fn(xv, yv)
    if not np.all(ok):
        _fail_compare(xv, yv, ok, cond, message, summarize)


def assert_equal(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    """Raises ``InvalidArgumentError`` unless ``x == y`` element-wise (broadcasting)."""
    _compare("assert_equal", np.equal, "x == y", x, y, message, summarize)


def assert_none_equal(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    """Raises ``InvalidArgumentError`` unless ``x != y`` element-wise."""
    _compare("assert_none_equal", np.not_equal, "x != y", x, y, message, summarize)


def assert_less(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare("assert_less", np.less, "x < y", x, y, message, summarize)


def assert_less_equal(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare("assert_less_equal", np.less_equal, "x <= y", x, y, message, summarize)


def assert_greater(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare("assert_greater", np.greater, "x > y", x, y, message, summarize)


def assert_greater_equal(x: Any, y: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _compare("assert_greater_equal", np.greater_equal, "x >= y", x, y, message, summarize)


def _sign_check(name: str, fn, cond: str, x: Any, message: Any) -> None:
    _eager_only(name)
    x = _tensor(x)
    v = _values(x)
    if not np.all(fn(v)):
        flat = ", ".join(repr(str(e)) for e in v.reshape(-1)[:3].tolist())
        head = f"{message}\n" if message else "\n"
        raise InvalidArgumentError(
            None, None, f"{head}Condition {cond} did not hold element-wise:\n"
            f"x (shape={tuple(v.shape)} dtype={x.dtype.name}) = \n[{flat}]")


def assert_positive(x: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _sign_check("assert_positive", lambda v: v > 0, "x > 0", x, message)


def assert_negative(x: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _sign_check("assert_negative", lambda v: v < 0, "x < 0", x, message)


def assert_non_negative(x: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _sign_check("assert_non_negative", lambda v: v >= 0, "x >= 0", x, message)


def assert_non_positive(x: Any, message: Any = None, summarize: Any = None, name: Any = None) -> None:
    _sign_check("assert_non_positive", lambda v: v <= 0, "x <= 0", x, message)


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None, message: Any = None, summarize: Any = None,
                name: Any = None) -> None:
    """Raises ``InvalidArgumentError`` unless ``|x - y| <= atol + rtol * |y|``
    everywhere; the default tolerances are ``10 * eps`` of the dtype, as TF."""
    x, y = _pair("assert_near", x, y)
    eps = float(np.finfo(x._value.dtype).eps) if x._value.dtype.kind in "fc" else 0.0
    rtol = 10 * eps if rtol is None else float(np.asarray(rtol))
    atol = 10 * eps if atol is None else float(np.asarray(atol))
    xv, yv = _values(x), _values(y)
    if not np.all(np.abs(xv - yv) <= atol + rtol * np.abs(yv)):
        tol = [_tensor(v, dtype=x.dtype) for v in (rtol, atol)]
        _assert_failed(_tensor(False), [
            f"{message}.  " if message else "", f"x and y not equal to tolerance rtol = {tol[0]!s}, atol = {tol[1]!s}",
            f"x (shape={tuple(xv.shape)} dtype={x.dtype.name}) = ", x,
            f"y (shape={tuple(yv.shape)} dtype={y.dtype.name}) = ", y], summarize)


def assert_all_finite(x: Any, message: str, name: Any = None) -> Tensor:
    """``check_numerics(x, message)``: returns ``x`` or raises on NaN/Inf."""
    from tapeflow.ops.debug_ops import check_numerics

    return check_numerics(x, message)


def assert_rank(x: Any, rank: int, message: Any = None, name: Any = None) -> None:
    """Raises ``ValueError`` unless ``x`` has rank ``rank`` (static check)."""
    x = _tensor(x)
    shape = x._shape_tuple()
    rank = int(rank)
    if shape is not None and len(shape) != rank:
        head = f"{message}.  " if message else ""
        raise ValueError(f"{head}Tensor  must have rank {rank}.  Received rank {len(shape)}, shape {tuple(shape)}")


def assert_type(tensor: Any, tf_type: Any, message: Any = None, name: Any = None) -> None:
    """Raises ``TypeError`` unless ``tensor`` has dtype ``tf_type``."""
    want = dtypes.as_dtype(tf_type)
    got = tensor.dtype
    if got is not want:
        head = f"{message}: " if message else ""
        raise TypeError(f"{head}tensor must be of type {want!r}; got {got!r}")


def assert_shapes(shapes: Any, data: Any = None, summarize: Any = None, message: Any = None,
                  name: Any = None) -> None:
    """Checks that tensors' shapes match symbolic specs (``('N', 'D')``,
    ints, ``None`` for any); the same symbol must be the same size
    everywhere. Raises ``ValueError`` naming the tensors and dims, as TF."""
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes: dict = {}
    for x, spec in items:
        t = _tensor(x)
        shape = t._shape_tuple()
        spec = tuple(spec) if not isinstance(spec, str) else (spec,)
        desc = f"tensor shape={tuple(shape)} dtype={t.dtype.name}"
        if shape is None:
            continue
        if len(spec) != len(shape) and "..." not in spec and "*" not in spec:
            raise ValueError(f"{desc} must have rank {len(spec)}.  Received rank {len(shape)}, shape {tuple(shape)}")
        for d, (sym, size) in enumerate(zip(spec, shape)):
            if sym is None or size is None or sym in ("...", "*", "."):
                continue
            if isinstance(sym, int):
                if size != sym:
                    raise ValueError(f"{desc} dimension {d} must have size {sym}.  Received size {size}, "
                                     f"shape {tuple(shape)}")
                continue
            if sym in sizes:
                want, where = sizes[sym]
                if want != size:
                    raise ValueError(f"Specified by {where}.  Tensor {desc} dimension {d} must have size {want}.  "
                                     f"Received size {size}, shape {tuple(shape)}")
            else:
                sizes[sym] = (size, f"{desc} dimension {d}")


def is_numeric_tensor(tensor: Any) -> bool:
    """True for a Tensor of a numeric dtype (ints, floats, complex)."""
    return isinstance(tensor, Tensor) and tensor._value.dtype.kind in "iufc"


def Assert(condition: Any, data: Any, summarize: Any = None, name: Any = None) -> None:  # noqa: N802 - TF's name
    """Raises ``InvalidArgumentError`` with a summary of ``data`` when the
    scalar ``condition`` is False, as ``tf.debugging.Assert`` (eager)."""
    _eager_only("Assert")
    c = _tensor(condition)
    if bool(np.asarray(c._value)):
        return None
    _assert_failed(condition, data, summarize)  # TF writes the condition as given: False, or a tensor


def assert_scalar(tensor: Any, message: Any = None, name: Any = None) -> None:
    """Raises ``ValueError`` unless ``tensor`` has rank 0."""
    shape = _tensor(tensor)._shape_tuple()
    if shape is not None and len(shape) != 0:
        head = f"{message}  " if message else ""
        raise ValueError(f"{head}Expected scalar shape, saw shape: {tuple(shape)}.")


def assert_integer(x: Any, message: Any = None, name: Any = None) -> None:
    """Raises ``TypeError`` unless ``x`` has an integer dtype."""
    t = _tensor(x)
    if not t.dtype.is_integer:
        head = f"{message}  " if message else ""
        raise TypeError(f'{head}Expected "x" to be integer type.  Found: tensor of dtype <dtype: \'{t.dtype.name}\'>')


def assert_rank_at_least(x: Any, rank: int, message: Any = None, name: Any = None) -> None:
    """Raises ``ValueError`` unless ``x`` has rank >= ``rank``."""
    shape = _tensor(x)._shape_tuple()
    if shape is not None and len(shape) < int(rank):
        head = f"{message}.  " if message else ""
        raise ValueError(f"{head}Tensor  must have rank at least {int(rank)}.  Received rank {len(shape)}, "
                         f"shape {tuple(shape)}")


def assert_rank_in(x: Any, ranks: Any, message: Any = None, name: Any = None) -> None:
    """Raises ``ValueError`` unless ``x``'s rank is one of ``ranks``."""
    shape = _tensor(x)._shape_tuple()
    ranks = tuple(int(r) for r in ranks)
    if shape is not None and len(shape) not in ranks:
        head = f"{message}.  " if message else ""
        raise ValueError(f"{head}Tensor  must have rank in {ranks}.  Received rank {len(shape)}, shape {tuple(shape)}")


def _in_graph(fn):
    """Inside ``tf.function`` tracing, a check on values becomes a stateful
    graph node (kept and run in program order, like ``tf.print``) that runs
    the eager check on the run-time values and raises its error then."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        g = state.graph
        if g is None:
            return fn(*args, **kwargs)
        from tapeflow.framework import nest
        from tapeflow.framework.tensor import _wrap
        from tapeflow.framework.variables import Variable

        flat = nest.flatten((args, kwargs))
        pos = [i for i, v in enumerate(flat) if isinstance(v, (Tensor, Variable))]
        tensors = [_tensor(flat[i]) for i in pos]

        def check(*arrays):
            vals = list(flat)
            for i, a in zip(pos, arrays):
                vals[i] = _wrap(np.asarray(a))
            a2, k2 = nest.pack_sequence_as((args, kwargs), vals)
            fn(*a2, **k2)

        g._new_op(None, "PrintV2", tuple(g._own(t) for t in tensors), {"print_fn": check}, [])
        return None

    return wrapper


for _name in ("assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
              "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
              "assert_non_positive", "assert_near", "Assert"):
    globals()[_name] = _in_graph(globals()[_name])
del _name
