"""The debug-mode instrumentation behind ``tf.debugging``.

Nothing here runs unless a debugging feature is switched on: with every
feature off, ``state.debug_hook`` is ``None`` and no method is patched, so the
normal eager path is exactly the core's. Switching a feature on installs

* ``state.debug_hook`` (called by the core for every op and variable read,
  tape or no tape): it keeps the *op log* (every op with its input/output
  ids, shapes, dtypes, the tapes active at the time and the user's file:line)
  and runs the non-finite check;
* small wrappers around a few methods (``tf.constant``, ``Tensor.numpy``,
  ``Variable.assign``, ``GradientTape.gradient``/``stop_recording``/``__exit__``)
  that log what the op log cannot see: where constants and variables were
  created, values that left through NumPy and came back, assignments, tape
  pauses and exits. Each is restored when the last feature is switched off.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import threading
import weakref
from typing import Any

import numpy as np

from tapeflow.framework import nest
from tapeflow.framework.context import state

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_EXAMPLES_DIR = os.path.join(_PKG_DIR, "examples") + os.sep
_CONTEXTLIB = os.path.dirname(os.path.abspath(__import__("contextlib").__file__)) + os.sep + "contextlib.py"

# Bounds on the op log so a long debug session cannot grow without limit.
MAX_LOG = 200_000


def user_site(depth: int = 2) -> str | None:
    """``file:line (function)`` of the innermost frame outside tapeflow."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return None
    while f is not None:
        fn = f.f_code.co_filename
        if not ((fn.startswith(_PKG_DIR) and not fn.startswith(_EXAMPLES_DIR)) or fn == _CONTEXTLIB):
            return f"{_short(fn)}:{f.f_lineno} (in {f.f_code.co_name})"
        f = f.f_back
    return None


@functools.lru_cache(maxsize=1024)
def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


class Entry:
    """One logged event: an op, a variable read, an assign or a NumPy round trip."""

    __slots__ = ("seq", "kind", "type", "input_ids", "output_ids", "in_specs", "out_specs", "tapes", "site",
                 "extra")

    def __init__(self, seq, kind, type_, input_ids, output_ids, in_specs, out_specs, tapes, site, extra=None):
        self.seq = seq
        self.kind = kind  # "op" | "read" | "assign" | "numpy"
        self.type = type_
        self.input_ids = input_ids
        self.output_ids = output_ids
        self.in_specs = in_specs  # ((shape, np.dtype), ...)
        self.out_specs = out_specs
        self.tapes = tapes  # ids of the low-level tapes recording at the time
        self.site = site
        self.extra = extra

    def __repr__(self) -> str:
        return f"<Entry #{self.seq} {self.kind} {self.type} {self.input_ids}->{self.output_ids} at {self.site}>"


def _spec(t) -> tuple:
    v = t._value
    shape = v.shape  # None: unknown rank (a symbolic tensor while tracing)
    return (tuple(shape) if shape is not None else None, v.dtype)


class _Debug(threading.local):
    def __init__(self) -> None:
        self.bw_stack: list = []  # (rec, out_grads) of the gradient rules running now
        self.fn_stack: list = []  # names of the tf.function graphs being replayed to locate a NaN


class _Extensions:
    """What the modules built on this registry plug into it (tapeflow.debugging imports them all):
    numerics' per-op check and checked gradients, explain's gradient snapshots and strict mode,
    tape_info's growth check."""

    check_op: Any = None
    checked_op_gradients: Any = None
    snapshot: Any = None
    enforce_strict: Any = None
    check_growth: Any = None


EXT = _Extensions()


