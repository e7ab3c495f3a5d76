"""AutoGraph: Python control flow on tensors becomes ``tf.cond``/``tf.while_loop``.

``convert(fn)`` parses ``fn``'s source and rewrites, inside the function:

* ``if``/``elif``/``else`` -> ``ag__.if_stmt(test, true_fn, false_fn, state)``
* ``while`` -> ``ag__.while_stmt(test_fn, body_fn, state)``
* ``for x in it`` -> ``ag__.for_stmt(it, body_fn, state)``
* ``break``/``continue`` -> flags that guard the rest of the loop body
* ``return`` inside an ``if`` -> the statements after the ``if`` move into
  its other branch, so each branch returns a value

where ``state`` is the tuple of variables the statement assigns. At run time
(while tracing) each helper looks at the condition: a symbolic tensor builds
the graph op; anything else runs plain Python, so Python conditions stay
Python. The rewritten code keeps the user's file name and line numbers, so
errors point at the user's line.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import os
import re
import textwrap
import traceback
import types
import weakref
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.graph.graph import SymbolicTensor

__all__ = ["convert", "convert_if_needed", "to_graph", "do_not_convert", "Undefined"]

# fn -> converted fn; by identity (closures differ between function objects).
_CONVERTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class StagingError(Exception):
    """Raised while a ``tf.function`` is traced when the Python code itself fails in a way AutoGraph
    reports "in user code" (e.g. unbounded recursion of a function calling itself), as TF's."""


# -----------------------------------------------------------------------------
# Errors raised while tracing: TF's "in user code" message
# -----------------------------------------------------------------------------

# The code of the functions tf.function traces and of the code AutoGraph generated: their frames are
# the user's lines ("  *") in the message.
_USER_CODE: weakref.WeakSet = weakref.WeakSet()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the exception types AutoGraph re-raises with its message (others are raised as they are), as TF
_STRING_CONSTRUCTOR_ERRORS = (AssertionError, AttributeError, NameError, NotImplementedError, RuntimeError,
                              StopIteration, TypeError, UnboundLocalError, ValueError)


def mark_user_code(fn: Any) -> None:
    """Frames of ``fn`` count as user code in "in user code" messages."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is not None:
        _USER_CODE.add(code)


def in_user_code(e: BaseException) -> BaseException | None:
    """The exception TF's AutoGraph raises for ``e`` escaping a traced function: the same type, its message
    ``in user code:`` with the user's frames (``  *``; library code called from them ``  **``) and then the
    original ``Type: message``; ``None`` where TF raises ``e`` unchanged (types with their own constructor)."""
    kind = type(e)
    if getattr(e, "ag_pass_through", False):
        return None
    if kind not in _STRING_CONSTRUCTOR_ERRORS and kind is not KeyError and kind.__init__ is not Exception.__init__:
        return None
    cause = getattr(e, "ag_error_cause", None)
    if cause is None:
        cause = "".join(traceback.format_exception_only(kind, e)).strip()
    frames, tb = [], e.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    user = [i for i, (code, _) in enumerate(frames) if code in _USER_CODE]
    if not user:
        return None
    lines, name = ["in user code:", ""], None
    for i, (code, lineno) in enumerate(frames):
        if i < user[0] or (i not in user and (i < user[-1] or code.co_filename.startswith(_PACKAGE_DIR))):
            continue
        if i in user:  # a generated branch/loop function's lines are its function's
            name = name if _GENERATED.match(code.co_name) and name else code.co_name
            mark = "  *"
        else:
            name = code.co_name
            mark = "  **" if frames[i - 1][0] is converted_call.__code__ else ""
        lines.append(f'    File "{code.co_filename}", line {lineno}, in {name}{mark}')
        lines.append("        " + (linecache.getline(code.co_filename, lineno).strip() or "<source unavailable>"))
    lines.append("")
    lines.extend("    " + line for line in cause.split("\n"))
    lines.append("")
    message = "\n".join(lines)
    new = _MultilineMessageKeyError(message, e.args[0] if e.args else None) if kind is KeyError else kind(message)
    new.ag_error_cause = cause
    return new.with_traceback(e.__traceback__)


class _MultilineMessageKeyError(KeyError):
    """TF's KeyError for "in user code" (``str`` of a KeyError would quote the whole message)."""

    def __init__(self, message: str, key: Any) -> None:
        super().__init__(key)
        self._message = message

    def __str__(self) -> str:
        return self._message


_MultilineMessageKeyError.__name__ = "KeyError"


