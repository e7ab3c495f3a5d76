"""``tf.TensorArray``: a list of same-shaped tensors, written in loops.

Eagerly (and in graphs while every index is a Python int) it is a Python
list of tensors. Written or read at a symbolic index — inside a
``tf.while_loop`` body — it becomes one buffer tensor of shape
``(size, *element_shape)`` updated by ``TensorListSetItem`` ops, so it can be
a loop variable, and gradients flow through writes and reads. ``write``
returns the updated array (use the return value, as in TF).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.graph.graph import SymbolicTensor
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop

# How many iterations a While op saved (the first dim of a history output, unknown while tracing); also
# the length of a TensorArray written in a loop (its buffer is such a history). Used by control_flow.
HISTORY_LENGTH = defop("WhileHistoryLength", lambda h: np.int32(np.shape(h)[0]),
                       shape=lambda specs: [((), np.dtype(np.int32))])
NotDifferentiable("WhileHistoryLength")

__all__ = ["TensorArray"]


def _set_item_kernel(buf, i, v, grow, lazy=False):
    i = int(i)
    if lazy and buf.ndim == 1 and np.ndim(v) > 0:
        # the first write of an element whose shape was unknown when the buffer was made (1-D placeholder)
        buf = np.zeros(buf.shape[:1] + np.shape(v), buf.dtype)
    if i < 0:
        raise InvalidArgumentError(None, None, f"TensorArray index {i} is negative [Op:TensorListSetItem]")
    if i >= buf.shape[0] and not grow:
        raise InvalidArgumentError(
            None, None, f"Tried to write to index {i} but array is not resizeable and size is: {buf.shape[0]} "
            "[Op:TensorListSetItem]")
    if i >= buf.shape[0]:  # dynamic size: grow
        pad = np.zeros((i + 1 - buf.shape[0],) + buf.shape[1:], buf.dtype)
        buf = np.concatenate([buf, pad])
    else:
        buf = buf.copy()
    buf[i] = v
    return buf


def _set_item_shape(specs, grow, lazy=False):
    (shape, dtype), _, _ = specs
    if lazy:  # the element shape is known at run time only
        return [(None, dtype)]
    if not grow:
        return [(shape, dtype)]
    return [(None if shape is None else (None,) + tuple(shape[1:]), dtype)]


SET_ITEM = defop("TensorListSetItem", _set_item_kernel, shape=_set_item_shape)


def _get_item_kernel(buf, i):
    i = int(i)
    if not 0 <= i < buf.shape[0]:
        raise InvalidArgumentError(
            None, None, f"Tried to read from index {i} but array size is: {buf.shape[0]} [Op:TensorListGetItem]")
    return buf[i]


GET_ITEM = defop("TensorListGetItem", _get_item_kernel,
                 shape=lambda specs: [(None if specs[0][0] is None else tuple(specs[0][0][1:]), specs[0][1])])


def _pad_like_kernel(g, buf):
    # The gradient of a grown buffer, cut/padded back to the input's rows.
    n = buf.shape[0]
    if g.shape[0] >= n:
        return g[:n]
    return np.concatenate([g, np.zeros((n - g.shape[0],) + g.shape[1:], g.dtype)])


PAD_LIKE = defop("TensorListResizeLike", _pad_like_kernel, shape=lambda specs: [specs[1]])


@defgrad("TensorListResizeLike", inputs=True)
def _pad_like_grad(op, g):
    return execute(PAD_LIKE, (g, op.inputs[0])), None


@defgrad("TensorListSetItem", inputs=True)
def _set_item_grad(op, g):
    buf, i, v = op.inputs
    from tapeflow.ops import array_ops

    g_buf = execute(SET_ITEM, (g, i, array_ops.zeros_like(v)), {"grow": False})
    return execute(PAD_LIKE, (g_buf, buf)), None, execute(GET_ITEM, (g, i))


@defgrad("TensorListGetItem", inputs=True)
def _get_item_grad(op, g):
    buf, i = op.inputs
    from tapeflow.ops import array_ops

    return execute(SET_ITEM, (array_ops.zeros_like(buf), i, g), {"grow": False}), None


def _static_int(x: Any):
    if isinstance(x, SymbolicTensor):
        return None
    if isinstance(x, Tensor):
        return int(x.numpy())
    return None if x is None else int(x)


class TensorArray:
    """A list of tensors of one dtype, as ``tf.TensorArray``.

    >>> ta = tf.TensorArray(tf.float32, size=3)
    >>> for i in range(3):
    ...     ta = ta.write(i, tf.constant(float(i)))
    >>> ta.stack()
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0., 1., 2.], dtype=float32)>
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: Any = None, clear_after_read: Any = None,
                 tensor_array_name: Any = None, handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True, name: Any = None) -> None:
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        self._element_shape = None if element_shape is None else TensorShape(element_shape)
        n = _static_int(size)
        # A size known only at run time (inside tf.function): the array lives
        # as a zeros buffer of that length from the first write on.
        self._size_t = convert_to_tensor(size, dtype=dtypes.int32) if size is not None and n is None else None
        self._items: list | None = [None] * (n or 0)
        self._buffer: Tensor | None = None
        # an element shape unknown while tracing (a tf.numpy_function's output written in a loop): the buffer
        # takes its rows' shape at the first write, at run time
        self._lazy = False

    # -- internals ---------------------------------------------------------------
    def _copy(self) -> TensorArray:
        new = TensorArray.__new__(TensorArray)
        new._dtype, new._dynamic, new._element_shape = self._dtype, self._dynamic, self._element_shape
        new._size_t, new._lazy = self._size_t, self._lazy
        new._items = None if self._items is None else list(self._items)
        new._buffer = self._buffer
        return new

    def _with_buffer(self, buffer: Tensor) -> TensorArray:
        new = self._copy()
        new._items, new._buffer = None, buffer
        return new

    def _as_buffer(self) -> Tensor:
        new = self._copy()
        new._to_buffer()
        return new._buffer

    def _elem_shape(self) -> tuple | None:
        if self._element_shape is not None and self._element_shape.rank is not None:
            dims = tuple(self._element_shape.as_list())
            if None not in dims:
                return dims
        return None

    def _to_buffer(self) -> None:
        """List mode -> buffer mode (needs the element shape)."""
        if self._buffer is not None:
            return
        from tapeflow.ops import array_ops

        shape = self._elem_shape()
        if shape is None:
            known = [t for t in self._items if t is not None and t._shape_tuple() is not None
                     and None not in t._shape_tuple()]
            if not known:
                # rows of a shape known at run time: a 1-D placeholder of zeros until the first write
                self._lazy = True
                n = self._size_t if self._size_t is not None else len(self._items)
                self._buffer = array_ops.zeros([n], dtype=self._dtype)
                for i, t in enumerate(self._items):
                    if t is not None:
                        self._buffer = execute(SET_ITEM, (self._buffer, convert_to_tensor(i, dtype=dtypes.int32),
                                                          t), {"grow": False, "lazy": True})
                self._items = None
                return
            shape = tuple(known[0]._shape_tuple())
            self._element_shape = TensorShape(shape)
        rows = [t if t is not None else array_ops.zeros(shape, dtype=self._dtype) for t in self._items]
        if self._size_t is not None:
            self._buffer = array_ops.zeros([self._size_t, *shape], dtype=self._dtype)
        else:
            self._buffer = array_ops.stack(rows) if rows else array_ops.zeros((0,) + shape, dtype=self._dtype)
        self._items = None

    def _value(self, value: Any) -> Tensor:
        v = convert_to_tensor(value, dtype=self._dtype)
        if self._element_shape is not None and not self._element_shape.is_compatible_with(v.shape):
            raise ValueError(f"Could not write to TensorArray: element shape {self._element_shape} is not "
                             f"compatible with the value's shape {v.shape}.")
        if self._element_shape is None or self._element_shape.rank is None:
            self._element_shape = TensorShape(v._shape_tuple())
        return v

    # -- the API -------------------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape if self._element_shape is not None else TensorShape(None)

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic

    def write(self, index: Any, value: Any, name: Any = None) -> TensorArray:
        """The array with ``value`` at ``index`` (a new object, as TF)."""
        new = self._copy()
        v = new._value(value)
        i = _static_int(index)
        if new._items is not None and i is not None and new._size_t is None:
            if i < 0:
                raise InvalidArgumentError(None, None, f"TensorArray index {i} is negative.")
            if i >= len(new._items):
                if not new._dynamic:
                    raise InvalidArgumentError(
                        None, None, f"Tried to write to index {i} but array is not resizeable and size is: "
                        f"{len(new._items)}")
                new._items.extend([None] * (i + 1 - len(new._items)))
            new._items[i] = v
            return new
        new._to_buffer()
        n = (new._buffer._shape_tuple() or (None,))[0]
        if i is not None and n is not None and i >= n and not new._dynamic:
            raise InvalidArgumentError(
                None, None, f"Tried to write to index {i} but array is not resizeable and size is: {n}")
        idx = convert_to_tensor(index, dtype=dtypes.int32) if not isinstance(index, Tensor) else index
        attrs = {"grow": new._dynamic, "lazy": True} if new._lazy else {"grow": new._dynamic}
        new._buffer = execute(SET_ITEM, (new._buffer, idx, v), attrs)
        return new

    def read(self, index: Any, name: Any = None) -> Tensor:
        i = _static_int(index)
        if self._items is not None and i is not None:
            if not 0 <= i < len(self._items):
                raise InvalidArgumentError(
                    None, None, f"Tried to read from index {i} but array size is: {len(self._items)}")
            t = self._items[i]
            if t is None:
                from tapeflow.ops import array_ops

                shape = self._elem_shape()
                if shape is None:
                    raise ValueError(f"TensorArray: reading index {i}, never written, of unknown element shape.")
                return array_ops.zeros(shape, dtype=self._dtype)
            return t
        idx = convert_to_tensor(index, dtype=dtypes.int32) if not isinstance(index, Tensor) else index
        return execute(GET_ITEM, (self._as_buffer(), idx))

    def stack(self, name: Any = None) -> Tensor:
        if self._items is not None:
            from tapeflow.ops import array_ops

            if not self._items:
                shape = self._elem_shape() or (0,)
                return array_ops.zeros((0,) + tuple(shape), dtype=self._dtype)
            return self._as_buffer()
        return self._buffer

    def gather(self, indices: Any, name: Any = None) -> Tensor:
        from tapeflow.ops import array_ops

        return array_ops.gather(self.stack(), indices)

    def concat(self, name: Any = None) -> Tensor:
        from tapeflow.ops import array_ops

        if self._items is not None:
            return array_ops.concat([self.read(i) for i in range(len(self._items))], axis=0)
        raise NotImplementedError("TensorArray.concat of an array written at tensor indices is not supported yet; "
                                  "use stack() and reshape.")

    def unstack(self, value: Any, name: Any = None) -> TensorArray:
        from tapeflow.ops import array_ops

        v = convert_to_tensor(value, dtype=self._dtype)
        new = self._copy()
        new._element_shape = TensorShape(v._shape_tuple()[1:])
        n = v._shape_tuple()[0]
        if n is not None and not isinstance(v, SymbolicTensor):
            new._items = list(array_ops.unstack(v))
            new._buffer = None
        else:
            new._items, new._buffer = None, v
        return new

    scatter = None  # not implemented: see below

    def size(self, name: Any = None) -> Tensor:
        if self._items is not None:
            return convert_to_tensor(len(self._items), dtype=dtypes.int32)
        return execute(HISTORY_LENGTH, (self._buffer,))

    def close(self, name: Any = None) -> None:
        return None

    def __repr__(self) -> str:
        return f"<TensorArray dtype={self._dtype.name} element_shape={self.element_shape}>"


def _no_scatter(self, indices, value, name=None):
    raise NotImplementedError("TensorArray.scatter is not implemented in tapeflow yet; write elements in a loop.")


TensorArray.scatter = _no_scatter