class Registry:
    """Everything debug mode has learnt so far (process-wide)."""

    def __init__(self) -> None:
        self.seq = itertools.count(1).__next__
        self.tracking = False  # source lines + op log
        self.numerics = False  # enable_check_numerics
        self.strict = False  # strict gradients
        self.growth_check = False  # warn on persistent tapes growing (also on in every other mode)
        self.producers: dict[int, Entry] = {}  # tensor/variable id -> entry that produced it
        self.assigns: dict[int, list] = {}  # variable id -> assign entries
        self.created: dict[int, str] = {}  # tensor/variable id -> creation site (constants, variables)
        self.select_branches: dict[int, tuple] = {}  # tensor id -> (branch "x"/"y", condition id) of a tf.where
        self.reported: set[int] = set()  # non-finite tensors already reported
        self.exits: dict[int, list] = {}  # low-level tape id -> [(seq, site)] block exits
        self.pauses: dict[int, list] = {}  # low-level tape id -> [[start, end, site]]
        self.snapshots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # GradientTape -> Snapshot
        self.growth: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # GradientTape -> [record counts]
        self.growth_steps = 5
        self.local = _Debug()
        self._check_op = None
        self._saved: dict = {}

    def clear(self) -> None:
        for d in (self.producers, self.assigns, self.created, self.select_branches, self.exits, self.pauses):
            d.clear()
        self.reported.clear()

    def _trim(self) -> None:
        # Drop the oldest half of the op log (dicts keep insertion order).
        for d, cap in ((self.producers, MAX_LOG), (self.created, MAX_LOG), (self.select_branches, MAX_LOG),
                       (self.assigns, MAX_LOG // 10), (self.exits, MAX_LOG // 10), (self.pauses, MAX_LOG // 10)):
            if len(d) > cap:
                for k in list(itertools.islice(d, len(d) // 2)):
                    del d[k]

    # -- the per-op hook -------------------------------------------------------
    def hook(self, op, inputs, attrs, outputs) -> None:
        if self.tracking:
            self._log(op, inputs, attrs, outputs)
        if self.numerics and op is not None and state.graph is None:  # tracing: no values to check
            self._check_op(self, op, inputs, attrs, outputs)
        if op is not None and op.name == "SelectV2":
            # Remember tf.where's branches: the backward check spots the where trap.
            self.select_branches[inputs[1]._id] = ("x", inputs[0]._id)
            self.select_branches[inputs[2]._id] = ("y", inputs[0]._id)
            if len(self.select_branches) > MAX_LOG:
                self._trim()

    def _log(self, op, inputs, attrs, outputs) -> None:
        st = state
        tapes = tuple(id(t) for t in st.tapes)
        site = user_site(3)
        if op is None:  # a variable read: inputs == (var,)
            var, value = inputs[0], outputs[0]
            e = Entry(self.seq(), "read", "ReadVariableOp", (var._id,), (value._id,),
                      (_spec(value),), (_spec(value),), tapes, site, extra=var)
        else:
            e = Entry(self.seq(), "op", op.name, tuple(t._id for t in inputs), tuple(o._id for o in outputs),
                      tuple(_spec(t) for t in inputs), tuple(_spec(o) for o in outputs), tapes, site,
                      extra=dict(attrs) if attrs else None)
        producers = self.producers
        for oid in e.output_ids:
            producers[oid] = e
        # Stamp the user line on the records this op just added to tapes.
        out_ids = e.output_ids
        for tp in st.tapes:
            recs = tp.records
            if recs and recs[-1].output_ids == out_ids:
                recs[-1].source_info = site
        if len(producers) > MAX_LOG:
            self._trim()

    # -- install / uninstall ---------------------------------------------------
    def refresh(self) -> None:
        """(Un)installs the hook and the wrappers to match the switches."""
        from tapeflow.eager import backprop

        any_on = self.tracking or self.numerics or self.strict or self.growth_check
        state.debug_hook = self.hook if (self.tracking or self.numerics) else None
        state.update_recording()
        if self.numerics:
            self._check_op = EXT.check_op
            backprop.debug_op_gradients = EXT.checked_op_gradients
        else:
            backprop.debug_op_gradients = None
        if any_on and not self._saved:
            self._patch()
        elif not any_on and self._saved:
            self._unpatch()

    def _patch(self) -> None:
        from tapeflow.eager.backprop import GradientTape
        from tapeflow.framework import namespaces
        from tapeflow.framework import tensor as tensor_mod
        from tapeflow.framework.tensor import Tensor
        from tapeflow.framework.variables import Variable

        tapeflow = namespaces.get("tapeflow")  # the public tf namespace (tf.constant is wrapped there too)
        reg = self
        saved = self._saved
        saved[(tensor_mod, "constant")] = tensor_mod.constant
        saved[(tapeflow, "constant")] = tapeflow.constant
        saved[(Tensor, "numpy")] = Tensor.__dict__["numpy"]
        saved[(Variable, "__init__")] = Variable.__dict__["__init__"]
        for name in ("assign", "assign_add", "assign_sub"):
            saved[(Variable, name)] = Variable.__dict__[name]
        for name in ("gradient", "stop_recording", "__exit__"):
            saved[(GradientTape, name)] = GradientTape.__dict__[name]

        orig_constant = tensor_mod.constant

        def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None):
            t = orig_constant(value, dtype, shape, name)
            if reg.tracking:
                reg._on_constant(value, t)
            return t

        constant.__doc__ = orig_constant.__doc__
        constant.__wrapped__ = orig_constant
        tensor_mod.constant = constant
        tapeflow.constant = constant

        orig_numpy = saved[(Tensor, "numpy")]

        def numpy(self):
            v = orig_numpy(self)
            if reg.tracking and self._value.dtype.kind in "fc":
                v = reg._on_export(self, v)
            return v

        numpy.__doc__ = orig_numpy.__doc__
        Tensor.numpy = numpy

        orig_var_init = saved[(Variable, "__init__")]

        def var_init(self, *args, **kwargs):
            orig_var_init(self, *args, **kwargs)
            if reg.tracking:
                reg.created[self._id] = user_site(2)

        Variable.__init__ = var_init

        def make_assign(name, orig):
            def assign(self, value, *args, **kwargs):
                out = orig(self, value, *args, **kwargs)
                if reg.tracking:
                    reg._on_assign(self, value, name)
                return out

            assign.__doc__ = orig.__doc__
            return assign

        for name in ("assign", "assign_add", "assign_sub"):
            setattr(Variable, name, make_assign(name, saved[(Variable, name)]))

        orig_gradient = saved[(GradientTape, "gradient")]

        def gradient(self, target, sources, *args, **kwargs):
            tp = self._tape
            snap = None
            if tp is not None:
                snap = EXT.snapshot(tp, list(tp.records), user_site(2))
                if self._persistent:
                    EXT.check_growth(reg, self, len(tp.records))
            result = orig_gradient(self, target, sources, *args, **kwargs)
            if snap is not None:
                pairs = zip(nest.flatten(sources), nest.flatten(result))
                snap.none_ids = {getattr(src, "_id", None) for src, g in pairs if g is None}
                if not self._persistent:
                    reg.snapshots[self] = snap
            if reg.strict:
                unconnected = kwargs.get("unconnected_gradients", args[1] if len(args) > 1 else "none")
                EXT.enforce_strict(self, snap, target, sources, result, unconnected)
            return result

        gradient.__doc__ = orig_gradient.__doc__
        GradientTape.gradient = gradient

        orig_stop = saved[(GradientTape, "stop_recording")]

        import contextlib

        @contextlib.contextmanager
        def stop_recording(self):
            tp = self._tape
            site = user_site(3)
            with orig_stop(self):
                span = [reg.seq(), None, site]
                if reg.tracking and tp is not None:
                    reg.pauses.setdefault(id(tp), []).append(span)
                try:
                    yield
                finally:
                    span[1] = reg.seq()

        stop_recording.__doc__ = orig_stop.__doc__
        GradientTape.stop_recording = stop_recording

        orig_exit = saved[(GradientTape, "__exit__")]

        def __exit__(self, typ, value, traceback):  # noqa: N807 - the method it wraps
            tp = self._tape
            if reg.tracking and tp is not None and self._recording:
                reg.exits.setdefault(id(tp), []).append((reg.seq(), user_site(2)))
            return orig_exit(self, typ, value, traceback)

        GradientTape.__exit__ = __exit__

    def _unpatch(self) -> None:
        for (owner, name), value in self._saved.items():
            setattr(owner, name, value)
        self._saved.clear()

    # -- events the op log cannot see -------------------------------------------
    def _on_constant(self, value, t) -> None:
        site = user_site(3)
        self.created[t._id] = site
        if len(self.created) > MAX_LOG:
            self._trim()
        src = value._tf_source if isinstance(value, ExportedArray) else None
        if src is not None:
            tid, export_site = src
            e = Entry(self.seq(), "numpy", "NumPy round trip", (tid,), (t._id,), (), (_spec(t),),
                      tuple(id(tp) for tp in state.tapes), site, extra=export_site)
            self.producers[t._id] = e

    def _on_export(self, t, v):
        if not isinstance(v, np.ndarray):
            # A NumPy scalar (rank 0) cannot carry its origin; turning it into
            # a 0-d array would change what .numpy() returns, so it is let go.
            return v
        site = user_site(3)
        arr = v.view(ExportedArray)
        arr._tf_source = (t._id, site)  # travels with NumPy results computed from arr
        return arr

    def _on_assign(self, var, value, how: str) -> None:
        from tapeflow.framework.tensor import Tensor

        if isinstance(value, Tensor):
            e = Entry(self.seq(), "assign", f"Variable.{how}", (value._id,), (var._id,), (_spec(value),), (),
                      tuple(id(tp) for tp in state.tapes), user_site(3))
            hist = self.assigns.setdefault(var._id, [])
            hist.append(e)
            del hist[:-16]  # an optimizer assigns every step: keep the recent ones


class ExportedArray(np.ndarray):
    """A NumPy array returned by ``Tensor.numpy()`` in debug mode: it remembers
    which tensor it came from (and NumPy math on it keeps that), so a value
    that comes back through ``tf.constant`` is recognised."""

    _tf_source: tuple | None = None

    def __array_finalize__(self, obj) -> None:
        self._tf_source = getattr(obj, "_tf_source", None)

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))

    def __str__(self) -> str:
        return str(self.view(np.ndarray))


REGISTRY = Registry()