class Undefined:
    """The value of a variable not yet assigned on some path."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Undefined({self.name!r})"

    def _unbound(self, *args, **kwargs):
        raise UnboundLocalError(
            f"local variable '{self.name}' is used, but it is assigned only on some paths of an `if`/loop on a "
            "tensor condition (AutoGraph): assign it before the `if`/loop or on every path."
        )

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._unbound()


# Any arithmetic, comparison, call or conversion of an Undefined names the variable.
for _dunder in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "matmul", "rmatmul", "neg",
                "pow", "lt", "le", "gt", "ge", "bool", "float", "int", "getitem", "call", "iter", "len"):
    setattr(Undefined, f"__{_dunder}__", Undefined._unbound)


def _symbolic(x: Any) -> bool:
    return isinstance(x, SymbolicTensor)


# -----------------------------------------------------------------------------
# Run-time helpers (the `ag__` the converted code calls)
# -----------------------------------------------------------------------------

def _check_defined(vals: tuple, names: tuple, where: str) -> None:
    for v, n in zip(vals, names):
        if isinstance(v, Undefined):
            raise ValueError(
                f"'{n}' must also be initialized in the {where} branch/loop: a variable set under a tensor "
                "condition must have a value on every path (assign it before the `if`/loop)."
            )


def if_stmt(test: Any, true_fn: Callable, false_fn: Callable, state: tuple, names: tuple,
            both: tuple | None = None):
    """``if test`` with branch functions over ``state``; ``both[k]`` says
    whether both branches assign ``names[k]`` (decided from the source)."""
    if not _symbolic(test):
        return true_fn(*state) if test else false_fn(*state)
    from tapeflow.graph.control_flow import cond

    # Outputs: variables defined before the `if` or assigned on both paths;
    # one set on a single path only is not an output (using it later fails).
    if both is None:
        both = (True,) * len(names)
    keep = [not isinstance(v, Undefined) or b for v, b in zip(state, both)]

    def pick(fn):
        def run():
            out = fn(*state)
            for o, k, n in zip(out, keep, names):
                if k and isinstance(o, Undefined):
                    raise ValueError(f"'{n}' must also be initialized in the other branch: it is set in one branch "
                                     "of an `if` on a tensor condition and used afterwards.")
            return tuple(_to_tensor_if_number(o) for o, k in zip(out, keep) if k)
        return run

    res = iter(cond(test, pick(true_fn), pick(false_fn)))
    return tuple(next(res) if k else Undefined(n) for k, n in zip(keep, names))


def _to_tensor_if_number(x):
    if isinstance(x, (bool, int, float)) and not isinstance(x, Tensor):
        from tapeflow.framework.tensor import convert_to_tensor

        return convert_to_tensor(x)
    return x


def while_stmt(test_fn: Callable, body_fn: Callable, state: tuple, names: tuple):
    test = test_fn(*state)
    if not _symbolic(test):
        while test:
            state = body_fn(*state)
            test = test_fn(*state)
            if _symbolic(test):
                break
        else:
            return state
    from tapeflow.graph.control_flow import while_loop

    defined = [not isinstance(v, Undefined) for v in state]
    idx = [i for i, d in enumerate(defined) if d]
    if any(state[i] is None for i in idx):
        state = _init_none_loop_vars(test, body_fn, state, names, idx)
    init = tuple(_to_tensor_if_number(state[i]) for i in idx)

    def full(vals):
        s = list(state)
        for i, v in zip(idx, vals):
            s[i] = v
        return s

    def cond(*vals):
        return test_fn(*full(vals))

    def body(*vals):
        out = body_fn(*full(vals))
        return tuple(_to_tensor_if_number(out[i]) for i in idx)

    res = while_loop(cond, body, init)
    out = list(state)
    for i, v in zip(idx, res):
        out[i] = v
    return tuple(out)


def _init_none_loop_vars(test: Any, body_fn: Callable, state: tuple, names: tuple, idx: list) -> tuple:
    """As TF: a loop variable that is ``None`` before a tensor loop and set in
    the body starts as zeros of the body's output type (found by tracing the
    body once, thrown away), and the loop must run at least once (checked at
    run time)."""
    from tapeflow.framework.context import state as ctx
    from tapeflow.graph.graph import FuncGraph, _spec_of, graph_scope
    from tapeflow.ops import array_ops

    nones = [i for i in idx if state[i] is None]
    probe = FuncGraph("loop_body_probe", outer=ctx.graph)
    probe.is_branch = True
    with graph_scope(probe):
        args = [v if v is None or isinstance(v, Undefined) else
                probe.add_placeholder(*_spec_of(_to_tensor_if_number(v))) if isinstance(v, (Tensor, bool, int, float))
                else v for v in state]
        out = body_fn(*args)
    s = list(state)
    for i in nones:
        o = _to_tensor_if_number(out[i])
        if not isinstance(o, Tensor):
            raise ValueError(f"'{names[i]}' is None before a loop on a tensor condition and the loop body sets it "
                             f"to {o!r}: it must become a tensor (or initialize it before the loop).")
        shape, dtype = _spec_of(o)
        if shape is None or None in shape:
            raise ValueError(f"'{names[i]}' is None before a loop on a tensor condition and the loop body sets it "
                             f"to a tensor of unknown shape {o.shape}: initialize it before the loop.")
        s[i] = array_ops.zeros(shape, dtype=o.dtype)
    from tapeflow.ops.check_ops import Assert

    Assert(test, [f"loop must iterate at least once to initialize {', '.join(names[i] for i in nones)}"])
    return tuple(s)


class _Range:
    """``range``/``tf.range`` with a symbolic bound, iterated by a While op."""

    def __init__(self, start, limit, delta) -> None:
        self.start, self.limit, self.delta = start, limit, delta


def range_(fn: Callable, *args):
    """``for i in range(...)``: stays Python unless a bound is symbolic."""
    if any(_symbolic(a) for a in args):
        from tapeflow.framework.tensor import convert_to_tensor

        if len(args) == 1:
            args = (0, args[0], 1)
        elif len(args) == 2:
            args = (args[0], args[1], 1)
        dt = next(a.dtype for a in args if _symbolic(a))
        return _Range(*(convert_to_tensor(a, dtype=dt) if not isinstance(a, Tensor) else a for a in args))
    return fn(*args)


def for_stmt(iterable: Any, body_fn: Callable, state: tuple, names: tuple, brk_index: int = -1):
    """``for x in iterable`` with loop state; ``brk_index`` is the position of
    the break flag in ``state`` (or -1)."""
    from tapeflow.ops import array_ops, math_ops

    graph_for = getattr(type(iterable), "_autograph_for_stmt", None)  # tf.data.Dataset: a While over get-next
    if graph_for is not None:
        from tapeflow.framework.context import state as ctx

        if ctx.graph is not None:
            return graph_for(iterable, body_fn, state, names, brk_index, while_stmt, _as_bool_tensor)
    if isinstance(iterable, _Range):
        r = iterable

        def rtest(i, *vals):
            pos = math_ops.logical_and(math_ops.greater(r.delta, 0), math_ops.less(i, r.limit))
            neg = math_ops.logical_and(math_ops.less(r.delta, 0), math_ops.greater(i, r.limit))
            more = math_ops.logical_or(pos, neg)
            if brk_index >= 0:
                more = math_ops.logical_and(more, math_ops.logical_not(_as_bool_tensor(vals[brk_index])))
            return more

        def rbody(i, *vals):
            return (i + r.delta,) + tuple(body_fn(i, *vals))

        return tuple(while_stmt(rtest, rbody, (r.start,) + tuple(state), ("<index>",) + tuple(names))[1:])
    # A loop over a constant tensor (`for _ in tf.range(5)` while tracing) is unrolled, unless it has a `break`:
    # its condition is usually a tensor, so that loop is a While over the tensor's rows, as TF's always is.
    from tapeflow.framework.context import state as ctx

    breaks_in_graph = brk_index >= 0 and isinstance(iterable, Tensor) and ctx.graph is not None
    unroll = not _symbolic(iterable) and not breaks_in_graph
    if unroll:
        if isinstance(iterable, Tensor):
            iterable = iter(iterable)
        for x in iterable:
            state = body_fn(x, *state)
            if brk_index >= 0 and _truthy_python(state[brk_index]):
                break
        return state
    n = iterable._shape_tuple()[0] if iterable._shape_tuple() else None
    length = n if n is not None else array_ops.shape(iterable)[0]
    i0 = Tensor(np.int32(0))

    def test_fn(i, *vals):
        more = math_ops.less(i, length)
        if brk_index >= 0:
            more = math_ops.logical_and(more, math_ops.logical_not(_as_bool_tensor(vals[brk_index])))
        return more

    def body(i, *vals):
        out = body_fn(array_ops.gather(iterable, i), *vals)
        return (i + 1,) + tuple(out)

    res = while_stmt(test_fn, body, (i0,) + tuple(state), ("<index>",) + tuple(names))
    return tuple(res[1:])


def _as_bool_tensor(x):
    from tapeflow.framework.tensor import convert_to_tensor

    return convert_to_tensor(x)


def _truthy_python(x) -> bool:
    return bool(x)


def _len(s: Any):
    """AutoGraph's ``len``: a tensor's first dimension, its static size when known, else a run-time scalar
    (``tf.shape(s)[0]``); a TensorArray's ``size()``; anything else Python's ``len``."""
    from tapeflow.graph.tensor_array import TensorArray

    if isinstance(s, TensorArray):
        return s.size()
    if not _symbolic(s):
        return len(s)
    shape = s._value.shape
    if shape is not None and len(shape) > 0 and shape[0] is not None:
        return shape[0]
    if shape is not None and len(shape) == 0:
        # (TF's text shows its shape tensor)
        raise ValueError('len requires a non-scalar tensor, got one of shape Tensor("Shape:0", shape=(0,), '
                         'dtype=int32)')
    from tapeflow.ops import shape_ops

    return shape_ops.shape_of(s)[0]


def converted_call(ag__f, /, *args, **kwargs):  # noqa: N803 - never clashes with user keywords
    """A call from converted code: user Python functions are converted too
    (recursively, as TF's AutoGraph); library and builtin code runs as is (``len`` of a tensor as TF's
    AutoGraph overloads it)."""
    if ag__f is len and len(args) == 1 and not kwargs:
        return _len(args[0])
    if _convertible(ag__f):
        ag__f = convert_if_needed(ag__f)
    return ag__f(*args, **kwargs)


_GENERATED = re.compile(r"^(if_true|if_false|loop_test|loop_body)_\d+$")


def _convertible(f) -> bool:
    fn = f.__func__ if isinstance(f, types.MethodType) else f
    if not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>":
        return False
    if "ag__factory" in fn.__qualname__ and _GENERATED.match(fn.__name__):
        return False  # a branch/loop function AutoGraph generated: already converted
    if fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    module = getattr(fn, "__module__", None) or ""
    root = module.split(".")[0]
    return root not in ("tapeflow", "numpy", "scipy", "builtins", "functools", "typing", "abc")


def not_(x: Any):
    if isinstance(x, Tensor):
        from tapeflow.ops.math_ops import logical_not

        return logical_not(x)
    return not x


def or_(a: Any, b_fn: Callable):
    if _symbolic(a):
        from tapeflow.ops.math_ops import logical_or

        return logical_or(a, b_fn())
    return a or b_fn()


def and_(a: Any, b_fn: Callable):
    if _symbolic(a):
        from tapeflow.ops.math_ops import logical_and

        return logical_and(a, b_fn())
    return a and b_fn()


def if_exp(test: Any, true_fn: Callable, false_fn: Callable):
    """``a if test else b``: a ``tf.cond`` when ``test`` is a graph tensor."""
    if not _symbolic(test):
        return true_fn() if test else false_fn()
    from tapeflow.graph.control_flow import cond

    return cond(test, lambda: _to_tensor_if_number(true_fn()), lambda: _to_tensor_if_number(false_fn()))


# -----------------------------------------------------------------------------
# The source transformation
# -----------------------------------------------------------------------------

def _assigned(stmts: list) -> list[str]:
    """Names assigned by ``stmts`` (not inside nested functions), in order."""
    out: list[str] = []

    class V(ast.NodeVisitor):
        def visit_Name(self, node):  # noqa: N802 - ast API
            if isinstance(node.ctx, ast.Store) and node.id not in out:
                out.append(node.id)

        def visit_FunctionDef(self, node):  # noqa: N802
            if node.name not in out:
                out.append(node.name)

        visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

        def visit_Lambda(self, node):  # noqa: N802
            pass

        def visit_ListComp(self, node):  # noqa: N802
            pass

        visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp  # noqa: N815

    for s in stmts:
        V().visit(s)
    return out


def _contains(stmts: list, kinds: tuple, stop_at_loops: bool = False) -> bool:
    for s in stmts:
        for node in _walk(s, stop_at_loops):
            if isinstance(node, kinds):
                return True
    return False


def _walk(node, stop_at_loops: bool):
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if stop_at_loops and isinstance(child, (ast.For, ast.While)):
            continue
        yield from _walk(child, stop_at_loops)


class _Transformer:
    def __init__(self) -> None:
        self.counter = 0
        self.generated: set[str] = set()

    def fresh(self, base: str) -> str:
        self.counter += 1
        name = f"{base}_{self.counter}"
        if not base.startswith("ag__"):
            self.generated.add(name)
        return name

    def state_names(self, names: list) -> list:
        # Loop/branch state: user variables (and flags), not generated functions.
        return [n for n in names if n not in self.generated and not n.startswith("ag__item")]

    # -- return lifting ------------------------------------------------------
    def lift_returns(self, stmts: list) -> list:
        """If an ``if`` branch returns, move the statements after it into
        the branch(es) that fall through, so each path ends in a return."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, ast.If) and _contains([s], (ast.Return,), stop_at_loops=True):
                rest = stmts[i + 1:]
                for field in ("body", "orelse"):
                    branch = getattr(s, field)
                    if not _ends_in_return(branch):
                        branch = branch + _copy(rest)
                    branch = self.lift_returns(branch)
                    if not _ends_in_return(branch):
                        branch = branch + [_locate(ast.Return(ast.Constant(None)), s)]
                    setattr(s, field, branch)
                out.append(s)
                return out
            out.append(s)
        return out

    # -- break / continue ------------------------------------------------------
    def lower_jumps(self, body: list, brk: str | None, cont: str | None) -> list:
        """Replaces break/continue in a loop body by flag assignments, and
        guards the statements after each by ``if not flag``."""
        out = []
        for i, s in enumerate(body):
            if isinstance(s, ast.Break) and brk:
                out.append(_assign(brk, ast.Constant(True), s))
                return out
            if isinstance(s, ast.Continue) and cont:
                out.append(_assign(cont, ast.Constant(True), s))
                return out
            if isinstance(s, ast.If):
                s.body = self.lower_jumps(s.body, brk, cont)
                s.orelse = self.lower_jumps(s.orelse, brk, cont)
            has_jump = _contains([s], (ast.Break, ast.Continue), stop_at_loops=True) or (
                isinstance(s, ast.If) and (_assigns(s, brk) or _assigns(s, cont)))
            out.append(s)
            if has_jump and i + 1 < len(body):
                flags = [f for f in (brk, cont) if f]
                test = _not_any(flags, s)
                rest = self.lower_jumps(body[i + 1:], brk, cont)
                guard = ast.If(test=test, body=rest, orelse=[])
                ast.copy_location(guard, s)
                out.append(guard)
                return out
        return out

    # -- statements --------------------------------------------------------------
    def stmts(self, stmts: list) -> list:
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s) -> list:
        if isinstance(s, ast.If):
            return self.if_(s)
        if isinstance(s, ast.While):
            return self.while_(s)
        if isinstance(s, ast.For):
            return self.for_(s)
        if isinstance(s, (ast.With, ast.AsyncWith, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                if hasattr(s, field):
                    setattr(s, field, self.stmts(getattr(s, field)))
            if isinstance(s, ast.Try):
                for h in s.handlers:
                    h.body = self.stmts(h.body)
        return [s]

    def _branch_fn(self, name: str, params: list, body: list, ret_names: list, loc) -> ast.FunctionDef:
        ret = ast.Return(value=_tuple_of(ret_names))
        fn = _fdef(name, params, (body or [ast.Pass()]) + [ret])
        return _locate(fn, loc)

    def if_(self, s: ast.If) -> list:
        returns = _ends_in_return(s.body) and _ends_in_return(s.orelse)
        body = self.stmts(s.body)
        orelse = self.stmts(s.orelse)
        names = self.state_names([n for n in _assigned(s.body + s.orelse) if n != "ag__retval"])
        if returns:
            names = names + ["ag__retval"]
            body = _returns_to_assign(body)
            orelse = _returns_to_assign(orelse)
        tname, fname = self.fresh("if_true"), self.fresh("if_false")
        out = [_init_undefined(names, s)]
        out.append(self._branch_fn(tname, names, body, names, s))
        out.append(self._branch_fn(fname, names, orelse, names, s))
        in_true, in_false = set(_assigned(s.body)), set(_assigned(s.orelse))
        both = ast.Tuple(elts=[ast.Constant(n == "ag__retval" or (n in in_true and n in in_false)) for n in names],
                         ctx=ast.Load())
        call = _call("if_stmt", [_convert_test(s.test), ast.Name(tname, ast.Load()), ast.Name(fname, ast.Load()),
                                 _tuple_of(names), _str_tuple(names), both])
        out.append(_locate(ast.Assign(targets=[_tuple_of(names, ast.Store())], value=call), s) if names else
                   _locate(ast.Expr(call), s))
        if returns:
            out.append(_locate(ast.Return(ast.Name("ag__retval", ast.Load())), s))
        return out

    def while_(self, s: ast.While) -> list:
        if s.orelse:
            return [s]  # `else` on a loop: left as Python (see above)
        if _contains(s.body, (ast.Return,), stop_at_loops=True):
            # `return` inside a loop is not converted: the loop stays Python
            # (fine for Python conditions; a tensor condition then raises).
            return [s]
        pre = []
        brk = cont = None
        if _contains(s.body, (ast.Break,), stop_at_loops=True):
            brk = self.fresh("ag__break")
            pre.append(_assign(brk, ast.Constant(False), s))
        if _contains(s.body, (ast.Continue,), stop_at_loops=True):
            cont = self.fresh("ag__continue")
        body = self.lower_jumps(s.body, brk, cont)
        if cont:
            body = [_assign(cont, ast.Constant(False), s)] + body
        body = self.stmts(body)
        names = self.state_names([n for n in _assigned(body) if n != cont])
        if brk and brk not in names:
            names.append(brk)
        test = _convert_test(s.test)
        if brk:
            test = _call("and_", [_call("not_", [ast.Name(brk, ast.Load())]),
                                  ast.Lambda(args=_args([]), body=test)])
        tname, bname = self.fresh("loop_test"), self.fresh("loop_body")
        out = pre + [_init_undefined(names, s)]
        test_fn = _locate(_fdef(tname, names, [ast.Return(test)]), s)
        out.append(test_fn)
        out.append(self._branch_fn(bname, names, body, names, s))
        call = _call("while_stmt", [ast.Name(tname, ast.Load()), ast.Name(bname, ast.Load()), _tuple_of(names),
                                    _str_tuple(names)])
        out.append(_locate(ast.Assign(targets=[_tuple_of(names, ast.Store())], value=call), s) if names else
                   _locate(ast.Expr(call), s))
        return out

    def for_(self, s: ast.For) -> list:
        if s.orelse:
            return [s]  # `else` on a loop: left as Python (see above)
        if _contains(s.body, (ast.Return,), stop_at_loops=True):
            # `return` inside a loop is not converted: the loop stays Python
            # (fine for Python conditions; a tensor condition then raises).
            return [s]
        pre = []
        brk = cont = None
        if _contains(s.body, (ast.Break,), stop_at_loops=True):
            brk = self.fresh("ag__break")
            pre.append(_assign(brk, ast.Constant(False), s))
        if _contains(s.body, (ast.Continue,), stop_at_loops=True):
            cont = self.fresh("ag__continue")
        body = self.lower_jumps(s.body, brk, cont)
        if cont:
            body = [_assign(cont, ast.Constant(False), s)] + body
        body = self.stmts(body)
        item = self.fresh("ag__item")
        target_names = _assigned([ast.Assign(targets=[s.target], value=ast.Constant(0))])
        body = [_locate(ast.Assign(targets=[s.target], value=ast.Name(item, ast.Load())), s)] + body
        names = self.state_names([n for n in _assigned(body) if n != cont and n not in target_names])
        if brk and brk not in names:
            names.append(brk)
        bname = self.fresh("loop_body")
        out = pre + [_init_undefined(names, s)]
        out.append(self._branch_fn(bname, [item] + names, body, names, s))
        it = s.iter
        if isinstance(it, ast.Call) and ((isinstance(it.func, ast.Name) and it.func.id == "range") or (
                isinstance(it.func, ast.Attribute) and it.func.attr == "range")) and not it.keywords:
            it = _locate(_call("range_", [it.func] + it.args), it)
        call = _call("for_stmt", [it, ast.Name(bname, ast.Load()), _tuple_of(names), _str_tuple(names),
                                  ast.Constant(names.index(brk) if brk else -1)])
        out.append(_locate(ast.Assign(targets=[_tuple_of(names, ast.Store())], value=call), s) if names else
                   _locate(ast.Expr(call), s))
        return out


def _fdef(name: str, params: list, body: list) -> ast.FunctionDef:
    kw = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    return ast.FunctionDef(name=name, args=_args(params), body=body, decorator_list=[], returns=None, **kw)


class _LogicalOps(ast.NodeTransformer):
    """``a and b`` / ``a or b`` / ``not a`` in a condition -> ``ag__`` calls
    (lazy in ``b``), so tensor operands become logical ops."""

    def visit_BoolOp(self, node):  # noqa: N802 - ast API
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        out = node.values[0]
        for v in node.values[1:]:
            out = _call(fn, [out, ast.Lambda(args=_args([]), body=v)])
        return ast.copy_location(out, node)

    def visit_UnaryOp(self, node):  # noqa: N802
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("not_", [node.operand]), node)
        return node

    def visit_Lambda(self, node):  # noqa: N802 - leave nested lambdas alone
        return node


class _Calls(ast.NodeTransformer):
    """``f(args)`` -> ``ag__.converted_call(f, args)`` (but not ``ag__.*``,
    ``super()`` or calls inside lambdas)."""

    def visit_Call(self, node):  # noqa: N802 - ast API
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "ag__":
            return node
        if isinstance(func, ast.Name) and func.id in ("super", "locals", "globals", "vars", "eval", "exec"):
            return node
        new = ast.Call(func=ast.Attribute(value=ast.Name("ag__", ast.Load()), attr="converted_call",
                                          ctx=ast.Load()), args=[func] + node.args, keywords=node.keywords)
        return ast.copy_location(new, node)

    def visit_IfExp(self, node):  # noqa: N802 - ast API
        # ``a if test else b`` -> ``ag__.if_exp(test, lambda: a, lambda: b)``
        self.generic_visit(node)
        new = _call("if_exp", [_convert_test(node.test), ast.Lambda(args=_args([]), body=node.body),
                               ast.Lambda(args=_args([]), body=node.orelse)])
        return ast.copy_location(new, node)

    def visit_Lambda(self, node):  # noqa: N802
        return node


def _convert_test(test):
    return ast.fix_missing_locations(_LogicalOps().visit(test))


def _ends_in_return(stmts: list) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _ends_in_return(last.body) and _ends_in_return(last.orelse)
    return False


def _returns_to_assign(stmts: list) -> list:
    out = []
    for s in stmts:
        if isinstance(s, ast.Return):
            out.append(_assign("ag__retval", s.value or ast.Constant(None), s))
        else:
            out.append(s)
    return out


def _assigns(s, name: str | None) -> bool:
    return bool(name) and name in _assigned([s])


def _not_any(flags: list, loc):
    test = _call("not_", [ast.Name(flags[0], ast.Load())])
    for f in flags[1:]:
        test = _call("and_", [test, ast.Lambda(args=_args([]), body=_call("not_", [ast.Name(f, ast.Load())]))])
    return _locate(test, loc)


def _copy(stmts: list) -> list:
    import copy

    return [copy.deepcopy(s) for s in stmts]


def _args(names: list) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def _tuple_of(names: list, ctx=None) -> ast.Tuple:
    ctx = ctx or ast.Load()
    return ast.Tuple(elts=[ast.Name(n, type(ctx)()) for n in names], ctx=ctx)


def _str_tuple(names: list) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _call(fn: str, args: list) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=ast.Name("ag__", ast.Load()), attr=fn, ctx=ast.Load()), args=args,
                    keywords=[])


