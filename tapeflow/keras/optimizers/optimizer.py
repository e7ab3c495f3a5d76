"""The Keras optimizer base class (``tf.keras.optimizers.Optimizer``).

The update rules follow the Keras 3 that ships with TF >= 2.16 step for step
(same operation order, same float32 constants), so values after N steps equal
TF's. One ``apply`` does what Keras does, in its order:

    filter None gradients -> unscale (loss_scale_factor) -> clip (clipnorm |
    global_clipnorm | clipvalue) -> weight decay -> update_step per variable
    -> constraints -> EMA -> iterations += 1

Speed: in eager mode the built-in optimizers run their rule on the NumPy
arrays behind the variables (``_fast_arrays``) and store each result as a new
array (never mutating one in place, so values a tape saved stay intact).
Inside ``tf.function`` the very same rule runs on symbolic tensors through
tapeflow ops and ``Variable.assign*``: each rule is written once, against the
small ``K`` namespace (``_ArrayOps`` / ``_TensorOps``).

Sparse gradients (``tf.IndexedSlices``) are kept as given, repeated rows
included, as Keras 3 with the TensorFlow backend does: there an elementwise op
on the gradient (``ops.square``, ``ops.abs``, ``ops.multiply`` by a scalar or
by a gathered dense tensor, ``ops.divide`` by one) acts on each slice of the
values separately, and the slices are only summed per row when the result
meets a dense tensor (``ops.add`` / ``ops.subtract`` / ``ops.maximum``:
``tf.convert_to_tensor`` of the slices, an ``unsorted_segment_sum``) or is
scattered into a variable (``scatter_add`` / ``scatter_sub``: one slice after
the other). So with repeated indices Adam's second moment gets the sum of the
squares (not the square of the sum), and the rules give TF's numbers, not
the dense gradient's. SGD and RMSprop without momentum, Adagrad, Adadelta and
Adafactor change only the gradient's rows of the variable, as in Keras (and
eagerly write them in place: repeated slices are added round by round, the
k-th slice of every row at once, which is np.add.at's order). A
user-written rule (a subclass) gets the gradient densified. ``clipnorm``
(``tf.clip_by_norm``) and ``clipvalue`` act on the slices; ``global_clipnorm``
makes the gradient dense (Keras's ``v * scale``); ``loss_scale_factor``
with a sparse gradient raises TypeError, as in Keras (``IndexedSlices /
float``). Keras's division of the slices by a dense tensor that is 0 or NaN
somewhere (RMSprop / Adagrad / Adadelta with ``epsilon=0``) takes another
code path (a union of indices: NaN in the other rows, an error with repeated
indices) that tapeflow does not reproduce: eagerly with ``epsilon=0`` this
raises NotImplementedError; otherwise (a NaN or, centered RMSprop, a rounded
negative denominator, or while tracing) the slices are divided by their own
rows only. With ``gradient_accumulation_steps`` the gradient is densified
(Keras's ``g + accumulator``) and the rules read ``iterations`` as apply
calls // steps, as Keras.
"""

from __future__ import annotations

import re
import sys
import warnings
from typing import Any
from collections.abc import Callable, Iterable

import numpy as np

from tapeflow.framework import distribution_hooks as dist_hooks
from tapeflow.framework import dtypes
from tapeflow.framework.context import state
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable

__all__ = ["Optimizer"]

_name_counts: dict[str, int] = {}


