"""``tf.Variable``: mutable state that tapes watch when it is read.

Each read produces a fresh Tensor linked to the variable on active tapes (a
``ReadVariableOp`` record), so the gradient w.r.t. a variable sums over all
its reads and an assignment between two reads is respected: the stored array
is replaced, never mutated, so values a tape saved stay intact.
"""

from __future__ import annotations

import contextlib
import enum
import sys
import threading
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import distribution_hooks as hooks
from tapeflow.framework import dtypes
from tapeflow.framework.context import state
from tapeflow.framework.tensor import Reference, Tensor, convert_to_tensor, new_id, register_tensor_conversion_function
from tapeflow.framework.tensor_shape import TensorShape

# Set by the autodiff core (tapeflow.eager.backprop): links an eager read of a variable to the active tapes.
read_hook = None


# Keras's autocast: while a mixed-precision layer's call() runs, [0] holds a
# function casting a floating variable's value to the compute dtype; only
# variables made by Layer.add_weight(autocast=True) take part.
autocast_scope: list = [None]



def _remember(var: Any) -> None:
    """A Keras dry run (a functional model's symbolic call) assigns to ``var``: keep its value to restore."""
    journal = state.dry_run_journal
    if journal is not None and var._id < journal[0]:
        journal[1].setdefault(var._id, (var, var._value))

class VariableSynchronization(enum.Enum):
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class _CreatorStack(threading.local):
    def __init__(self) -> None:
        self.creators: list = []


_CREATORS = _CreatorStack()  # tf.variable_creator_scope's creators, innermost last (per thread)


@contextlib.contextmanager
def variable_creator_scope(variable_creator: Callable) -> Any:
    """``tf.variable_creator_scope``: inside it, ``tf.Variable(...)`` calls
    ``variable_creator(next_creator, **kwargs)`` (innermost scope first) with TF's thirteen keyword arguments
    (``initial_value``, ``trainable``, ``name``, ``dtype``, ``shape``, ...); ``next_creator(**kwargs)`` makes the
    variable (or calls the next creator out).

    >>> def frozen(next_creator, **kwargs):
    ...     kwargs["trainable"] = False
    ...     return next_creator(**kwargs)
    >>> with tf.variable_creator_scope(frozen):
    ...     v = tf.Variable(1.0)
    >>> v.trainable
    False
    """
    _CREATORS.creators.append(variable_creator)
    try:
        yield
    finally:
        _CREATORS.creators.pop()