def _assign(name: str, value, loc) -> ast.Assign:
    return _locate(ast.Assign(targets=[ast.Name(name, ast.Store())], value=value), loc)


def _init_undefined(names: list, loc):
    # `x = locals().get('x', Undefined('x'))`-style initialisation of each name
    # that may not exist yet, so branch functions can take it as an argument.
    body = []
    for n in names:
        body.append(ast.Try(
            body=[ast.Expr(ast.Name(n, ast.Load()))],
            handlers=[ast.ExceptHandler(type=ast.Tuple(elts=[ast.Name("NameError", ast.Load()),
                                                             ast.Name("UnboundLocalError", ast.Load())],
                                                       ctx=ast.Load()),
                                        name=None,
                                        body=[_assign(n, _call("Undefined", [ast.Constant(n)]), loc)])],
            orelse=[], finalbody=[]))
    if not body:
        return _locate(ast.Pass(), loc)
    return _locate(ast.If(test=ast.Constant(True), body=body, orelse=[]), loc)


def _locate(node, loc):
    ast.copy_location(node, loc)
    ast.fix_missing_locations(node)
    for n in ast.walk(node):
        if not hasattr(n, "lineno") or n.lineno is None:
            ast.copy_location(n, loc)
    return node


def _has_control_flow(tree) -> bool:
    fn = tree.body[0]
    return _contains(fn.body, (ast.If, ast.While, ast.For, ast.IfExp))