def _auto_name(cls_name: str) -> str:
    # Keras names optimizers "adam", "adam_1", ... per process (to_snake_case of the class name).
    base = re.sub(r"(?<!^)(?=[A-Z])", "_", cls_name).lower() if not cls_name.isupper() else cls_name.lower()
    base = {"s_g_d": "sgd", "r_m_sprop": "rm_sprop"}.get(base, base)  # Keras 3: "rm_sprop", "adam_w"
    n = _name_counts.get(base, 0)
    _name_counts[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


class _VariableList(list):
    """``optimizer.variables`` is a list (Keras 3) that can also be called
    (``optimizer.variables()``, as in TF 2's Keras 2 optimizers)."""

    def __call__(self) -> list:
        return list(self)


class _Sparse:
    """An IndexedSlices gradient as the rules see it: ``values`` and
    ``indices`` as given (repeated rows kept, in order), NumPy arrays in the
    eager fast path or tensors while tracing (see module docstring)."""

    __slots__ = ("values", "indices", "dense_shape", "_rows")

    def __init__(self, values: Any, indices: Any, dense_shape: tuple, rows: Any = None) -> None:
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape
        self._rows = rows  # eager: the _plan, once computed

    def with_values(self, values: Any) -> _Sparse:
        return _Sparse(values, self.indices, self.dense_shape, self._rows)

    @property
    def eager(self) -> bool:
        return isinstance(self.indices, np.ndarray)

    def _plan(self):
        # Eager: the slices grouped by occurrence, round k holding each row's
        # k-th slice (rows unique within a round), so adding round after round
        # adds each row's slices one after the other, in order (np.add.at's
        # and TF's order) with vectorized writes; None past 32 repeats of a
        # row (then np.add.at). Also the unique rows, and each slice's row
        # among them. Shared by with_values.
        if self._rows is None:
            idx = self.indices
            n = idx.shape[0]
            order = np.argsort(idx, kind="stable")
            sid = idx[order]
            first = np.empty(n, dtype=bool)
            first[:1] = True
            np.not_equal(sid[1:], sid[:-1], out=first[1:])
            starts = np.flatnonzero(first)
            uniq = sid[starts]
            counts = np.diff(np.append(starts, n))
            pos = np.empty(n, dtype=np.intp)
            pos[order] = np.cumsum(first) - 1
            most = int(counts.max()) if n else 0
            if most <= 1:
                rounds = [(idx, None, pos)]
            elif most <= 32:
                rank = np.empty(n, dtype=np.intp)
                rank[order] = np.arange(n) - np.repeat(starts, counts)
                rounds = []
                for k in range(most):
                    sel = np.flatnonzero(rank == k)
                    rounds.append((idx[sel], sel, pos[sel]))
            else:
                rounds = None
            self._rows = (uniq, pos, rounds)
        return self._rows

    def scatter_into(self, out: np.ndarray, values: np.ndarray, subtract: bool = False) -> np.ndarray:
        """Eager ``np.add.at(out, indices, values)`` (or subtract), in place."""
        rounds = self._plan()[2]
        if rounds is None:
            (np.subtract if subtract else np.add).at(out, self.indices, values)
            return out
        for rows, sel, _ in rounds:
            v = values if sel is None else values[sel]
            if subtract:
                out[rows] -= v
            else:
                out[rows] += v
        return out

    def _row_sums(self, values: np.ndarray) -> np.ndarray:
        # Eager: values summed per unique row (in order, starting from 0).
        uniq, pos, rounds = self._plan()
        summed = np.zeros((uniq.shape[0],) + tuple(values.shape[1:]), dtype=values.dtype)
        if rounds is None:
            np.add.at(summed, pos, values)
            return summed
        for _, sel, p in rounds:
            summed[p] += values if sel is None else values[sel]
        return summed

    def dense(self):
        return self.densify(self.values)

    def densify(self, values: Any):
        """``values`` (one per slice) summed per row into a dense tensor, as
        ``tf.convert_to_tensor(IndexedSlices)`` (slices added in order)."""
        if self.eager:
            return self.scatter_into(np.zeros(self.dense_shape, dtype=values.dtype), values)
        from tapeflow.ops import math_ops

        return math_ops.unsorted_segment_sum(values, self.indices, self.dense_shape[0])

    def add_to(self, base: Any, values: Any):
        """``base + densify(values)``; eagerly ``base`` must be a fresh array
        (only the gradient's rows are written, in place)."""
        if self.eager:
            base[self._plan()[0]] += self._row_sums(values)
            return base
        return base + self.densify(values)

    def gather(self, x: Any):
        """The rows of dense ``x`` for each slice (``tf.gather(x, indices)``)."""
        if self.eager:
            return x[self.indices]
        from tapeflow.ops import array_ops

        return array_ops.gather(x, self.indices)


class _ArrayOps:
    """The math the update rules use, on NumPy arrays (eager fast path)."""

    eager = True
    sqrt = staticmethod(np.sqrt)
    square = staticmethod(np.square)
    abs = staticmethod(np.abs)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)

    @staticmethod
    def read(v: Variable):
        return v._value

    @staticmethod
    def cast(x: Any, dtype: dtypes.DType):
        # As tf.cast: a Python float becomes float32 first (so 0.9 cast to
        # float64 is 0.8999999761581421, as in Keras's rules).
        nd = dtype.as_numpy_dtype
        if isinstance(x, np.ndarray) or isinstance(x, np.generic):
            return x if x.dtype == nd else x.astype(nd)
        if isinstance(x, float):
            return np.asarray(np.float32(x), dtype=nd)
        return np.asarray(x, dtype=nd)

    @staticmethod
    def const(x: Any, dtype: dtypes.DType):
        # A Python number converted straight to ``dtype`` (convert_to_tensor).
        return np.asarray(x, dtype=dtype.as_numpy_dtype)

    sign = staticmethod(np.sign)
    expand_dims = staticmethod(np.expand_dims)

    @staticmethod
    def mean(x: Any, axis: Any = None, keepdims: bool = False):
        from tapeflow.ops.math_ops import _mean_kernel  # the Mean op's kernel: same numbers, no NumPy warning

        return _mean_kernel(x, axis, keepdims)

    @staticmethod
    def pow(x: Any, y: Any):
        return np.power(x, y)

    @staticmethod
    def sum_squares(x: Any):
        return np.sum(np.square(x))

    @staticmethod
    def total(x: Any):
        return np.sum(x)

    @staticmethod
    def where(c: Any, x: Any, y: Any):
        return np.where(c, x, y)


class _TensorOps:
    """The same math with tapeflow ops (graph tracing, user subclasses)."""

    eager = False

    @staticmethod
    def read(v: Variable):
        return v.value()

    @staticmethod
    def cast(x: Any, dtype: dtypes.DType):
        from tapeflow.ops import math_ops

        if isinstance(x, Variable):
            x = x.value()
        if isinstance(x, (np.ndarray, np.generic, float, int)):
            x = convert_to_tensor(x)  # a Python float is float32 first, as tf.cast
        if isinstance(x, Tensor) or hasattr(x, "_shape_tuple"):
            return math_ops.cast(x, dtype) if x.dtype != dtype else x
        return convert_to_tensor(x, dtype=dtype)

    @staticmethod
    def const(x: Any, dtype: dtypes.DType):
        return convert_to_tensor(x, dtype=dtype)

    @staticmethod
    def sqrt(x):
        from tapeflow.ops import math_ops

        return math_ops.sqrt(x)

    @staticmethod
    def square(x):
        from tapeflow.ops import math_ops

        return math_ops.square(x)

    @staticmethod
    def abs(x):
        from tapeflow.ops import math_ops

        return math_ops.abs(x)

    @staticmethod
    def maximum(x, y):
        from tapeflow.ops import math_ops

        return math_ops.maximum(x, y)

    @staticmethod
    def minimum(x, y):
        from tapeflow.ops import math_ops

        return math_ops.minimum(x, y)

    @staticmethod
    def pow(x, y):
        from tapeflow.ops import math_ops

        return math_ops.pow(x, y)

    @staticmethod
    def sign(x):
        from tapeflow.ops import math_ops

        return math_ops.sign(x)

    @staticmethod
    def mean(x, axis=None, keepdims=False):
        from tapeflow.ops import math_ops

        return math_ops.reduce_mean(x, axis=axis, keepdims=keepdims)

    @staticmethod
    def expand_dims(x, axis):
        from tapeflow.ops import array_ops

        return array_ops.expand_dims(x, axis)

    @staticmethod
    def sum_squares(x):
        from tapeflow.ops import math_ops

        return math_ops.reduce_sum(math_ops.square(x))

    @staticmethod
    def total(x):
        from tapeflow.ops import math_ops

        return math_ops.reduce_sum(x)

    @staticmethod
    def where(c, x, y):
        from tapeflow.ops import math_ops

        return math_ops.where(c, x, y)