class _VariableMeta(type):
    """``tf.Variable(...)`` goes through the creator scopes (as TF's ``VariableMetaclass``); subclasses do not."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is not Variable or not _CREATORS.creators:
            return super().__call__(*args, **kwargs)
        return _through_creators(*args, **kwargs)


def _through_creators(initial_value: Any = None, trainable: Any = None, validate_shape: bool = True,
                      caching_device: Any = None, name: Any = None, variable_def: Any = None, dtype: Any = None,
                      import_scope: Any = None, constraint: Any = None, synchronization: Any = None,
                      aggregation: Any = None, shape: Any = None,
                      experimental_enable_variable_lifting: Any = None) -> Any:
    def make(**kw: Any) -> Variable:
        if kw.get("experimental_enable_variable_lifting") is None:
            kw["experimental_enable_variable_lifting"] = True
        return type.__call__(Variable, **kw)

    creator = make
    for outer in _CREATORS.creators:
        creator = (lambda c, nxt: lambda **kw: c(nxt, **kw))(outer, creator)
    return creator(
        initial_value=initial_value, trainable=trainable, validate_shape=validate_shape,
        caching_device=caching_device, name=name, variable_def=variable_def, dtype=dtype, import_scope=import_scope,
        constraint=constraint,
        synchronization=VariableSynchronization.AUTO if synchronization is None else synchronization,
        aggregation=VariableAggregation.NONE if aggregation is None else aggregation, shape=shape,
        experimental_enable_variable_lifting=experimental_enable_variable_lifting)


class Variable(metaclass=_VariableMeta):
    """A tensor-valued variable, as ``tf.Variable``.

    >>> v = tf.Variable([1.0, 2.0])
    >>> v.assign_add([1.0, 1.0]).numpy()
    array([2., 3.], dtype=float32)
    """

    __array_priority__ = 100
    _autocast = False  # read in a Keras layer's compute dtype under mixed precision (see autocast_scope)

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool | None = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: str | None = None,
        variable_def: Any = None,
        dtype: Any = None,
        import_scope: Any = None,
        constraint: Callable | None = None,
        synchronization: VariableSynchronization = VariableSynchronization.AUTO,
        aggregation: VariableAggregation = VariableAggregation.NONE,
        shape: Any = None,
        experimental_enable_variable_lifting: bool = True,
    ) -> None:
        if initial_value is None:
            raise ValueError("The `initial_value` arg (`None`) must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError(f"The `constraint` argument must be a callable. Received: {constraint}")
        if callable(initial_value):
            initial_value = initial_value()
        if state.graph is not None and hasattr(state.graph, "on_variable_created"):
            state.graph.on_variable_created(self)
        init = _to_eager_value(initial_value, dtype)
        self._value = init._value
        if hooks.on_variable_created is not None:  # under a multi-process strategy's scope: rank 0's value
            self._value = hooks.on_variable_created(self._value)
        self._dtype = init.dtype
        self._shape = TensorShape(shape) if shape is not None else TensorShape(self._value.shape)
        if validate_shape and shape is not None and not self._shape.is_compatible_with(self._value.shape):
            raise ValueError(
                f"The initial value's shape ({TensorShape(self._value.shape)}) is not compatible with the "
                f"explicitly supplied `shape` argument ({self._shape})."
            )
        if synchronization == VariableSynchronization.ON_READ and trainable:
            raise ValueError("Synchronization value can be set to VariableSynchronization.ON_READ only for "
                             "non-trainable variables.")
        if trainable is None:
            trainable = synchronization != VariableSynchronization.ON_READ
        self._trainable = bool(trainable)
        self._name = _scoped_name(name or "Variable")
        self._constraint = constraint
        self._synchronization = synchronization
        self._aggregation = aggregation
        self._id = new_id()
        self._initial_value = init

    @property
    def initializer(self) -> Any:
        """In a TF 1 graph (``tf.Graph().as_default()``): the op assigning the initial value (run it with
        ``Session.run``); None when executing eagerly, where the variable is initialized when made."""
        g = state.graph
        return g.initializer(self) if g is not None and hasattr(g, "initializer") else None

    # -- reading ------------------------------------------------------------
    def value(self) -> Tensor:
        """The current value as a Tensor; recorded on active tapes."""
        st = state
        if st.graph is not None:
            t = st.graph.read_variable(self)
        else:
            t = Tensor(self._value)
            if st.recording:
                read_hook(self, t)
        if autocast_scope[0] is not None and self._autocast:
            return autocast_scope[0](t)
        return t

    def read_value(self) -> Tensor:
        return self.value()

    def _snapshot(self) -> Tensor:
        """The current value, not recorded anywhere."""
        return Tensor(self._value)

    def numpy(self):
        return self._snapshot().numpy()

    def __array__(self, dtype=None, copy=None):
        return self._snapshot().__array__(dtype, copy)

    # -- writing ------------------------------------------------------------
    def _check_value(self, value: Any, op: str) -> np.ndarray:
        if type(value) is Tensor:  # fast path: an eager tensor of the right dtype and shape
            arr = value._value
            cur = self._value
            if arr.dtype == cur.dtype and arr.shape == cur.shape:
                return arr
        try:
            t = convert_to_tensor(value, dtype=self._dtype)
        except (TypeError, ValueError) as e:
            raise type(e)(
                f"Cannot {op} variable '{self.name}' of dtype {self._dtype.name} with {value!r}: {e}. "
                f"Cast the value to {self._dtype.name} first (tf.cast)."
            ) from None
        if state.graph is not None and hasattr(t, "_graph"):
            return t
        arr = t._value
        if not self._shape.is_compatible_with(arr.shape):
            raise ValueError(
                # TF's text, its stray space and missing one included
                f"Cannot {op} value to variable ' {self.name}': Shape mismatch.The variable shape "
                f"{self._shape}, and the assigned value shape {TensorShape(arr.shape)} are incompatible."
            )
        return arr

    def _maybe_return(self, read_value: bool):
        if not read_value:
            return None
        if "path" in self.__dict__:  # a Keras 3 variable: Keras's own assign semantics (the variable itself)
            return self
        return _UnreadVariable._of(self)

    def assign(self, value: Any, use_locking: Any = None, name: Any = None, read_value: bool = True):
        """Sets the value; a wrong shape or dtype raises and changes nothing."""
        new = self._check_value(value, "assign")
        if state.graph is not None:
            return state.graph.assign_variable(self, new, "assign", read_value)
        if state.dry_run:
            _remember(self)
        self._value = new
        return self._maybe_return(read_value)

    def assign_add(self, delta: Any, use_locking: Any = None, name: Any = None, read_value: bool = True):
        d = self._check_value(delta, "assign_add")
        if state.graph is not None:
            return state.graph.assign_variable(self, d, "assign_add", read_value)
        if state.dry_run:
            _remember(self)
        self._update(d, np.add)
        return self._maybe_return(read_value)

    def assign_sub(self, delta: Any, use_locking: Any = None, name: Any = None, read_value: bool = True):
        if type(delta) is Tensor and state._graph is None and not state.dry_run:
            # The eager step's ``v.assign_sub(lr * g)``: _check_value's fast path and _update's in-place
            # case in one (the same test: an array nothing else holds, of the variable's dtype and shape).
            v, d = self._value, delta._value
            if type(v) is np.ndarray and type(d) is np.ndarray and d.dtype == v.dtype and d.shape == v.shape \
                    and sys.getrefcount(v) <= _SOLE_OWNER and v.flags.writeable:
                np.subtract(v, d, v)  # (out= by position: no keyword parsing)
                return self._maybe_return(read_value)
        d = self._check_value(delta, "assign_sub")
        if state.graph is not None:
            return state.graph.assign_variable(self, d, "assign_sub", read_value)
        if state.dry_run:
            _remember(self)
        self._update(d, np.subtract)
        return self._maybe_return(read_value)

    def _update(self, delta: Any, ufunc) -> None:
        v = self._value
        # In place only when nothing else can see the array (no Tensor from a
        # read, no tape, no view, no .numpy() result): then a saved value can
        # never change under anyone. Otherwise a new array, as before.
        if type(v) is np.ndarray and sys.getrefcount(v) <= _SOLE_OWNER and v.flags.writeable \
                and getattr(delta, "shape", None) == v.shape:
            ufunc(v, delta, out=v)
        else:
            self._value = _same_kind(ufunc(v, delta), v)

    def _scatter(self, sparse_delta: Any, how: str):
        if not (hasattr(sparse_delta, "values") and hasattr(sparse_delta, "indices")):
            raise TypeError(f"{how}: sparse_delta is not IndexedSlices: {sparse_delta!r}. Pass "
                            "tf.IndexedSlices(values, indices), or use scatter_nd_update(indices, updates).")
        values = np.asarray(convert_to_tensor(sparse_delta.values, dtype=self._dtype)._value)
        indices = np.asarray(convert_to_tensor(sparse_delta.indices)._value)
        n = self._value.shape[0]
        if indices.size and (indices.min() < 0 or indices.max() >= n):
            from tapeflow.framework.errors import InvalidArgumentError

            raise InvalidArgumentError(
                f"{how} on variable '{self.name}': indices must be in [0, {n}), got {indices.min()}..{indices.max()}."
            )
        new = self._value
        # Update in place (O(rows touched), what sparse optimizer steps need) only
        # when no Tensor read from the variable still holds this array, like TF's
        # copy-on-write; otherwise copy, so earlier reads and tape-saved values stay intact.
        if sys.getrefcount(new) > 3 or not new.flags.writeable:
            new = np.array(new, copy=True)
        if how == "scatter_add":
            np.add.at(new, indices, values)
        elif how == "scatter_sub":
            np.subtract.at(new, indices, values)
        elif how == "scatter_max":
            np.maximum.at(new, indices, values)
        elif how == "scatter_min":
            np.minimum.at(new, indices, values)
        else:
            new[indices] = values
        self._value = new
        return self

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: Any = None):
        return self._scatter(sparse_delta, "scatter_add")

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: Any = None):
        return self._scatter(sparse_delta, "scatter_sub")

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: Any = None):
        return self._scatter(sparse_delta, "scatter_update")

    def scatter_max(self, sparse_delta: Any, use_locking: bool = False, name: Any = None):
        return self._scatter(sparse_delta, "scatter_max")

    def scatter_min(self, sparse_delta: Any, use_locking: bool = False, name: Any = None):
        return self._scatter(sparse_delta, "scatter_min")

    # scatter_nd_update / _add / _sub / _max / _min are ops (TF's ResourceScatterNd*): the op layer
    # installs them (tapeflow.ops.tensor_operators).

    # -- properties ---------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def _shape_tuple(self) -> tuple:
        return self._value.shape

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def name(self) -> str:
        return self._name

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def synchronization(self):
        return self._synchronization

    @property
    def aggregation(self):
        return self._aggregation

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def device(self) -> str:
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def handle(self):
        return self

    def ref(self) -> Reference:
        return Reference(self)

    experimental_ref = ref

    def __hash__(self):
        raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key.")

    def __bool__(self) -> bool:
        return bool(self._snapshot())

    def __float__(self) -> float:
        return float(self._snapshot())

    def __int__(self) -> int:
        return int(self._snapshot())

    def __index__(self) -> int:
        return self._snapshot().__index__()

    def __len__(self) -> int:
        return len(self._snapshot())

    def __iter__(self):
        return iter(self.value())

    def __repr__(self) -> str:
        from tapeflow.framework.tensor import _numpy_repr

        path = self.__dict__.get("path")
        tracing = state.graph is not None  # in a tf.function, TF has no value to show
        if path is not None:  # a Keras 3 variable (add_weight, metrics, optimizers) prints as Keras's
            v = self._value  # a 0-d value prints as a Python number there (value=0.10000000149011612)
            value = "" if tracing else f", value={v.item() if v.ndim == 0 else v}"
            return f"<Variable path={path}, shape={tuple(v.shape)}, dtype={self._dtype.name}{value}>"
        if tracing:
            return f"<tf.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}>"
        text = _numpy_repr(self._snapshot())
        sep = "\n" if "\n" in text else ""  # as TF: a multi-line array starts on its own line
        return f"<tf.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}, numpy={sep}{text}>"

    def __str__(self) -> str:
        return self.__repr__()

    def __deepcopy__(self, memo):
        v = Variable(np.array(self._value, copy=True), trainable=self._trainable, name=self._name.split(":")[0],
                     constraint=self._constraint)
        memo[id(self)] = v
        return v

    def __reduce__(self):
        return _rebuild_variable, (self.numpy(), self._trainable, self._name.split(":")[0])


# References to a variable's array when it alone holds it: its attribute, the
# local name in _update, and getrefcount's argument.
_SOLE_OWNER = 3


def _rebuild_variable(value, trainable, name):
    return Variable(value, trainable=trainable, name=name)


def _same_kind(new: Any, old: Any):
    if getattr(new, "dtype", None) != old.dtype:
        return np.asarray(new).astype(old.dtype)
    return new


def _to_eager_value(initial_value: Any, dtype: Any) -> Tensor:
    if isinstance(initial_value, Variable):
        initial_value = initial_value._snapshot()
    t = convert_to_tensor(initial_value, dtype=dtype)
    if not hasattr(t, "_value") or t._value is None or hasattr(t, "_graph"):
        # A symbolic initial value during tracing: the graph layer evaluates it.
        t = state.graph.evaluate_initial_value(t)
    return t


_name_scope_stack: list[str] = []


def _scoped_name(name: str) -> str:
    if ":" in name:
        return name
    prefix = "/".join(_name_scope_stack)
    return f"{prefix}/{name}:0" if prefix else f"{name}:0"


def _variable_to_tensor(v: Variable, dtype=None):
    t = v.value()
    if dtype is not None and t.dtype is not dtype:
        raise ValueError(
            f"Tensor conversion requested dtype {dtype.name} for variable '{v.name}' with dtype {v.dtype.name}."
        )
    return t


register_tensor_conversion_function(Variable, _variable_to_tensor)


class _UnreadVariable(Variable):
    """What an eager ``assign``/``assign_add``/``assign_sub`` returns, as TF's ``_UnreadVariable``: the same
    variable (it shares its state: reads, further assigns and gradients go to the variable), printed as
    ``<tf.Variable 'UnreadVariable' ...>``."""

    @classmethod
    def _of(cls, var: Variable) -> _UnreadVariable:
        alias = object.__new__(cls)
        alias.__dict__ = var.__dict__  # one state for both objects
        return alias

    @property
    def name(self) -> str:
        return "UnreadVariable"