def convert(fn: Callable) -> Callable:
    """The AutoGraph-converted version of ``fn`` (``fn`` itself if it has no
    control flow or its source is unavailable)."""
    if isinstance(fn, types.MethodType):
        conv = convert(fn.__func__)
        return types.MethodType(conv, fn.__self__) if conv is not fn.__func__ else fn
    if not isinstance(fn, types.FunctionType) or getattr(fn, "__ag_do_not_convert__", False) or not _convertible(fn):
        return fn
    if fn in _CONVERTED:
        return _CONVERTED[fn] or fn
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
        _, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return fn
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef) or not (
            _has_control_flow(tree) or _calls_user_code(tree.body[0], fn)):
        _CONVERTED[fn] = None
        return fn
    fdef = tree.body[0]
    if any(isinstance(n, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom)) for n in ast.walk(fdef)):
        _CONVERTED[fn] = None  # rewriting into nested functions would change their meaning
        return fn
    fdef.decorator_list = []
    _explicit_super(fdef)
    tr = _Transformer()
    fdef.body = tr.stmts(tr.lift_returns(fdef.body))
    fdef.body = [_Calls().visit(stmt) for stmt in fdef.body]
    freevars = fn.__code__.co_freevars
    factory = _fdef("ag__factory", ["ag__", *freevars], [fdef, ast.Return(ast.Name(fdef.name, ast.Load()))])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, first_line - 1)
    code = compile(module, inspect.getsourcefile(fn) or "<autograph>", "exec")
    _mark_codes(code)
    ns: dict = {}
    exec(code, fn.__globals__, ns)  # noqa: S102 - the user's own function, rewritten
    cells = [c.cell_contents if _cell_ok(c) else Undefined(n) for c, n in zip(fn.__closure__ or (), freevars)]
    import sys

    new = ns["ag__factory"](sys.modules[__name__], *cells)
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(new, fn)
    del new.__wrapped__  # the cache's value must not keep its key alive
    _CONVERTED[fn] = new
    return new