def _float_or_none(name: str, value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"Argument `{name}` must be a float or None. Received: {name}={value!r}") from None


class Optimizer:
    """Base class of Keras optimizers, as ``tf.keras.optimizers.Optimizer``.

    Subclasses create their slot variables in ``build(var_list)`` (with
    ``add_variable_from_reference``) and implement
    ``update_step(gradient, variable, learning_rate)`` using
    ``self.assign / assign_add / assign_sub``:

    >>> opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    >>> v = tf.Variable([1.0, 2.0])
    >>> _ = opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    >>> v.numpy()
    array([0.9, 1.9], dtype=float32)
    """

    # Built-in rules accept NumPy arrays in eager mode (see module docstring);
    # a user subclass gets tapeflow Tensors.
    _fast_arrays = False
    # Rules that handle a ``_Sparse`` gradient themselves (else densified).
    _supports_sparse = False

    def __init__(
        self,
        learning_rate: Any,
        weight_decay: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        global_clipnorm: float | None = None,
        use_ema: bool = False,
        ema_momentum: float = 0.99,
        ema_overwrite_frequency: int | None = None,
        loss_scale_factor: float | None = None,
        gradient_accumulation_steps: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.", stacklevel=2)
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        self.name = name if name is not None else _auto_name(type(self).__name__)
        self.weight_decay = weight_decay
        self.clipnorm = _float_or_none("clipnorm", clipnorm)
        self.clipvalue = _float_or_none("clipvalue", clipvalue)
        self.global_clipnorm = _float_or_none("global_clipnorm", global_clipnorm)
        self.use_ema = use_ema
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        if gradient_accumulation_steps:
            if not gradient_accumulation_steps >= 2:
                raise ValueError(
                    "`gradient_accumulation_steps` must be an integer >= 2. "
                    f"Received: gradient_accumulation_steps={gradient_accumulation_steps}"
                )
        if use_ema:
            if ema_momentum > 1 or ema_momentum < 0:
                raise ValueError(f"`ema_momentum` must be in the range [0, 1]. Received: ema_momentum={ema_momentum}")
            if ema_overwrite_frequency and (
                not isinstance(ema_overwrite_frequency, int) or ema_overwrite_frequency < 1
            ):
                raise ValueError(
                    "`ema_overwrite_frequency` must be an integer >= 1 or None. "
                    f"Received: ema_overwrite_frequency={ema_overwrite_frequency}"
                )
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        n_clip = sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm))
        if n_clip > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}"
            )
        self.built = False
        self._variables: list[Variable] = []
        self._trainable_variables: list[Variable] = []
        self._var_index: dict[int, int] = {}
        self._deferred_restore: dict[int, np.ndarray] = {}
        self._iterations = self._keras_variable(np.int64(0), "iteration")
        self._variables.append(self._iterations)
        self._learning_rate: Any = None
        self._set_learning_rate(learning_rate, initial=True)

    # -- learning rate --------------------------------------------------------
    def _set_learning_rate(self, learning_rate: Any, initial: bool = False) -> None:
        from tapeflow.keras.optimizers.schedules import LearningRateSchedule

        if isinstance(learning_rate, LearningRateSchedule) or callable(learning_rate):
            if isinstance(self._learning_rate, Variable):
                self._variables = [v for v in self._variables if v is not self._learning_rate]
            self._learning_rate = learning_rate
            return
        if initial:
            if not isinstance(learning_rate, float):
                raise ValueError(
                    "Argument `learning_rate` should be float, or an instance of LearningRateSchedule, or a "
                    "callable (that takes in the current iteration value and returns the corresponding learning "
                    f"rate value). Received instead: learning_rate={learning_rate!r}"
                )
            self._learning_rate = self._keras_variable(np.float32(learning_rate), "learning_rate")
            self._variables.append(self._learning_rate)
            return
        if isinstance(self._learning_rate, LearningRateSchedule):
            raise TypeError(
                "This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` "
                "constructor argument, hence its learning rate is not settable. If you need the learning rate "
                "to be settable, you should instantiate the optimizer with a float `learning_rate` argument."
            )
        if not isinstance(self._learning_rate, Variable):
            # Was a plain callable: go back to a variable, as Keras would need one.
            self._learning_rate = self._keras_variable(np.float32(0.0), "learning_rate")
            self._variables.insert(1, self._learning_rate)
        self._learning_rate.assign(convert_to_tensor(learning_rate, dtype=dtypes.float32))

    @property
    def learning_rate(self):
        """The current learning rate: a variable, or the schedule's value at
        ``iterations`` (settable to a float or a schedule)."""
        from tapeflow.keras.optimizers.schedules import LearningRateSchedule

        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            return lr(self._iterations.value() if state.graph is not None else self._iterations._snapshot())
        if isinstance(lr, Variable):
            return lr
        if callable(lr):
            return lr()
        return lr

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        self._set_learning_rate(value)

    @property
    def iterations(self) -> Variable:
        """The number of update steps taken (an int64 variable); with
        ``gradient_accumulation_steps`` the real steps, ``apply`` calls //
        steps (a tensor), as Keras."""
        if self.gradient_accumulation_steps:
            from tapeflow.ops import math_ops

            it = self._iterations.value() if state.graph is not None else self._iterations._snapshot()
            return math_ops.floordiv(it, convert_to_tensor(np.int64(self.gradient_accumulation_steps)))
        return self._iterations

    def _read_iterations(self, K):
        # What Keras's rules read as ``self.iterations`` (see the property).
        it = K.read(self._iterations)
        steps = self.gradient_accumulation_steps
        if not steps:
            return it
        return it // (np.int64(steps) if K.eager else K.const(steps, dtypes.int64))

    @iterations.setter
    def iterations(self, value: Any) -> None:
        self._iterations.assign(convert_to_tensor(value, dtype=dtypes.int64))

    @property
    def variables(self) -> _VariableList:
        """All the optimizer's variables: iteration, learning rate (unless a
        schedule), then the slots, in Keras's order."""
        return _VariableList(self._variables)

    # -- building -------------------------------------------------------------
    def build(self, var_list: list) -> None:
        """Creates slot variables for ``var_list``; subclasses extend it."""
        if self.use_ema:
            self._model_variables_moving_average = self.add_optimizer_variables(var_list, "average")
        if self.gradient_accumulation_steps:
            self._accumulated_gradients = self.add_optimizer_variables(var_list, "gradient_accumulator")
        for i, v in enumerate(var_list):
            self._var_index[id(v)] = i
        self._trainable_variables = list(var_list)
        self.built = True

    def _get_variable_index(self, variable: Variable) -> int:
        return self._var_index[id(variable)]

    def add_variable(self, shape: Any, initializer: Any = "zeros", dtype: Any = None, aggregation: str = "none",
                     layout: Any = None, name: str | None = None) -> Variable:
        """Adds an optimizer variable of ``shape`` (``zeros`` / ``ones`` or a
        callable ``initializer(shape, dtype)``)."""
        dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
        shape = tuple(int(d) for d in shape)
        if isinstance(initializer, str):
            if initializer == "zeros":
                value = np.zeros(shape, dt.as_numpy_dtype)
            elif initializer == "ones":
                value = np.ones(shape, dt.as_numpy_dtype)
            else:
                raise ValueError(f"Optimizer.add_variable: unknown initializer {initializer!r}; use 'zeros', 'ones' "
                                 "or a callable (shape, dtype) -> value.")
        else:
            value = initializer(shape, dt)
        var = self._keras_variable(value, name or "variable", dt)
        self._track_variable(var)
        return var

    def _keras_variable(self, value: Any, name: str, dtype: Any = None) -> Variable:
        """A non-trainable variable named as Keras 3 names it: ``name`` ``"iteration"``, path ``"adam/iteration"``."""
        var = Variable(value, dtype=dtype, trainable=False, name=name)
        var._name = name
        var.path = f"{self.name}/{name}"
        return var

    def _track_variable(self, var: Variable) -> None:
        idx = len(self._variables)
        self._variables.append(var)
        pending = self._deferred_restore.pop(idx, None)
        if pending is not None:
            if tuple(pending.shape) == tuple(var._value.shape) and pending.dtype == var._value.dtype:
                var._value = pending
            else:
                warnings.warn(
                    f"Optimizer '{self.name}': the checkpointed value for variable {idx} ({var.name}) has shape "
                    f"{tuple(pending.shape)} / {pending.dtype}, the variable {tuple(var._value.shape)} / "
                    f"{var._value.dtype}; it keeps its initial value.", stacklevel=3)

    def add_variable_from_reference(self, reference_variable: Variable, name: str | None = None,
                                    initializer: Any = "zeros") -> Variable:
        """A slot variable shaped like ``reference_variable``."""
        name = name or "var"
        path = getattr(reference_variable, "path", None)
        if isinstance(path, str):
            prefix = path.replace("/", "_")
        else:
            prefix = str(reference_variable.name).replace("/", "_").replace(":", "_")
        return self.add_variable(tuple(reference_variable._shape_tuple()), initializer=initializer,
                                 dtype=reference_variable.dtype, name=f"{prefix}_{name}")

    def add_optimizer_variables(self, trainable_variables: list, name: Any, initializer: Any = "zeros"):
        """One slot per variable and per name (a tuple of lists for several
        names), created variable by variable as Keras does."""
        names = [name] if isinstance(name, str) else list(name)
        single = isinstance(initializer, str) or callable(initializer)
        inits = [initializer] * len(names) if single else list(initializer)
        if len(inits) != len(names):
            raise ValueError(
                f"The number of provided names must match the number of provided initializers. Received "
                f"name='{name}', initializer='{initializer}'"
            )
        out = tuple([] for _ in names)
        for v in trainable_variables:
            for i, (n, init) in enumerate(zip(names, inits)):
                out[i].append(self.add_variable_from_reference(v, name=n, initializer=init))
        return out[0] if isinstance(name, str) else out

    # -- assignment helpers (return the new value) ----------------------------
    def assign(self, variable: Variable, value: Any):
        """``variable.assign(value)``; use it in ``update_step`` (sparse aware)."""
        return self._store(variable, value, "assign")

    def assign_add(self, variable: Variable, value: Any):
        return self._store(variable, value, "assign_add")

    def assign_sub(self, variable: Variable, value: Any):
        return self._store(variable, value, "assign_sub")

    def _store(self, variable: Variable, value: Any, how: str):
        if isinstance(value, _Sparse):
            return self._scatter(variable, value, how)
        if isinstance(value, IndexedSlices):
            # Keras's scatter_update / scatter_add / scatter_sub: only its rows.
            if state.graph is None:
                return self._scatter(variable, _eager_sparse(value, variable), how)
            if None not in tuple(variable._shape_tuple()):
                return self._scatter(variable, _Sparse(convert_to_tensor(value.values),
                                                       _flat(convert_to_tensor(value.indices)),
                                                       tuple(variable._shape_tuple())), how)
            value = convert_to_tensor(value)
        if state.graph is None and (isinstance(value, (np.ndarray, np.generic))):
            old = variable._value
            nd = old.dtype
            if how != "assign" and type(value) is np.ndarray and value.dtype == nd and value.shape == old.shape \
                    and type(old) is np.ndarray and sys.getrefcount(old) <= 3 and old.flags.writeable:
                # In place when the variable alone holds its array (the refcount rule of Variable._update:
                # no Tensor read from it, no tape, no view), as the raw ``v.assign_sub(lr * g)``: no new
                # buffer per step; the same values.
                (np.add if how == "assign_add" else np.subtract)(old, value, out=old)
                return old
            if how == "assign":
                new = value
            elif how == "assign_add":
                new = old + value
            else:
                new = old - value
            if new.dtype != nd:
                new = new.astype(nd)
            if not isinstance(new, np.ndarray):
                new = np.asarray(new)
            if new.shape != old.shape:
                new = _broadcast_to_variable(variable, new, how)
            variable._value = new
            return new
        if isinstance(value, (np.ndarray, np.generic)):
            value = convert_to_tensor(value)
        if isinstance(value, (Tensor, Variable)) or hasattr(value, "_shape_tuple"):
            from tapeflow.ops import math_ops

            if value.dtype != variable.dtype:
                value = math_ops.cast(value, variable.dtype)
        getattr(variable, how)(value)
        return variable.value() if state.graph is not None else variable._snapshot()

    def _scatter(self, variable: Variable, sparse: _Sparse, how: str):
        # Keras's scatter_update / scatter_add / scatter_sub of the slices: only
        # the gradient's rows change, repeated rows one slice after the other.
        # Eagerly in place when the variable alone holds its array (no Tensor
        # read from it, no tape, no view: the refcount rule of
        # Variable._update), else on a copy so saved values stay intact.
        if not sparse.eager:
            from tapeflow.ops import array_ops, indexing_ops

            vals = sparse.values
            if vals.dtype != variable.dtype:
                vals = _TensorOps.cast(vals, variable.dtype)
            fn = {"assign": indexing_ops.tensor_scatter_nd_update, "assign_add": indexing_ops.tensor_scatter_nd_add,
                  "assign_sub": indexing_ops.tensor_scatter_nd_sub}[how]
            variable.assign(fn(variable.value(), array_ops.expand_dims(sparse.indices, 1), vals))
            return variable.value()
        old = variable._value
        if type(old) is np.ndarray and sys.getrefcount(old) <= 3 and old.flags.writeable:
            new = old
        else:
            new = np.array(old, copy=True)
        del old
        vals = sparse.values if sparse.values.dtype == new.dtype else sparse.values.astype(new.dtype)
        if how == "assign":
            new[sparse.indices] = vals
        else:
            sparse.scatter_into(new, vals, subtract=how == "assign_sub")
        variable._value = new
        return new

    # -- applying gradients ---------------------------------------------------
    def apply_gradients(self, grads_and_vars: Iterable, name: str | None = None,
                        skip_gradients_aggregation: bool = False, **kwargs: Any) -> Variable:
        """Applies ``[(gradient, variable), ...]``; returns ``iterations``."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("`grads_and_vars` is empty: nothing to apply. Pass [(gradient, variable), ...] pairs, "
                             "e.g. zip(tape.gradient(loss, variables), variables).")
        grads, variables = zip(*pairs)
        self.apply(list(grads), list(variables), _aggregate=not skip_gradients_aggregation)
        return self._iterations

    def apply(self, grads: list, trainable_variables: list | None = None, _aggregate: bool = True) -> None:
        """Updates ``trainable_variables`` with ``grads`` (one per variable; a
        ``None`` gradient skips its variable with a warning). Under a
        multi-process strategy the gradients are first summed over all
        replicas (one fused allreduce; ``IndexedSlices`` by all-gather)."""
        grads = list(grads)
        strategy = dist_hooks.strategy if _aggregate else None
        if strategy is not None and (state.graph is not None or not self._fast_arrays or trainable_variables is None
                                     or any(isinstance(g, IndexedSlices) for g in grads)):
            grads, strategy = strategy._aggregate_gradients(grads), None
        # (else, eagerly with dense gradients: the checked gradient arrays are summed over the processes below)
        from tapeflow.distribute import local_replicas

        run = local_replicas.current_run()
        if run is not None:  # one of several local replicas: sum theirs, update the (shared) variables once
            vs = None if trainable_variables is None else list(trainable_variables)
            run[0].meet(run[1], grads, lambda per: self.apply(local_replicas.sum_gradients(per), vs, _aggregate))
            return
        if len(grads) == 0:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError(
                    "When passing `grads` without `variables`, the optimizer must already be built on a list of "
                    "variables. Call `optimizer.build(trainable_variables)` first. "
                )
            if len(grads) != len(self._trainable_variables):
                raise ValueError(
                    "When passing `grads` as a list of gradient tensors, the gradients must match "
                    f"`optimizer.variables` one-to-one. Received a list of {len(grads)} gradients, but the "
                    f"optimizer is tracking {len(self._trainable_variables)} trainable variables."
                )
            trainable_variables = self._trainable_variables
        else:
            trainable_variables = list(trainable_variables)
            for v in trainable_variables:
                if not isinstance(v, Variable):
                    raise TypeError(
                        f"{type(self).__name__}.apply: expected tf.Variable objects to update, got "
                        f"{type(v).__name__}. Pass the model's trainable_variables, not tensors."
                    )
            if not self.built:
                if dist_hooks.strategy is not None:  # slots start as rank 0's, whatever scope apply runs in
                    with dist_hooks.strategy.scope():
                        self.build(trainable_variables)
                else:
                    self.build(trainable_variables)
                self.built = True
            for v in trainable_variables:
                if id(v) not in self._var_index:
                    raise ValueError(
                        f"Unknown variable: {v}. This optimizer can only be called for the variables it was "
                        "originally built with. When working with a new set of variables, you should recreate "
                        "a new optimizer instance."
                    )
        if len(grads) != len(trainable_variables):
            raise ValueError(f"{type(self).__name__}.apply: got {len(grads)} gradients for "
                             f"{len(trainable_variables)} variables; pass one gradient per variable.")
        grads, trainable_variables = self._filter_empty_gradients(grads, trainable_variables)
        if self.loss_scale_factor is not None and any(isinstance(g, IndexedSlices) for g in grads):
            # Keras unscales with ``g / scale``, which IndexedSlices does not support.
            raise TypeError("unsupported operand type(s) for /: 'IndexedSlices' and 'float': Keras's optimizer "
                            "cannot unscale a sparse (IndexedSlices) gradient by `loss_scale_factor`; convert "
                            "it with tf.convert_to_tensor first or drop loss_scale_factor.")
        K = _ArrayOps if (state.graph is None and self._fast_arrays) else _TensorOps
        grads = [self._prepare_gradient(g, v, K) for g, v in zip(grads, trainable_variables)]
        if strategy is not None:  # one fused allreduce of the arrays just checked against their variables
            grads = strategy._sum_gradient_arrays(grads, trainable_variables)
        if self.loss_scale_factor is not None:
            grads = [_scale(g, 1.0 / self.loss_scale_factor, K) for g in grads]
        if self.gradient_accumulation_steps:
            self._apply_with_accumulation(grads, trainable_variables, K)
        else:
            self._apply_update(grads, trainable_variables, K)
        for v in trainable_variables:
            if v.constraint is not None:
                v.assign(v.constraint(v))
        if self.use_ema:
            self._update_ema(K)
        if state.graph is None:
            self._iterations._value = np.asarray(self._iterations._value + 1, dtype=np.int64)
        else:
            self._iterations.assign_add(1)

    def _apply_update(self, grads: list, variables: list, K) -> None:
        grads = self._clip_gradients(grads, K)
        self._apply_weight_decay(variables, K)
        lr = self.learning_rate
        if K.eager:
            lr = lr._value if isinstance(lr, (Variable, Tensor)) else np.asarray(lr, dtype=np.float32)
        self._update_all(grads, variables, lr, K)

    def _update_all(self, grads: list, variables: list, learning_rate: Any, K) -> None:
        self._K = K
        self._step_cache: dict = {}
        try:
            for g, v in zip(grads, variables):
                if isinstance(g, _Sparse) and not self._supports_sparse:
                    g = g.dense()
                self.update_step(g, v, learning_rate)
        finally:
            self._K = None
            self._step_cache = {}

    def _check_sparse_divisor(self, x: Any, K) -> None:
        # Keras divides IndexedSlices by a dense tensor through the gathered
        # rows only while that tensor has no 0 or NaN anywhere; otherwise its
        # union-of-indices path writes NaN to the other such rows (and fails
        # on repeated indices). ``x`` is the dense value under the sqrt; called
        # where epsilon == 0 (else it is > 0 unless already NaN).
        if K.eager and not np.all(x > 0):
            raise NotImplementedError(
                f"{type(self).__name__} with epsilon=0 and a sparse (IndexedSlices) gradient: the denominator is 0 "
                "or NaN in some rows, where Keras's IndexedSlices division takes its union-of-indices path "
                "(NaN written to those rows of the variable, InvalidArgumentError with repeated indices), which "
                "tapeflow does not reproduce; use epsilon > 0 or a dense gradient (tf.convert_to_tensor).")

    def _per_step(self, key: Any, make: Callable):
        """``make()`` once per step and key (scalar coefficients shared by all
        variables of one dtype: ~1 us per NumPy scalar op adds up)."""
        cache = getattr(self, "_step_cache", None)
        if cache is None:
            return make()
        value = cache.get(key)
        if value is None:
            value = cache[key] = make()
        return value

    def _apply_with_accumulation(self, grads: list, variables: list, K) -> None:
        steps = self.gradient_accumulation_steps
        accs = [self._accumulated_gradients[self._get_variable_index(v)] for v in variables]
        dense = [g.dense() if isinstance(g, _Sparse) else g for g in grads]
        if state.graph is not None:
            raise NotImplementedError(
                "gradient_accumulation_steps inside tf.function needs tf.cond over optimizer updates, which the "
                "optimizer does not build yet; run the step eagerly or drop gradient_accumulation_steps."
            )
        if (int(self._iterations._value) + 1) % steps == 0:
            avg = [(K.read(a) + g) / steps for g, a in zip(dense, accs)]
            avg = [K.cast(a, v.dtype) for a, v in zip(avg, variables)]
            self._apply_update(avg, variables, K)
            for a in accs:
                self.assign(a, np.zeros_like(a._value))
        else:
            for g, a in zip(dense, accs):
                self.assign(a, K.cast(K.read(a) + g, a.dtype))

    def update_step(self, gradient: Any, variable: Variable, learning_rate: Any) -> None:
        """Updates one variable; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} must implement update_step(gradient, variable, "
                                  "learning_rate).")

    @property
    def _k(self):
        # The math namespace of the current update (see module docstring).
        return self._K if getattr(self, "_K", None) is not None else _TensorOps

    def _prepare_gradient(self, g: Any, v: Variable, K):
        if isinstance(g, IndexedSlices):
            if K.eager:
                return _eager_sparse(g, v)
            if self._fast_arrays and state.graph is not None and None not in tuple(v._shape_tuple()):
                return _Sparse(convert_to_tensor(g.values), _flat(convert_to_tensor(g.indices)),
                               tuple(v._shape_tuple()))
            return convert_to_tensor(g)
        if K.eager:
            arr = g._value if isinstance(g, (Tensor, Variable)) else np.asarray(convert_to_tensor(g)._value)
            if tuple(arr.shape) != tuple(v._value.shape):
                from tapeflow.framework.errors import InvalidArgumentError

                dims = ",".join(str(d) for d in arr.shape), ",".join(str(d) for d in v._value.shape)
                raise InvalidArgumentError(
                    f"Incompatible shapes: [{dims[0]}] vs. [{dims[1]}]: {type(self).__name__}: the gradient of "
                    f"shape {tuple(arr.shape)} does not match variable '{v.name}' of shape "
                    f"{tuple(v._value.shape)}; pass gradients in the same order as the variables."
                )
            if arr.dtype.kind not in "fc":
                raise TypeError(f"{type(self).__name__}: gradient for variable '{v.name}' has dtype {arr.dtype}; "
                                "gradients must be floating point.")
            return arr
        return g if isinstance(g, Tensor) or hasattr(g, "_shape_tuple") else convert_to_tensor(g)

    def _filter_empty_gradients(self, grads: list, variables: list):
        kept_g, kept_v, missing = [], [], []
        for g, v in zip(grads, variables):
            if g is None:
                missing.append(getattr(v, "path", None) or v.name)
            else:
                kept_g.append(g)
                kept_v.append(v)
        if not kept_g:
            raise ValueError("No gradients provided for any variable.")
        if missing:
            warnings.warn(
                f"Gradients do not exist for variables {missing} when minimizing the loss. If using "
                "`model.compile()`, did you forget to provide a `loss` argument?",
                stacklevel=3,
            )
        return kept_g, kept_v

    # -- clipping and weight decay --------------------------------------------
    def _clip_gradients(self, grads: list, K) -> list:
        if self.clipnorm and self.clipnorm > 0:
            return [_clip_by_norm(g, self.clipnorm, K) for g in grads]
        if self.global_clipnorm and self.global_clipnorm > 0:
            return _clip_by_global_norm(grads, self.global_clipnorm, K)
        if self.clipvalue and self.clipvalue > 0:
            c = self.clipvalue
            return [_map_values(g, lambda x: K.minimum(K.maximum(x, -c), c)) for g in grads]
        return grads

    def exclude_from_weight_decay(self, var_list: list | None = None, var_names: list | None = None) -> None:
        """Excludes variables (or names containing any of ``var_names``) from
        weight decay; call before the optimizer is built."""
        if self.built:
            raise ValueError("`exclude_from_weight_decay()` can only be configured before the optimizer is built.")
        self._exclude_ids = {id(v) for v in (var_list or [])}
        self._exclude_pattern = re.compile("|".join(set(var_names))) if var_names else None

    def _use_weight_decay(self, variable: Variable) -> bool:
        if id(variable) in getattr(self, "_exclude_ids", ()):
            return False
        pat = getattr(self, "_exclude_pattern", None)
        return not (pat is not None and pat.search(variable.name) is not None)

    def _apply_weight_decay(self, variables: list, K) -> None:
        if self.weight_decay is None:
            return
        lr = self.learning_rate
        if K.eager:
            lr = lr._value if isinstance(lr, (Variable, Tensor)) else np.asarray(lr, dtype=np.float32)
        for v in variables:
            if self._use_weight_decay(v):
                lr_v = K.cast(lr, v.dtype)
                wd = K.cast(self.weight_decay, v.dtype)
                self.assign_sub(v, K.read(v) * wd * lr_v)

    # -- EMA --------------------------------------------------------------------
    def _update_ema(self, K) -> None:
        if state.graph is not None:
            return self._update_ema_traced()
        it = int(self._iterations._value)
        if self.gradient_accumulation_steps:
            it //= self.gradient_accumulation_steps  # Keras reads ``self.iterations``
        for var, avg in zip(self._trainable_variables, self._model_variables_moving_average):
            m = K.const(self.ema_momentum if it != 0 else 0.0, var.dtype)
            self.assign(avg, m * K.read(avg) + (1 - m) * K.read(var))
        if self.ema_overwrite_frequency and (it + 1) % self.ema_overwrite_frequency == 0:
            self.finalize_variable_values(self._trainable_variables)

    def _update_ema_traced(self) -> None:
        """The same inside a traced step: the first step's momentum 0 and the overwrite every
        ``ema_overwrite_frequency`` steps chosen at run time (Keras's ``ops.cond``, as a select)."""
        from tapeflow.ops import math_ops

        it = self._iterations.value()
        if self.gradient_accumulation_steps:
            it = math_ops.floordiv(it, self.gradient_accumulation_steps)
        later = math_ops.not_equal(it, 0)
        for var, avg in zip(self._trainable_variables, self._model_variables_moving_average):
            m = math_ops.cast(later, var.dtype) * convert_to_tensor(self.ema_momentum, dtype=var.dtype)
            avg.assign(m * avg.value() + (1 - m) * var.value())
        if self.ema_overwrite_frequency:
            now = math_ops.equal(math_ops.floormod(it + 1, self.ema_overwrite_frequency), 0)
            for var, avg in zip(self._trainable_variables, self._model_variables_moving_average):
                var.assign(math_ops.where(now, avg.value(), var.value()))

    def finalize_variable_values(self, var_list: list) -> None:
        """With ``use_ema``, overwrites ``var_list`` with their moving averages."""
        if self.use_ema:
            for var, avg in zip(var_list, self._model_variables_moving_average):
                var.assign(avg._snapshot() if state.graph is None else avg.value())

    def scale_loss(self, loss: Any) -> Any:
        """``loss * loss_scale_factor`` (unchanged when it is None)."""
        return loss * self.loss_scale_factor if self.loss_scale_factor is not None else loss

    # -- minimize (TF 2 Keras optimizers) -------------------------------------
    def compute_gradients(self, loss: Any, var_list: Any, tape: Any = None) -> list:
        """``[(gradient, variable), ...]`` of ``loss`` (a callable, or a tensor
        computed under ``tape``)."""
        from tapeflow.eager.backprop import GradientTape

        if not callable(loss) and tape is None:
            raise ValueError(f"`tape` is required when a `Tensor` loss is passed. Received: loss={loss}, "
                             f"tape={tape}.")
        if tape is None:
            tape = GradientTape()
        if callable(loss):
            with tape:
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
                if callable(var_list):
                    var_list = var_list()
        var_list = list(var_list() if callable(var_list) else var_list)
        grads = tape.gradient(loss, var_list)
        return list(zip(grads, var_list))

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> Variable:
        """Computes gradients of ``loss`` and applies them; ``loss`` is a
        zero-argument callable, or a tensor with the ``tape`` that recorded it."""
        return self.apply_gradients(self.compute_gradients(loss, var_list, tape))

    # -- state, config, checkpoints -------------------------------------------
    def get_config(self) -> dict:
        from tapeflow.keras.optimizers.schedules import LearningRateSchedule, serialize

        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            lr_cfg: Any = serialize(lr)
        elif isinstance(lr, Variable):
            lr_cfg = float(lr._value)
        else:
            lr_cfg = lr
        return {
            "name": self.name,
            "learning_rate": lr_cfg,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "loss_scale_factor": self.loss_scale_factor,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }

    @classmethod
    def from_config(cls, config: dict, custom_objects: dict | None = None) -> Optimizer:
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            from tapeflow.keras.optimizers.schedules import deserialize

            config["learning_rate"] = deserialize(config["learning_rate"])
        return cls(**config)

    def get_weights(self) -> list:
        return [np.array(v._value, copy=True) for v in self._variables]

    def set_weights(self, weights: list) -> None:
        if not self.built:
            raise ValueError(
                "You are calling `set_weights()` on an optimizer that has not yet been built. Please call "
                "`optimizer.build(trainable_variables)` to create the optimizer weights before calling "
                "`set_weights()`."
            )
        arrays = [np.asarray(w) for w in weights]
        for v, w in zip(self._variables, arrays):
            if tuple(v._value.shape) != tuple(w.shape):
                raise ValueError(f"Optimizer variable {v.name} has shape {tuple(v._value.shape)} not compatible "
                                 f"with provided weight shape {tuple(w.shape)}.")
        for v, w in zip(self._variables, arrays):
            v.assign(w.astype(v._value.dtype))

    def _trackable_children(self, save_type: str = "checkpoint", **kwargs: Any) -> dict:
        """Checkpoint children: ``variables/<i>`` in Keras's order (slots not
        yet built are restored when ``build`` creates them)."""
        return {"variables": _OptimizerVariables(self)}


