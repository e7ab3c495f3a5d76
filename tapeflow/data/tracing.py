"""User functions of a pipeline (``map``, ``filter``) traced once, as TF traces them.

TF turns ``map_func`` into a graph function of the element spec (AutoGraph on)
and runs that graph per element. :class:`TracedFn` does the same with
``tf.function``: it traces ``fn`` with the parent's ``element_spec`` (``None``
dims stay unknown), runs the compiled graph straight on the pipeline's NumPy
arrays, and reads the output ``element_spec`` off the traced graph. An element
whose shape does not fit the traced spec (a generator without a signature) gets
one more trace with the differing dims relaxed to ``None``.

Elements holding ragged/sparse components or nested datasets keep the eager
per-element path (``fn`` runs on tensors, as before).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor, convert_to_tensor


def _trace_order(s: Any, out: list) -> None:
    """Leaves of an element in the order ``tf.function`` flattens its arguments (dict keys sorted by repr)."""
    if isinstance(s, dict):
        for k in sorted(s, key=repr):
            _trace_order(s[k], out)
    elif isinstance(s, (tuple, list)):
        for v in s:
            _trace_order(v, out)
    else:
        out.append(s)


def _is_plain(spec: Any) -> bool:
    from tapeflow.framework.tensor_spec import TensorSpec

    leaves: list = []
    _trace_order(spec, leaves)
    return all(type(x) is TensorSpec for x in leaves)


def _unpacks(element: Any) -> bool:
    return isinstance(element, tuple) and not hasattr(element, "_fields")


class TracedFn:
    """``fn`` of one pipeline element, traced with ``tf.function`` for the element spec ``spec``."""

    def __init__(self, fn: Callable, spec: Any) -> None:
        from tapeflow.graph.function import Function

        self._fn = fn
        self._function = fn if isinstance(fn, Function) else Function(fn)
        self._spec = spec
        self._cfs: dict = {}
        self._cf = self._trace(spec)

    def _trace(self, spec: Any) -> Any:
        args = spec if _unpacks(spec) else (spec,)
        return self._function.get_concrete_function(*args)

    @property
    def output_spec(self) -> Any:
        """The traced outputs as a structure of ``tf.TensorSpec`` (lists become tuples, as TF)."""
        from tapeflow.framework.tensor_spec import TensorSpec

        def one(t: Any) -> Any:
            if isinstance(t, Tensor):
                return TensorSpec(t.shape, t.dtype)
            return TensorSpec.from_tensor(convert_to_tensor(t))

        out = self._cf.structured_outputs
        if isinstance(out, list):
            out = tuple(out)
        return nest.map_structure(one, out)

    def _for(self, arrays: list) -> Any:
        shapes = arrays[0].shape if len(arrays) == 1 else tuple(a.shape for a in arrays)
        cf = self._cfs.get(shapes)
        if cf is not None:
            return cf
        cf = self._cf
        specs = cf._input_specs
        fits = len(specs) == len(arrays) and all(
            len(s) == len(a.shape) and all(d is None or d == n for d, n in zip(s, a.shape))
            for (s, _), a in zip(specs, arrays) if s is not None)
        if not fits:  # relax the dims that differ and trace once more
            from tapeflow.framework.tensor_spec import TensorSpec

            flat = iter(arrays)

            def relax(spec: Any) -> Any:
                a = next(flat)
                dims = spec.shape.as_list() if spec.shape.rank is not None else None
                if dims is None or len(dims) != a.ndim:
                    return TensorSpec(None, spec.dtype)
                return TensorSpec([d if d == n else None for d, n in zip(dims, a.shape)], spec.dtype)

            ordered: list = []
            _trace_order(self._spec, ordered)
            relaxed = [relax(s) for s in ordered]
            self._spec = _pack_trace_order(self._spec, iter(relaxed))
            cf = self._cf = self._trace(self._spec)
        self._cfs[shapes] = cf
        return cf

    def _packer(self, cf: Any) -> Any:
        """How to turn the compiled graph's output arrays into the element (arrays, lists as tuples)."""
        packer = self.__dict__.setdefault("_packers", {}).get(id(cf))
        if packer is not None:
            return packer
        out = cf._out_template
        leaves = nest.flatten(out)
        consts = [None if s >= 0 else np.asarray(convert_to_tensor(leaf)._value)
                  for s, leaf in zip(cf._out_slots, leaves)]
        slots = list(cf._out_slots)
        template = _lists_as_tuples(out)
        if len(leaves) == 1 and not isinstance(out, (tuple, list, dict)) and slots[0] >= 0:
            k = slots[0]
            packer = lambda res: res[k]  # noqa: E731 - the common single-tensor map
        else:
            def packer(res: list) -> Any:
                vals = [res[s] if s >= 0 else c for s, c in zip(slots, consts)]
                return nest.pack_sequence_as(template, vals)
        self._packers[id(cf)] = packer
        return packer

    def __call__(self, element: Any) -> Any:
        """``fn(element)`` on NumPy arrays through the compiled graph; the result as arrays (the
        element's structure, lists as tuples, as TF)."""
        if type(element) is np.ndarray:
            arrays = [element]
        else:
            arrays = []
            _trace_order(element, arrays)
        cf = self._for(arrays)
        captured = cf._captured
        if captured and not all(type(c) is Tensor for c in captured):
            out = cf._call_flat([Tensor(a) for a in arrays])
            return nest.map_structure(lambda t: np.asarray(t._value) if isinstance(t, Tensor) else t,
                                      _lists_as_tuples(out))
        res = cf._gf.compiled()(*arrays, *[c._value for c in captured]) if captured else cf._gf.compiled()(*arrays)
        return self._packer(cf)(res)


def _lists_as_tuples(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_lists_as_tuples(v) for v in x)
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return tuple(_lists_as_tuples(v) for v in x)
    if isinstance(x, dict):
        return type(x)((k, _lists_as_tuples(v)) for k, v in x.items())
    return x


def _pack_trace_order(template: Any, leaves: Any) -> Any:
    if isinstance(template, dict):
        new = {k: _pack_trace_order(template[k], leaves) for k in sorted(template, key=repr)}
        return {k: new[k] for k in template}
    if isinstance(template, tuple):
        items = [_pack_trace_order(v, leaves) for v in template]
        return type(template)(*items) if hasattr(template, "_fields") else tuple(items)
    if isinstance(template, list):
        return [_pack_trace_order(v, leaves) for v in template]
    return next(leaves)


def trace_or_none(fn: Callable, spec: Any) -> TracedFn | None:
    """A :class:`TracedFn`, or None when the element spec is not all dense tensors (ragged/sparse/datasets)."""
    if not _is_plain(spec):
        return None
    traced = TracedFn(fn, spec)
    out_leaves: list = []
    _trace_order(traced._cf.structured_outputs, out_leaves)
    from tapeflow.framework.composite_tensor import CompositeTensor

    if any(isinstance(x, CompositeTensor) for x in out_leaves):
        return None
    if any(not isinstance(x, Tensor) and _is_dataset(x) for x in out_leaves):
        return None
    return traced


def _is_dataset(x: Any) -> bool:
    from tapeflow.data.dataset import Dataset

    return isinstance(x, Dataset)