def _mark_codes(code: types.CodeType) -> None:
    _USER_CODE.add(code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _mark_codes(c)


def _explicit_super(fdef: ast.FunctionDef) -> None:
    """``super()`` -> ``super(__class__, self)``: converted branches and loop
    bodies are nested functions, where the zero-argument form would break."""
    params = fdef.args.posonlyargs + fdef.args.args
    if not params:
        return
    first = params[0].arg
    for node in ast.walk(fdef):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
                and not node.args and not node.keywords):
            node.args = [ast.Name("__class__", ast.Load()), ast.Name(first, ast.Load())]


def _calls_user_code(fdef: ast.FunctionDef, fn) -> bool:
    """Whether ``fn`` calls a plain Python function that AutoGraph may need
    to convert (looked up by name in its globals and closure), or a builtin it overloads (``len``)."""
    scope = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        if _cell_ok(cell):
            scope[name] = cell.cell_contents
    first = fdef.args.args[0].arg if fdef.args.args else None  # a method's ``self``
    for node in ast.walk(fdef):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            target = scope.get(node.func.id)
            if target is not None and _convertible(target) and target is not fn:
                return True
            if node.func.id == "len" and scope.get("len", len) is len:
                return True  # AutoGraph's len of a tensor (see _len)
        if first is not None and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = node.func.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == first:
                return True  # self.helper(...), self.decoder.step(...): may be user methods (converted as TF's)
    return False