class _OptimizerVariables:
    """The optimizer's variable list as a checkpoint node; values for slots
    that do not exist yet wait in ``_deferred_restore`` until ``build``."""

    def __init__(self, optimizer: Optimizer) -> None:
        self._opt = optimizer

    def _trackable_children(self, save_type: str = "checkpoint", **kwargs: Any) -> dict:
        return {str(i): v for i, v in enumerate(self._opt._variables)}

    def _defer_restore(self, name: str, value: np.ndarray) -> bool:
        # Called by tf.train.Checkpoint for a saved child this node lacks.
        if not name.isdigit() or self._opt.built:
            return False
        self._opt._deferred_restore[int(name)] = value
        return True


def _broadcast_to_variable(variable: Variable, new: np.ndarray, how: str) -> np.ndarray:
    try:
        return np.broadcast_to(new, variable._value.shape).copy()
    except ValueError:
        raise ValueError(
            f"Cannot {how} to variable '{variable.name}': shape {tuple(variable._value.shape)} vs value "
            f"{tuple(new.shape)}."
        ) from None


def _flat(indices: Any):
    from tapeflow.ops import array_ops

    return array_ops.reshape(indices, (-1,))


def _eager_sparse(g: IndexedSlices, v: Variable) -> _Sparse:
    values = np.asarray(convert_to_tensor(g.values)._value)
    indices = np.asarray(convert_to_tensor(g.indices)._value).reshape(-1)
    shape = tuple(v._value.shape)
    if values.shape[1:] != shape[1:] or values.shape[0] != indices.shape[0]:
        raise ValueError(f"IndexedSlices gradient with values {values.shape} and {indices.shape[0]} indices does "
                         f"not match variable '{v.name}' of shape {shape}.")
    if indices.size and (indices.min() < 0 or indices.max() >= shape[0]):
        from tapeflow.framework.errors import InvalidArgumentError

        raise InvalidArgumentError(f"IndexedSlices gradient for variable '{v.name}': indices must be in "
                                   f"[0, {shape[0]}), got {indices.min()}..{indices.max()}.")
    return _Sparse(values, indices, shape)