def _cell_ok(c) -> bool:
    try:
        c.cell_contents  # noqa: B018 - probing an empty cell
        return True
    except ValueError:
        return False


def convert_if_needed(fn: Callable) -> Callable:
    try:
        return convert(fn)
    except NotImplementedError:
        raise
    except Exception:  # noqa: BLE001 - unconvertible code runs as written
        return fn


def to_graph(entity: Callable, recursive: bool = True, experimental_optional_features: Any = None) -> Callable:
    """As ``tf.autograph.to_graph``: the converted Python function."""
    return convert(entity)


def do_not_convert(func: Callable | None = None):
    """As ``tf.autograph.experimental.do_not_convert``: leave ``func`` as written."""
    def mark(f):
        f.__ag_do_not_convert__ = True
        return f

    return mark(func) if func is not None else mark


def set_loop_options(parallel_iterations: Any = None, swap_memory: Any = None, maximum_iterations: Any = None,
                     shape_invariants: Any = None) -> None:
    """As ``tf.autograph.experimental.set_loop_options``: hints for the
    enclosing loop; tapeflow's loops need none (loop variables may change
    shape), so this accepts them and does nothing."""
    return None


# tf.autograph.experimental.*
experimental = types.SimpleNamespace(do_not_convert=do_not_convert, set_loop_options=set_loop_options,
                                     Feature=types.SimpleNamespace(ALL="ALL", AUTO_CONTROL_DEPS="AUTO_CONTROL_DEPS",
                                                                   ASSERT_STATEMENTS="ASSERT_STATEMENTS",
                                                                   BUILTIN_FUNCTIONS="BUILTIN_FUNCTIONS",
                                                                   EQUALITY_OPERATORS="EQUALITY_OPERATORS",
                                                                   LISTS="LISTS", NAME_SCOPES="NAME_SCOPES"))


def _converted_source(fn: Callable) -> str:
    """The source AutoGraph runs for ``fn``: its control flow rewritten into ``ag__`` calls."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    fn = getattr(fn, "python_function", fn)  # a tf.function: its Python function
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise ValueError(f"tf.autograph.to_code: unable to locate the source code of {fn!r} ({e}). Functions "
                         "defined in an interactive shell or with exec() do not expose their source.") from None
    tree = ast.parse(source)
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError(f"tf.autograph.to_code: {fn!r} is not a function defined with `def`.")
    fdef = tree.body[0]
    fdef.decorator_list = []
    if _has_control_flow(tree) or _calls_user_code(fdef, fn):
        _explicit_super(fdef)
        tr = _Transformer()
        fdef.body = tr.stmts(tr.lift_returns(fdef.body))
        fdef.body = [_Calls().visit(stmt) for stmt in fdef.body]
    fdef.name = f"tf__{fdef.name}"
    return ast.unparse(ast.fix_missing_locations(fdef)) + "\n"


def to_code(entity: Callable, recursive: bool = True, experimental_optional_features: Any = None) -> str:
    """As ``tf.autograph.to_code``: the Python source of ``entity`` as AutoGraph converts it (renamed
    ``tf__<name>``; ``if``/``while``/``for`` on tensors become ``ag__.if_stmt``/``while_stmt``/``for_stmt``
    over nested functions). tapeflow's converter is its own: the text is not TF's generated code."""
    return _converted_source(entity)


_VERBOSITY = 0


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """As ``tf.autograph.set_verbosity``: recorded (tapeflow's AutoGraph logs nothing)."""
    global _VERBOSITY
    _VERBOSITY = int(level)


def trace(*args: Any) -> None:
    """As ``tf.autograph.trace``: prints its arguments while the code runs (at trace time in a function)."""
    print(*args)