def _map_values(g: Any, fn: Callable):
    if isinstance(g, _Sparse):
        return g.with_values(fn(g.values))
    return fn(g)


def _scale(g: Any, factor: float, K):
    return _map_values(g, lambda x: x * K.const(factor, _dtype_of(x)))


def _dtype_of(x: Any) -> dtypes.DType:
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.as_dtype(x.dtype)
    return x.dtype


def _values(g: Any):
    return g.values if isinstance(g, _Sparse) else g


def _sum_squares(g: Any, K):
    # Keras's ops.sum(ops.square(g)): a sparse g squares each slice, then sums
    # the densified result.
    if isinstance(g, _Sparse):
        return K.total(g.densify(K.square(g.values)))
    return K.sum_squares(g)


def _clip_by_norm(g: Any, clipnorm: float, K):
    # tf.clip_by_norm: t * c / max(||t||, c), with ||0|| kept at 0; on
    # IndexedSlices the norm is the slices' (repeated rows not summed first)
    # and the result stays sparse.
    x = _values(g)
    dt = _dtype_of(x)
    l2sum = K.sum_squares(x)
    c = K.const(clipnorm, dt)
    l2norm = K.sqrt(l2sum)
    return _map_values(g, lambda t: (t * c) / K.maximum(l2norm, c))


def _clip_by_global_norm(grads: list, clip_norm: float, K) -> list:
    # Keras's ``v * scale`` densifies a sparse gradient (slices summed per row).
    sq = [_sum_squares(g, K) for g in grads]
    total = sq[0]
    for s in sq[1:]:
        total = total + (s if _dtype_of(s) == _dtype_of(total) else K.cast(s, _dtype_of(total)))
    use_norm = K.sqrt(total)
    dt = _dtype_of(use_norm)
    one = K.const(1.0, dt)
    scale = K.const(clip_norm, dt) * K.minimum(one / use_norm, one / K.const(clip_norm, dt))
    scale = scale + (use_norm - use_norm)  # NaN/inf norm -> NaN scale, as Keras
    return [(g.dense() if isinstance(g, _Sparse) else g) * K.cast(scale, _dtype_of(_values(g))) for g in grads]
