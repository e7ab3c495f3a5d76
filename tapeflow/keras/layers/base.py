"""``tf.keras.layers.Layer``, symbolic ``KerasTensor``s and ``Input``.

A layer owns weights (``tf.Variable``s made by ``add_weight``), builds them
lazily from the first input's shape, and tracks sub-layers assigned as
attributes. Calling a layer on a ``KerasTensor`` (from ``tf.keras.Input``)
records a node instead of computing: that is how functional models are built.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import threading
from typing import Any

import numpy as np

from tapeflow.framework import dtypes, nest
from tapeflow.framework.context import state
from tapeflow.framework.tensor import Tensor, convert_to_tensor, new_id
from tapeflow.framework.variables import Variable, autocast_scope
from tapeflow.keras import initializers as _init
from tapeflow.keras.layers import masking as _masking
from tapeflow.keras.mixed_precision import as_policy
from tapeflow.module import Module
from tapeflow.ops import math_ops as mo

__all__ = ["Layer", "KerasTensor", "Input", "InputLayer", "InputSpec"]

_name_counts: dict[str, int] = {}


def unique_name(base: str) -> str:
    """``dense``, ``dense_1``, ``dense_2`` ... as Keras names auto-named objects."""
    n = _name_counts.get(base, 0)
    _name_counts[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def clear_session() -> None:
    """Resets the auto-naming counters of layers, models and optimizers and the global dtype policy
    (``tf.keras.backend.clear_session``)."""
    from tapeflow.keras import mixed_precision
    from tapeflow.keras.optimizers import optimizer

    _name_counts.clear()
    from tapeflow.keras.random import reset_global_seed_generator

    reset_global_seed_generator()  # Keras's global state holds it
    optimizer._name_counts.clear()
    mixed_precision._global[0] = None


def to_snake_case(name: str) -> str:
    """Keras' rule: ``MaxPooling2D`` -> ``max_pooling2d``, ``Conv2D`` -> ``conv2d``."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


class _CallContext(threading.local):
    def __init__(self) -> None:
        self.training = None  # the training flag of the outermost call, passed down
        self.depth = 0  # nesting of layer calls (0: outside any layer)
        self.unknown_batch = False  # fit's first step: record output shapes with batch None (Keras's symbolic build)
        self.scopes: list = []  # Keras 3's name scopes: (name, caller, parent path or None)
        self.restore_roots: list = []  # layers being called that hold deferred checkpoint values
        self.node_shapes = False  # inside a Sequential's building call: each layer records this call's shapes
        self.inferring = 0  # > 0 while a symbolic call runs the layer on stand-ins for its KerasTensors


_ctx = _CallContext()
_traceback_filtering = [True]  # keras.config.enable/disable_traceback_filtering


def _format_argument(value: Any) -> str:
    # Keras's format_argument_value: tensors and variables in short, anything else as its repr
    if isinstance(value, (Tensor, Variable)):
        return f"tf.Tensor(shape={value.shape}, dtype={value.dtype.name})"
    return repr(value)


# Keras raises its input-spec errors before the call it annotates; tapeflow's layers raise them in call()
_INPUT_SPEC_ERROR = re.compile(r"Input \d+ (with name '[^']*' )?of layer '.*' is incompatible with the layer")


def _with_call_info(e: BaseException, display: str, fn: Any, args: tuple, kwargs: dict) -> BaseException | None:
    """Keras 3's ``inject_argument_info_in_traceback``: ``e`` again (same type) with the call and its
    arguments around its message, as Keras shows an exception raised by a layer's ``call``; None for an
    exception to re-raise unchanged (already annotated by an inner layer, or a Keras input-spec error)."""
    message = e.message if hasattr(e, "message") else (e.args[0] if e.args else "")
    if not _traceback_filtering[0] or hasattr(e, "_keras_call_info_injected"):
        return None
    if _INPUT_SPEC_ERROR.match(str(message)) and not hasattr(e, "_keras_input_spec_error"):
        # the layer that checks its input spec leaves the error alone; the layer calling it (a Sequential's
        # call) annotates it, as in Keras
        e._keras_input_spec_error = True
        return None
    try:
        signature = inspect.signature(fn)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    lines = []
    for p in signature.parameters.values():
        value = nest.map_structure(_format_argument, bound.arguments[p.name]) if p.name in bound.arguments \
            else p.default
        lines.append(f"  \u2022 {p.name}={value}")
    if not lines:
        return None
    text = (f"Exception encountered when calling {display}.\n\n\x1b[1m{message}\x1b[0m\n\n"
            f"Arguments received by {display}:\n" + "\n".join(lines))
    try:
        new = type(e)(e.node_def, e.op, text) if hasattr(e, "node_def") else type(e)(text)
    except Exception:  # an exception class with its own constructor arguments
        new = RuntimeError(text)
    new._keras_call_info_injected = True
    return new


def _symbolic_signature(*args: Any, **kwargs: Any) -> None:
    """The signature Keras reports for a symbolic call (its ``symbolic_call(*args, **kwargs)``)."""


def _user_defined_spec_missing(layer: Any) -> bool:
    """Whether ``layer``'s ``call`` is a user's and it has no ``compute_output_shape``/``_spec`` of its
    own: Keras then infers the output by running ``call``, and says so when that fails."""
    cls = type(layer)

    def owner(name: str) -> str:
        return next((k.__module__ for k in cls.__mro__ if name in k.__dict__), "tapeflow.")

    return not owner("call").startswith("tapeflow.") and owner("compute_output_shape").startswith("tapeflow.") \
        and owner("compute_output_spec").startswith("tapeflow.")


def current_path() -> str:
    """Keras 3's ``current_path()``: the names of the layers being built or called, outermost first; a
    layer's weights get ``path = current_path() + "/" + name`` (``sequential/dense/kernel``)."""
    parts: list = []
    for name, _, parent in _ctx.scopes:
        if parent is not None:
            parts = [p for p in parent.split("/") if p]
        parts.append(name)
    return "/".join(parts)


def keras_variable(value: Any, name: str, trainable: bool, dtype: Any, autocast: bool = True,
                   constraint: Any = None, tf_name: str | None = None) -> Variable:
    """A Keras 3 variable: a ``tf.Variable`` named ``name`` ("kernel", ...) whose ``path`` is the current
    Keras name scope's plus the name, cast to a layer's compute dtype inside its call when ``autocast``."""
    var = Variable(value, trainable=trainable, name=tf_name or f"{name}:0", dtype=dtype, constraint=constraint)
    var._keras_name = name
    var._name = name  # Keras 3 names weights "kernel", "bias" ...; the full path is .path
    parent = current_path()
    var.path = f"{parent}/{name}" if parent else name
    if autocast and var.dtype.is_floating:
        var._autocast = True
    return var


@contextlib.contextmanager
def name_scope(name: str, caller: Any = None) -> Any:
    """Keras 3's ``name_scope``: re-entering the scope of the same caller adds nothing, and a layer that
    was first entered under a parent keeps that parent's path wherever it is called later."""
    scopes = _ctx.scopes
    if scopes and caller is not None and scopes[-1][1] is caller and scopes[-1][0] == name:
        yield
        return
    scopes.append((name, caller, getattr(caller, "_parent_path", None)))
    try:
        yield
    finally:
        scopes.pop()


def _keras_default_build(build: Any) -> Any:
    """Marks a ``build`` that stands for Keras's default ``Layer.build`` (``utils.is_default``): a user's layer
    or model that keeps it is built by running its ``call`` once symbolically first (see ``_prerun``)."""
    build._keras_default = True
    return build


def _wants_prerun(layer: Layer) -> bool:
    """Keras 3's ``_maybe_build``: a layer without its own ``build`` whose sub-layers are not all built runs its
    ``call`` in a scratch graph before the real call (a ``print`` in ``call`` shows twice on the first call).
    Only users' classes: tapeflow's own layers build as Keras's do."""
    return (getattr(type(layer).build, "_keras_default", False) and not type(layer).__module__.startswith("tapeflow.")
            and any(not sub.built for sub in layer._sublayers()))


def _scoped_build(build: Any) -> Any:
    """Wraps a layer class's ``build`` so its weights get the layer's path (Keras wraps every ``build``)."""

    @functools.wraps(build)
    def build_in_scope(self, *args: Any, **kwargs: Any) -> Any:
        with self._open_name_scope():
            return build(self, *args, **kwargs)

    build_in_scope._keras_scoped = True
    return build_in_scope


class InputSpec:
    """Declares what a layer accepts (``ndim``, ``min_ndim``, ``axes``)."""

    def __init__(self, dtype: Any = None, shape: Any = None, ndim: int | None = None, max_ndim: int | None = None,
                 min_ndim: int | None = None, axes: dict | None = None, allow_last_axis_squeeze: bool = False,
                 name: str | None = None) -> None:
        self.dtype, self.shape, self.ndim, self.max_ndim, self.min_ndim = dtype, shape, ndim, max_ndim, min_ndim
        self.axes = axes or {}


class KerasTensor:
    """A symbolic tensor in a functional model: a shape, a dtype and the layer
    call that produced it. It holds no data."""

    def __init__(self, shape: tuple, dtype: Any = "float32", name: str | None = None, history: Any = None) -> None:
        self._shape = tuple(None if d is None else int(d) for d in shape)
        self._dtype = dtypes.as_dtype(dtype)
        self.name = name or unique_name("keras_tensor")
        self._keras_history = history  # (layer, node) or None for an Input

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def dtype(self) -> str:
        """The dtype's name, a string as in Keras 3 (``"float32"``; ``== tf.float32`` holds)."""
        return self._dtype.name

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def _shape_tuple(self) -> tuple:
        return self._shape

    sparse = False  # set by Input(sparse=True) / Input(ragged=True)
    ragged = False

    def __repr__(self) -> str:
        return (f"<KerasTensor shape={self._shape}, dtype={self.dtype}, sparse={self.sparse}, "
                f"ragged={self.ragged}, name={self.name}>")

    def _unsupported(self, *a: Any, **k: Any):
        raise ValueError(  # Keras 3's text
            "A KerasTensor cannot be used as input to a TensorFlow function. A KerasTensor is a symbolic "
            "placeholder for a shape and dtype, used when constructing Keras Functional models or Keras "
            "Functions. You can only use it as input to a Keras layer or a Keras operation (from the namespaces "
            "`keras.layers` and `keras.ops`). You are likely doing something like:\n\n```\nx = Input(...)\n...\n"
            "tf_fn(x)  # Invalid.\n```\n\nWhat you should do instead is wrap `tf_fn` in a layer:\n\n```\nclass "
            "MyLayer(Layer):\n    def call(self, x):\n        return tf_fn(x)\n\nx = MyLayer()(x)\n```\n"
        )

    __array__ = numpy = _unsupported

    # Operators record an operation node, as Keras 3's (keras.ops) do; model.layers does not list them.
    # The node's arguments are the operator's, in Keras's order (``2 * x`` records ``(2, x)``).
    def __bool__(self) -> bool:
        raise TypeError("A symbolic KerasTensor cannot be used as a boolean.")

    def __getitem__(self, key: Any) -> Any:
        if any(isinstance(k, KerasTensor) for k in nest.flatten(key)):
            return self._unsupported()
        _keras_ops()
        return _OpLayer("get_item", (self, key))()

    def __round__(self, ndigits: int | None = None) -> Any:
        _keras_ops()
        return _OpLayer("round", (self,), decimals=ndigits or 0)()

    __hash__ = object.__hash__


def _keras_ops() -> None:
    """Loads ``keras.ops``, whose functions the operators' nodes compute with (Keras's dtype promotion)."""
    import tapeflow.keras.ops  # noqa: F401


def _operator(op: str, reverse: bool = False) -> Any:
    def method(self: KerasTensor, other: Any = None) -> Any:
        _keras_ops()
        if _OPS[op][1] == 1:
            return _OpLayer(op, (self,))()
        return _OpLayer(op, (other, self) if reverse else (self, other))()

    return method


def _logical(fn: Any) -> Any:
    return lambda a, b: fn(mo.cast(a, dtypes.bool), mo.cast(b, dtypes.bool))


# Keras 3's operation for each operator: (class name, arity, function over tapeflow tensors)
_OPS: dict[str, tuple[str, int, Any]] = {
    "add": ("Add", 2, lambda a, b: a + b),
    "subtract": ("Subtract", 2, lambda a, b: a - b),
    "multiply": ("Multiply", 2, lambda a, b: a * b),
    "true_divide": ("TrueDivide", 2, lambda a, b: a / b),
    "divide": ("Divide", 2, lambda a, b: a / b),
    "floor_divide": ("FloorDivide", 2, lambda a, b: a // b),
    "mod": ("Mod", 2, lambda a, b: a % b),
    "power": ("Power", 2, lambda a, b: a ** b),
    "matmul": ("Matmul", 2, lambda a, b: a @ b),
    "less": ("Less", 2, lambda a, b: a < b),
    "less_equal": ("LessEqual", 2, lambda a, b: a <= b),
    "greater": ("Greater", 2, lambda a, b: a > b),
    "greater_equal": ("GreaterEqual", 2, lambda a, b: a >= b),
    "not_equal": ("NotEqual", 2, lambda a, b: mo.not_equal(a, b)),
    "logical_and": ("LogicalAnd", 2, _logical(lambda a, b: mo.logical_and(a, b))),
    "logical_or": ("LogicalOr", 2, _logical(lambda a, b: mo.logical_or(a, b))),
    "logical_xor": ("LogicalXor", 2, _logical(lambda a, b: mo.logical_xor(a, b))),
    "negative": ("Negative", 1, lambda a: -a),
    "absolute": ("Absolute", 1, lambda a: abs(a)),
    "logical_not": ("LogicalNot", 1, lambda a: mo.logical_not(mo.cast(a, dtypes.bool))),
    "get_item": ("GetItem", 2, lambda a, key: a[key]),
    "round": ("Round", 1, None),  # decimals: see _OpLayer.call
}
_BY_CLASS = {cls: op for op, (cls, _, _) in _OPS.items()}
_OP_MODULES: dict[str, str] = {}  # op -> Keras module of its operation, where not keras.src.ops.numpy (keras.ops)

for _name, _op in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
                   ("floordiv", "floor_divide"), ("mod", "mod"), ("pow", "power"), ("matmul", "matmul"),
                   ("and", "logical_and"), ("or", "logical_or"), ("xor", "logical_xor")):
    setattr(KerasTensor, f"__{_name}__", _operator(_op))
    setattr(KerasTensor, f"__r{_name}__", _operator(_op, reverse=True))
for _name, _op in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
                   ("ne", "not_equal"), ("neg", "negative"), ("abs", "absolute"), ("invert", "logical_not")):
    setattr(KerasTensor, f"__{_name}__", _operator(_op))


class _OpLayer:  # replaced below, once Layer exists
    pass


# compute_mask methods written with keras.ops, so that on KerasTensors they add Keras's mask nodes (filled below)
_GRAPH_MASKS: set = set()


def _graph_masks(value: Any) -> Any:
    """The KerasTensors' masks in ``value``'s structure, or None unless each is a node's output."""
    masks = [x.__dict__.get("_keras_mask") if isinstance(x, KerasTensor) else None for x in nest.flatten(value)]
    if not any(m is not None for m in masks) or any(
            m is not None and m.__dict__.get("_keras_history") is None for m in masks):
        return None
    return nest.pack_sequence_as(value, masks) if isinstance(value, (list, tuple, dict)) else masks[0]


def _populate_masks(layer: Any, args: tuple, kwargs: dict) -> dict:
    """Keras 3's step "populate mask argument(s)" of a symbolic call: one tensor argument gives its mask(s) as
    ``mask=`` where ``call`` takes it, so the mask's node is an input of this node (``Connected to`` in
    ``summary()``, ``inbound_nodes`` in ``get_config``). Masks are graph nodes where Keras's compute_mask is
    written with ``keras.ops`` here too (``Embedding``, users' layers)."""
    try:
        params = inspect.signature(layer.call).parameters
        bound = inspect.signature(layer.call).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return kwargs
    tensor_args = {k: v for k, v in bound.items() if _has_keras_tensor(v)}
    if len(tensor_args) == 1:
        if "mask" in params and bound.get("mask") is None:
            masks = _graph_masks(next(iter(tensor_args.values())))
            if masks is not None:
                kwargs = {**kwargs, "mask": masks}
    # (Keras's ``<argument>_mask=`` for several tensor arguments: MultiHeadAttention's nodes keep none of them)
    return kwargs


class Node:
    """One symbolic layer call: the layer, its arguments and its outputs."""

    def __init__(self, layer: Layer, args: tuple, kwargs: dict, outputs: Any) -> None:
        self.layer, self.args, self.kwargs, self.outputs = layer, args, kwargs, outputs

    @property
    def input_tensors(self) -> list:
        return [x for x in nest.flatten((self.args, self.kwargs)) if isinstance(x, KerasTensor)]


def _has_keras_tensor(structure: Any) -> bool:
    return any(isinstance(x, KerasTensor) for x in nest.flatten(structure))


_SIGNATURES: dict[type, tuple[bool, bool]] = {}


def _call_flags(layer: Layer) -> tuple[bool, bool]:
    """(call accepts ``training``, call accepts ``mask``), cached per class."""
    cls = type(layer)
    flags = _SIGNATURES.get(cls)
    if flags is None:
        params = inspect.signature(layer.call).parameters
        var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
        flags = ("training" in params or var_kw, "mask" in params)
        _SIGNATURES[cls] = flags
    return flags


_TRAINING_DEFAULTS: dict[type, Any] = {}


def _training_default(layer: Layer) -> Any:
    """The default of ``call``'s ``training`` parameter (``def call(self, x, training=False)``), cached per
    class: Keras 3 uses it when neither the caller nor an outer layer gives ``training``."""
    cls = type(layer)
    if cls not in _TRAINING_DEFAULTS:
        p = inspect.signature(layer.call).parameters.get("training")
        _TRAINING_DEFAULTS[cls] = None if p is None or p.default is inspect.Parameter.empty else p.default
    return _TRAINING_DEFAULTS[cls]


# Bookkeeping attributes that hold layers without owning them.
_UNTRACKED = frozenset(("_layers", "_inbound_nodes", "_nodes", "_input_layers", "_output_layers",
                        "_model", "_functional", "_call_sequence", "_callbacks", "_input_layer_obj",
                        "_input_tensor", "_symbolic_output", "_inputs_struct", "_outputs_struct",
                        "_input_tensors", "_step_fns", "_init_args"))



_casters: dict = {}


def _caster(dtype: Any) -> Any:
    """The autocast function for ``dtype``: floating values are cast to it."""
    fn = _casters.get(dtype)
    if fn is None:
        np_dtype = dtype._np

        def fn(t: Any) -> Any:
            d = t._value.dtype
            return mo.cast(t, dtype) if d.kind == "f" and d != np_dtype else t

        fn.dtype = dtype
        _casters[dtype] = fn
    return fn

class Layer(Module):
    """Base class of Keras layers.

    Subclasses create weights in ``build(input_shape)`` with ``add_weight``
    and compute in ``call(inputs, training=None)``; ``layer(x)`` builds on
    first use, casts float inputs to the layer's dtype and calls.
    """

    # Keras builds a layer's weights itself; values for a layer not built yet wait in its model.
    _tf_waits_for_attachments = False

    _autocast = True  # cast floating inputs to the layer dtype (Keras 3 does)
    _parent_path = None  # current_path() when the layer was first built or called (Keras 3)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_keras_scoped", False):
            cls.build = _scoped_build(build)

    def _open_name_scope(self) -> Any:
        if self._parent_path is None:
            object.__setattr__(self, "_parent_path", current_path())
        return name_scope(self._name, self)

    def __new__(cls, *args: Any, **kwargs: Any) -> Layer:
        obj = super().__new__(cls)
        object.__setattr__(obj, "_init_args", (args, kwargs))  # for the generated get_config (Keras' auto-config)
        return obj

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None, autocast: bool = True,
                 input_shape: Any = None, input_dim: int | None = None, batch_size: int | None = None,
                 activity_regularizer: Any = None, **kwargs: Any) -> None:
        if kwargs.pop("input_dtype", None) is not None:
            raise NotImplementedError("tapeflow's Keras layers do not support `input_dtype` yet")
        from tapeflow.keras import regularizers

        # Keras 3: each call adds activity_regularizer(output) to the layer's losses
        self.activity_regularizer = regularizers.get(activity_regularizer)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs}")
        object.__setattr__(self, "_layers", [])
        self._own_trainable: list[Variable] = []
        self._own_non_trainable: list[Variable] = []
        self._name = name if name is not None else unique_name(to_snake_case(type(self).__name__))  # "" stays ""
        self._scope_name = self._name + "/"
        self._policy = as_policy(dtype)
        self._dtype = dtypes.as_dtype(self._policy.variable_dtype)  # weights
        self._compute = dtypes.as_dtype(self._policy.compute_dtype)  # math and outputs
        self._trainable = trainable
        self.built = False
        self._autocast = autocast and type(self)._autocast
        self._losses: list = []  # add_loss() values of the current outermost call
        self._regularizers: list = []  # (variable, regularizer) pairs from add_weight
        self._inbound_nodes: list[Node] = []
        self.input_spec = None
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is not None:
            input_shape, batch_size = tuple(batch_input_shape)[1:], batch_input_shape[0]
        # Sequential reads this to build itself from the first layer's input shape.
        self._input_shape_arg = None if input_shape is None else (batch_size,) + tuple(input_shape)
        if self.builds_at_init():
            self.built = True

    @classmethod
    def builds_at_init(cls) -> bool:
        """Whether the layer is built when constructed, as Keras 3's ``_build_at_init()``: its class is one of the
        weightless layers Keras builds in ``__init__`` (``_keras_built_at_init``) and defines no ``build``, so
        ``summary()`` shows it built and its config has no ``build_config``."""
        return getattr(cls, "_keras_built_at_init", False) and cls.build is Layer.build

    # -- attribute tracking --------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        layers = self.__dict__.get("_layers")
        if layers is not None and name not in _UNTRACKED:
            for leaf in nest.flatten(value) if isinstance(value, (list, tuple, dict)) else [value]:
                if isinstance(leaf, Layer) and leaf is not self and not any(leaf is x for x in layers):
                    layers.append(leaf)
                elif isinstance(leaf, Variable) and "path" in leaf.__dict__:
                    # a keras.Variable set as an attribute is the layer's weight, as Keras's tracker
                    # (a plain tf.Variable is not)
                    own = self._own_trainable if leaf.trainable else self._own_non_trainable
                    if not any(leaf is w for w in self._own_trainable + self._own_non_trainable):
                        own.append(leaf)
        object.__setattr__(self, name, value)

    # -- names, dtypes, flags ------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> str:
        """The variables' dtype (Keras 3: ``dtype_policy.variable_dtype``)."""
        return self._dtype.name

    @property
    def compute_dtype(self) -> str:
        return self._compute.name

    @property
    def variable_dtype(self) -> str:
        return self._dtype.name

    @property
    def dtype_policy(self) -> Any:
        return self._policy

    @dtype_policy.setter
    def dtype_policy(self, value: Any) -> None:
        self._policy = as_policy(value)
        self._dtype = dtypes.as_dtype(self._policy.variable_dtype)
        self._compute = dtypes.as_dtype(self._policy.compute_dtype)

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = bool(value)
        for layer in self._layers:
            layer.trainable = value

    @property
    def layers(self) -> list:
        return list(self._layers)

    _supports_masking = False  # Keras: layers that pass a mask on (or consume it) set this

    @property
    def supports_masking(self) -> bool:
        return self._supports_masking

    @supports_masking.setter
    def supports_masking(self, value: bool) -> None:
        self._supports_masking = bool(value)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The outputs' mask: the inputs' one for layers that support masking, else None."""
        return mask if self.supports_masking else None

    # -- weights ----------------------------------------------------------------
    def add_weight(self, *args: Any, shape: Any = None, initializer: Any = None, dtype: Any = None,
                   trainable: bool = True, autocast: bool = True, regularizer: Any = None, constraint: Any = None,
                   aggregation: Any = None, overwrite_with_gradient: bool = False, name: str | None = None,
                   **kwargs: Any) -> Variable:
        """Creates a weight ``tf.Variable`` owned by this layer (Keras 3's
        ``add_weight``: ``shape, initializer, dtype`` may come positionally, the rest by keyword; float weights
        default to GlorotUniform, others to zeros)."""
        if args:  # Keras 3's checks of the positional (Keras 2) call style, with its messages
            if len(args) > 3:
                raise TypeError(f"add_weight() takes at most 3 positional arguments but {len(args)} were given.")
            if isinstance(args[0], str):
                raise ValueError(f"`name` must be passed as a keyword argument. Received: add_weight('{args[0]}', "
                                 f"...). Use: add_weight(shape=..., name='{args[0]}').")
            for i, (label, given) in enumerate((("shape", shape), ("initializer", initializer), ("dtype", dtype))):
                if i < len(args):
                    if given is not None:
                        raise ValueError(f"`{label}` was passed both positionally and as a keyword argument.")
            shape, initializer, dtype = (tuple(args) + (shape, initializer, dtype)[len(args):])[:3]
        shape = () if shape is None else tuple(int(d) for d in shape)
        dtype = dtypes.as_dtype(dtype or self._dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = _init.get(initializer)
        value = init(shape, dtype=dtype)
        name = name or unique_name("variable")  # Keras 3 auto-names an unnamed weight: variable, variable_1 ...
        with name_scope(self._name, self):
            var = keras_variable(value, name, trainable, dtype, autocast, constraint, f"{self._name}/{name}:0")
        (self._own_trainable if trainable else self._own_non_trainable).append(var)
        if regularizer is not None:
            from tapeflow.keras import regularizers

            self._regularizers.append((var, regularizers.get(regularizer)))
        return var

    def _sublayers(self) -> list:
        return self._layers

    @property
    def trainable_weights(self) -> list:
        """Own trainable weights in creation order, then the sub-layers' (empty when frozen)."""
        if not self._trainable:
            return []
        out = list(self._own_trainable)
        for layer in self._sublayers():
            out.extend(v for v in layer.trainable_weights if not any(v is w for w in out))
        return out

    @property
    def non_trainable_weights(self) -> list:
        if not self._trainable:
            return self.weights
        out = list(self._own_non_trainable)
        for layer in self._sublayers():
            out.extend(v for v in layer.non_trainable_weights if not any(v is w for w in out))
        return out

    @property
    def weights(self) -> list:
        """All weights: own (trainable first, then non-trainable... in creation order per kind), then sub-layers'."""
        out = list(self._own_trainable) + list(self._own_non_trainable)
        for layer in self._sublayers():
            out.extend(v for v in layer.weights if not any(v is w for w in out))
        return out

    @property
    def variables(self) -> list:
        return self.weights

    @property
    def trainable_variables(self) -> list:
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list:
        return self.non_trainable_weights

    @property
    def submodules(self) -> tuple:
        # Keras 3 layers are not tf.Modules: TF raises AttributeError here (use .layers / ._flatten_layers)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'submodules'")

    def get_weights(self) -> list:
        """The weights' values as NumPy arrays (copies), in ``weights`` order."""
        return [np.array(v.numpy()) for v in self.weights]

    def set_weights(self, weights: list) -> None:
        """Assigns NumPy arrays to ``weights`` (same count and shapes)."""
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(
                f"Layer {self.name} weight shape mismatch: you called `set_weights(weights)` on layer "
                f"'{self.name}' with a weight list of length {len(weights)}, but the layer was expecting "
                f"{len(params)} weights."
            )
        for v, w in zip(params, weights):
            w = np.asarray(w.numpy() if hasattr(w, "numpy") else w)
            if tuple(v.shape.as_list()) != w.shape:
                raise ValueError(
                    f"Layer {self.name} weight shape mismatch: variable {getattr(v, 'path', v.name)} "
                    f"has shape {tuple(v.shape.as_list())}, but the provided weight has shape {w.shape}."
                )
        for v, w in zip(params, weights):
            v.assign(np.asarray(w.numpy() if hasattr(w, "numpy") else w, dtype=v.dtype.as_numpy_dtype))

    def count_params(self) -> int:
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but the layer isn't "
                             f"built. You can build it manually via: `layer.build(input_shape)`.")
        return int(sum(np.prod(v.shape.as_list(), dtype=np.int64) for v in self.weights))

    @property
    def losses(self) -> list:
        """``add_loss`` values of the last call plus the weight regularization
        penalties (recomputed from the current weights), this layer's first."""
        out = list(self._losses) + [reg(v) for v, reg in self._regularizers]
        for layer in self._sublayers():
            out.extend(layer.losses)
        return out

    def _activity_loss(self, output: Tensor) -> Tensor:
        """Keras 3: ``activity_regularizer(output)`` divided by the batch size (0 for an empty batch)."""
        loss = self.activity_regularizer(output)
        if len(output._shape_tuple()) > 0:
            from tapeflow.ops import shape_ops, special_ops

            loss = special_ops.divide_no_nan(loss, mo.cast(shape_ops.shape_of(output)[0], loss.dtype))
        return loss

    def add_loss(self, loss: Any) -> None:
        """Adds a loss tensor (from ``call``) that ``fit`` adds to the training loss."""
        self._losses.append(loss)

    def _clear_losses(self) -> None:
        self._losses = []
        for layer in self._sublayers():
            layer._clear_losses()

    # -- build / call ---------------------------------------------------------
    @_keras_default_build
    def build(self, input_shape: Any = None) -> None:
        """Creates the weights; the default has none."""
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        spec = self._symbolic_outputs((KerasTensor(tuple(input_shape)),), {})
        return nest.map_structure(lambda k: k.shape, spec)

    def _maybe_build(self, inputs: Any) -> None:
        if self.built:
            return
        shapes = nest.map_structure(lambda x: _shape_of(x), inputs)
        self._build_input_shape = shapes  # Keras' build_config
        self.build(shapes)
        self.built = True

    def _convert(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            t = x
        elif isinstance(x, Variable):
            t = x.value()
        elif isinstance(x, (np.ndarray, np.generic, list, tuple, float, int, bool)):
            t = convert_to_tensor(x)
        else:
            return x
        if self._autocast and t._value.dtype.kind == "f" and t._value.dtype != self._compute._np:
            t = mo.cast(t, self._compute)
        return t

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _has_keras_tensor((args, kwargs)):
            return self._symbolic_call(args, kwargs)
        if not args:
            first = _first_call_param(type(self).call)
            if first is None or first not in kwargs:
                raise TypeError(f"{type(self).__name__}.__call__ needs the inputs as its first positional argument")
            args = (kwargs.pop(first),)  # as Keras 3: the inputs by their name (model(inputs=x, states=s))
        if len(args) > 1 or not isinstance(args[0], (Tensor, np.ndarray)):
            self._check_positional_args(args)
        inputs = args[0]
        if isinstance(inputs, (list, tuple)) and not isinstance(inputs, np.ndarray) and any(
                isinstance(x, (Tensor, Variable, np.ndarray)) for x in nest.flatten(inputs)):
            inputs = nest.map_structure(self._convert, inputs)
        else:
            inputs = self._convert(inputs)
        if self._data_layer and state.graph is not None:  # Keras 3's DataLayer in a TF graph (tf.data map,
            inputs = nest.map_structure(self._to_compute_dtype, inputs)  # tf.function): compute dtype first
        args = (inputs,) + args[1:]
        accepts_training, _ = _call_flags(self)
        training = kwargs.get("training")
        if training is None:
            kwargs.pop("training", None)
            training = _ctx.training
            if training is None and accepts_training:
                training = _training_default(self)
        if accepts_training:
            kwargs["training"] = training
        else:
            kwargs.pop("training", None)
        previous = _ctx.training
        _ctx.training = training
        outermost = _ctx.depth == 0
        _ctx.depth += 1
        if outermost:
            self._clear_losses()  # add_loss() values belong to one forward pass, as in Keras
        call = self.call
        graph = state.graph
        if graph is not None and getattr(graph, "autograph", False):
            # fit() traces tapeflow code, which AutoGraph leaves alone; a user's
            # call() with tensor `if`/`while` still needs converting, as in TF.
            from tapeflow.graph.autograph import convert_if_needed

            call = convert_if_needed(call)
        # Keras masks (Embedding(mask_zero=True), Masking): the inputs' mask goes to call(mask=)
        # and compute_mask() gives the outputs' (see masking.py); nothing to do when no mask exists.
        in_mask = kwargs.get("mask")
        if _masking._MASKS and in_mask is None:
            in_mask = _masking.input_masks(inputs)
            if in_mask is not None and _call_flags(self)[1]:
                kwargs["mask"] = in_mask
        outer_cast = autocast_scope[0]  # Keras's AutocastScope rules:
        if outer_cast is not None:
            if not self._autocast or not self._compute.is_floating:
                autocast_scope[0] = None
            elif outer_cast.dtype is not self._compute:
                autocast_scope[0] = _caster(self._compute)
        elif self._compute is not self._dtype:
            autocast_scope[0] = _caster(self._compute)
        try:
            with self._open_name_scope():
                pending = self.__dict__.get("_pending_restore")
                building = not self.built
                if building and _wants_prerun(self):
                    self._prerun(args, kwargs)
                if building:
                    with self.name_scope:
                        self._maybe_build(inputs)
                    if state.dry_run_journal is not None:  # built as in Keras, outside its StatelessScope: what
                        state.dry_run_journal[0] = new_id()  # the call then assigns to these variables is undone
                    # Deferred checkpoint values (TF's deferred restoration): a variable gets its saved value
                    # once created, before it is used (a holder above applies them as each sub-layer builds).
                    if pending:
                        self._apply_pending_restore()
                    for root in _ctx.restore_roots:
                        root._apply_pending_restore()
                if pending:
                    _ctx.restore_roots.append(self)
                # A Sequential's first call is Keras 3's build of its graph: every layer gets a node with this
                # call's shapes, the ones summary() shows (the last node's), even for a layer called before.
                node_shapes = _ctx.node_shapes
                if building and self._first_call_builds_nodes:
                    _ctx.node_shapes = True
                try:
                    out = call(*args, **kwargs)
                except Exception as e:
                    new = None if _ctx.inferring else _with_call_info(e, f"{type(self).__name__}.call()", self.call,
                                                                      args, kwargs)
                    if new is None:
                        raise
                    raise new.with_traceback(e.__traceback__) from None
                finally:
                    _ctx.node_shapes = node_shapes
                    if pending:
                        _ctx.restore_roots.remove(self)
                if self.activity_regularizer is not None:
                    for t in nest.flatten(out):
                        if isinstance(t, Tensor):
                            self.add_loss(self._activity_loss(t))
            d = self.__dict__
            if d.get("_pending_restore"):
                self._apply_pending_restore()
            if d.get("_built_output_shape") is None or d.get("_shape_provisional") or _ctx.node_shapes:
                d["_shape_provisional"] = False
                # the first call's output shape, for summary() of models built by calling them
                none = _ctx.unknown_batch
                self._built_output_shape = nest.map_structure(
                    lambda t: ((None,) + tuple(t._shape_tuple())[1:] if none else tuple(t._shape_tuple()))
                    if hasattr(t, "_shape_tuple") else None, out)
            if in_mask is not None or type(self).compute_mask is not Layer.compute_mask:
                _masking.attach_output_masks(out, self.compute_mask(inputs, in_mask))
            return out
        finally:
            autocast_scope[0] = outer_cast
            _ctx.training = previous
            _ctx.depth -= 1

    _allow_non_tensor_positional_args = False  # Keras 3: True only for some preprocessing layers
    _data_layer = False  # Keras 3's DataLayer (image preprocessing, Rescaling, Normalization, ...)

    def _to_compute_dtype(self, x: Any) -> Any:
        if isinstance(x, Tensor) and x.dtype != self._compute and x.dtype != dtypes.string:
            return mo.cast(x, self._compute)
        return x
    _first_call_builds_nodes = False  # Sequential: its first call builds Keras 3's graph of nodes

    def _check_positional_args(self, args: tuple) -> None:
        """Keras 3 takes only tensors (or arrays, None) positionally: ``layer([[2.0, 2.0]])`` is a ValueError."""
        if self._allow_non_tensor_positional_args:
            return
        for arg in nest.flatten(args):
            if arg is None or isinstance(arg, (Tensor, Variable, KerasTensor)) or hasattr(arg, "__array__") \
                    or hasattr(arg, "_type_spec"):
                continue
            raise ValueError(f"Only input tensors may be passed as positional arguments. The following argument "
                             f"value should be passed as a keyword argument: {arg} (of type {type(arg)})")

    # -- the symbolic (functional) path -------------------------------------------
    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        """Output KerasTensors (no history) of calling on symbolic ``args``:
        runs the layer once on zeros with unknown dims set to 1."""

        def dummy(x):
            if isinstance(x, KerasTensor):
                shape = tuple(1 if d is None else d for d in x.shape)
                t = convert_to_tensor(np.zeros(shape, x._dtype.as_numpy_dtype))
                mask = x.__dict__.get("_keras_mask")
                if mask is not None:  # the stand-in carries a stand-in mask, so call(mask=) gets one
                    _masking.set_mask(t, convert_to_tensor(np.ones([1 if d is None else d for d in mask.shape], bool)))
                return t
            return x


        from tapeflow.framework.context import state

        # Dims other than the batch unknown: the dummy's 1s would give wrong
        # static shapes (and fail e.g. a 2x2 pool), so the output shapes come
        # from tracing the (built) layer on placeholders with those dims None.
        unknown_inner = any(isinstance(x, KerasTensor) and None in tuple(x.shape)[1:]
                            for x in nest.flatten((args, kwargs)))
        first = next((x for x in nest.flatten(args) if isinstance(x, KerasTensor)), None)
        unknown_batch = first is not None and first.shape and first.shape[0] is None
        # a layer passing its input's mask on (Keras's default compute_mask): the outputs' mask is that KerasTensor
        first_mask = None if first is None else first.__dict__.get("_keras_mask")
        passes_mask = first_mask is not None and type(self).compute_mask is Layer.compute_mask
        saved_tapes, saved_acc, saved_batch = state.tapes, state.accumulators, _ctx.unknown_batch
        state.tapes, state.accumulators = [], []  # building a model is never recorded
        state.update_recording()
        outermost = state.dry_run == 0
        if outermost:
            state.dry_run_journal = [new_id(), {}]
        state.dry_run += 1
        if unknown_batch:  # the shapes layers record on the stand-ins (summary's) keep the batch unknown
            _ctx.unknown_batch = True
        try:
            try:
                out = Layer.__call__(self, *nest.map_structure(dummy, args), **nest.map_structure(dummy, kwargs))
            except Exception:
                if not (unknown_inner and self.built):
                    raise
                out = None  # built before the call failed on the dummy: the trace below decides
            if unknown_inner:
                try:
                    out = self._traced_outputs(args, kwargs)
                except Exception:
                    if out is None:
                        raise
        finally:
            state.dry_run -= 1
            if outermost:  # Keras's StatelessScope: a seed generator or a counter the call advanced is as before
                for var, old in state.dry_run_journal[1].values():
                    var._value = old
                state.dry_run_journal = None
            state.tapes, state.accumulators = saved_tapes, saved_acc
            _ctx.unknown_batch = saved_batch
            state.update_recording()

        mask_fn = type(self).compute_mask
        graph_mask = first is not None and not passes_mask and (
            mask_fn in _GRAPH_MASKS or not getattr(mask_fn, "__module__", "tapeflow.").startswith("tapeflow."))
        masked: list = []

        def spec(t):
            shape = tuple(t._shape_tuple())
            if unknown_batch and shape:
                shape = (None,) + shape[1:]
            kt = KerasTensor(shape, t.dtype)
            mask = _masking.get_mask(t)
            if mask is not None:  # Keras's symbolic _keras_mask: here the output's leading dims
                mask_shape = shape[:len(mask._shape_tuple())]
                if graph_mask:
                    masked.append((kt, mask_shape))
                else:
                    kt._keras_mask = first_mask if passes_mask and tuple(first_mask.shape) == mask_shape \
                        else KerasTensor(mask_shape, "bool")
            return kt

        outputs = nest.map_structure(spec, out)
        if masked:  # as Keras, after the outputs: compute_mask on the KerasTensors, its ops nodes of the model
            try:
                symbolic = self.compute_mask(first, first_mask)
            except Exception:  # noqa: BLE001 - a user's compute_mask of TF ops (Keras raises): no mask node
                symbolic = None
            for kt, mask_shape in masked:
                kt._keras_mask = symbolic if isinstance(symbolic, KerasTensor) and tuple(symbolic.shape) == \
                    mask_shape else KerasTensor(mask_shape, "bool")
        return outputs

    def _prerun(self, args: tuple, kwargs: dict) -> None:
        """Keras's ``compute_output_spec(self.call, ...)`` before a first call: ``call`` runs in a scratch graph
        (the arguments captured as constants), building the sub-layers; its variable updates, ``add_loss`` values
        and ``tf.print`` output are dropped, and an exception is left for the real call to raise."""
        from tapeflow.framework.context import state
        from tapeflow.graph.graph import FuncGraph, graph_scope

        graph = FuncGraph(unique_name("scratch_graph"))
        layers, stack = [], [self]
        while stack:
            layer = stack.pop()
            if not any(layer is seen for seen in layers):
                layers.append(layer)
                stack.extend(layer._sublayers())
        saved = [(layer, list(layer._losses)) for layer in layers]
        state.dry_run += 1
        _ctx.inferring += 1
        try:
            with graph_scope(graph):
                out = self.call(*args, **kwargs)
            for t in nest.flatten(out):  # Keras turns each output into a KerasTensor (which takes a name)
                if isinstance(t, Tensor):
                    unique_name("keras_tensor")
        except Exception:  # noqa: BLE001 - as Keras, in an eager call: the real call shows the error
            pass
        finally:
            state.dry_run -= 1
            _ctx.inferring -= 1
            for layer, losses in saved:
                layer._losses = losses

    def _traced_outputs(self, args: tuple, kwargs: dict) -> Any:
        """The outputs of calling the built layer on placeholders shaped like
        the KerasTensors in ``args``/``kwargs`` (None dims stay unknown), in
        a throwaway graph; the layer's add_loss values are kept as they were."""
        from tapeflow.graph.graph import FuncGraph, graph_scope

        graph = FuncGraph(f"{self.name}_output_shapes")
        graph.autograph = True

        def placeholder(x):
            if isinstance(x, KerasTensor):
                t = graph.add_placeholder(tuple(x.shape), x._dtype)
                mask = x.__dict__.get("_keras_mask")
                if mask is not None:
                    _masking.set_mask(t, graph.add_placeholder(tuple(mask.shape), dtypes.bool))
                return t
            return x

        layers, stack = [], [self]
        while stack:  # the layer and all its sub-layers, each once
            layer = stack.pop()
            if not any(layer is seen for seen in layers):
                layers.append(layer)
                stack.extend(layer._sublayers())
        saved = [(layer, layer._losses) for layer in layers]
        try:
            with graph_scope(graph):
                return Layer.__call__(self, *nest.map_structure(placeholder, args),
                                      **nest.map_structure(placeholder, kwargs))
        finally:
            for layer, losses in saved:
                layer._losses = losses

    def _symbolic_call(self, args: tuple, kwargs: dict) -> Any:
        kwargs = {k: v for k, v in kwargs.items() if k != "training" or v is not None}
        kwargs = _populate_masks(self, args, kwargs)
        _ctx.inferring += 1
        try:
            outputs = self._symbolic_outputs(args, kwargs)
        except Exception as e:
            if _INPUT_SPEC_ERROR.match(str(e)) and any(
                    isinstance(x, KerasTensor) and None in tuple(x.shape) for x in nest.flatten((args, kwargs))):
                try:  # the check saw the stand-ins' shapes: again on placeholders, for Keras's shapes with None
                    self._traced_outputs(args, kwargs)
                except ValueError as again:
                    if _INPUT_SPEC_ERROR.match(str(again)):
                        raise again.with_traceback(e.__traceback__) from None
                except Exception:
                    pass
                raise
            err = e
            if _user_defined_spec_missing(self) and not hasattr(e, "_keras_call_info_injected") \
                    and not _INPUT_SPEC_ERROR.match(str(e)):
                cls = type(self).__name__
                try:  # Keras's Operation.compute_output_spec, for a layer that cannot say its output shape
                    err = type(e)(
                        f"Could not automatically infer the output shape / dtype of '{self.name}' (of type {cls}). "
                        f"Either the `{cls}.call()` method is incorrect, or you need to implement the `{cls}."
                        f"compute_output_spec() / compute_output_shape()` method. Error encountered:\n\n{e}")
                except Exception:
                    err = e
            new = _with_call_info(err, f"{type(self).__name__}.call()", _symbolic_signature, args, kwargs)
            if new is None and err is e:
                raise
            raise (new or err).with_traceback(e.__traceback__) from None
        finally:
            _ctx.inferring -= 1
        node = Node(self, args, kwargs, outputs)
        self._inbound_nodes.append(node)
        for kt in nest.flatten(outputs):
            kt._keras_history = (self, node)
        return outputs

    @property
    def input(self) -> Any:
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no input to return.")
        node = self._inbound_nodes[0]
        return node.args[0] if len(node.args) == 1 else list(node.args)

    @property
    def output(self) -> Any:
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} has no inbound nodes.")
        return self._inbound_nodes[0].outputs

    @property
    def output_shape(self) -> Any:
        if not self._inbound_nodes and getattr(self, "_built_output_shape", None) is not None:
            return self._built_output_shape
        return nest.map_structure(lambda k: k.shape, self.output)

    def get_config(self) -> dict:
        """The constructor arguments that rebuild this layer (``type(layer).from_config(config)``).

        Generated from the arguments ``__init__`` received, as Keras 3's auto-config; a user class
        that overrides ``get_config`` and calls ``super().get_config()`` gets only name/trainable/dtype
        here, as in Keras."""
        from tapeflow.keras.saving.serialization import auto_config, base_config

        override = next((k for k in type(self).__mro__ if "get_config" in k.__dict__), Layer)
        if override is not Layer and not override.__module__.startswith("tapeflow."):
            return base_config(self)
        return auto_config(self)

    @classmethod
    def from_config(cls, config: dict) -> Layer:
        from tapeflow.keras.saving.serialization import layer_from_config

        return layer_from_config(cls, config)

    def get_build_config(self) -> dict | None:
        from tapeflow.keras.saving.serialization import _build_config

        return _build_config(self)

    def build_from_config(self, config: dict) -> None:
        if config and not self.built:  # Keras's get_build_config then gives these shapes as they were read
            self._loaded_build_config = config
        shapes = config.get("shapes_dict") if config else None
        if shapes and not self.built:  # Keras 3's one shape per build argument
            from tapeflow.keras.saving.serialization import _as_shape

            self.build(**{k: _as_shape(v) for k, v in shapes.items()})
            self.built = True
        shape = config.get("input_shape") if config else None
        if shape is not None and not self.built:
            from tapeflow.keras.saving.serialization import _as_shape

            if not (_wants_prerun(self) and getattr(self, "_functional", None) is None
                    and self._build_by_run(_as_shape(shape))):
                self.build(_as_shape(shape))
            self._build_input_shape = _as_shape(shape)
            self.built = True

    def _build_by_run(self, shape: Any) -> bool:
        """Keras's ``_build_by_run_for_single_pos_arg`` (a loaded user layer or model without ``build()``): its
        ``call`` runs once on stand-in inputs, outside its own name scope (so a loaded subclassed model's weights
        are ``dense/kernel``, not ``model/dense/kernel``, as in Keras); False if that fails."""
        dims = tuple(shape) if isinstance(shape, (list, tuple)) else ()
        if not dims or not all(d is None or isinstance(d, (int, np.integer)) for d in dims):
            return False  # one input shape only (a nested structure is built by build())
        x = convert_to_tensor(np.zeros([1 if d is None else int(d) for d in dims], np.float32))
        saved_tapes, saved_acc = state.tapes, state.accumulators
        state.tapes, state.accumulators = [], []
        state.update_recording()
        state.dry_run += 1
        _ctx.inferring += 1
        losses = list(self._losses)
        try:
            self.call(x)
            return True
        except Exception:  # noqa: BLE001 - as Keras: then build() is tried
            return False
        finally:
            state.dry_run -= 1
            _ctx.inferring -= 1
            state.tapes, state.accumulators = saved_tapes, saved_acc
            state.update_recording()
            self._losses = losses

    def _defer_restore(self, name: str, value: Any) -> bool:
        """``tf.train.Checkpoint.restore`` before the layer is built: a saved value for a variable that does not
        exist yet (``layer_with_weights-0/kernel``, ``dense/kernel``) waits until the first call creates it, as
        TF's deferred restoration; a built layer declines (the value is reported unused)."""
        if self.built:
            return False
        self.__dict__.setdefault("_pending_restore", {})[name] = value
        return True

    def _apply_pending_restore(self) -> None:
        from tapeflow.train.checkpoint import _check_compatible, _walk

        pending = self.__dict__["_pending_restore"]
        variables, _ = _walk(self)
        found = [(key, variables[key]) for key in pending if key in variables]
        for key, var in found:
            _check_compatible(key, var, pending[key])
        for key, var in found:
            var._value = pending.pop(key)

    def _trackable_children(self) -> dict:
        """Checkpoint protocol (TF Keras' layout): own variables by Keras name
        (``kernel``), then sub-layers by attribute name (``dense/kernel``)."""
        out: dict = {}
        for v in self._own_trainable + self._own_non_trainable:
            out[getattr(v, "_keras_name", v.name)] = v
        for key, value in vars(self).items():
            if key in _UNTRACKED or key in out or key.startswith("__"):
                continue
            if isinstance(value, Layer) or (isinstance(value, (list, tuple, dict)) and any(
                    isinstance(x, (Layer, Variable)) for x in nest.flatten(value))):
                out[key] = value
        return out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _shape_of(x: Any) -> Any:
    if isinstance(x, (Tensor, KerasTensor, Variable)):
        return tuple(x._shape_tuple())
    if hasattr(x, "shape"):
        return tuple(x.shape)
    return None


class InputLayer(Layer):
    """The layer behind ``tf.keras.Input``: it only holds the input's shape."""

    def __init__(self, shape: Any = None, batch_size: int | None = None, dtype: Any = None, name: str | None = None,
                 input_tensor: Any = None, batch_shape: Any = None, sparse: Any = None, ragged: Any = None,
                 optional: bool = False, **kwargs: Any) -> None:
        if optional:
            raise NotImplementedError("InputLayer(optional=True) (an input that may be None) is not implemented "
                                      "in tapeflow")
        if sparse and ragged:
            raise ValueError("You cannot create a tensor that is both sparse and ragged.")
        if "input_shape" in kwargs:
            shape = kwargs.pop("input_shape")
        if batch_shape is not None:
            if not hasattr(batch_shape, "__iter__"):
                raise ValueError(f"Cannot convert '{batch_shape}' to a shape.")
            shape, batch_size = tuple(batch_shape)[1:], batch_shape[0]
        super().__init__(name=name or unique_name("input_layer"), dtype=dtype, **kwargs)
        if shape is None and input_tensor is None:
            raise ValueError("You must pass a `shape` argument to Input/InputLayer.")
        if shape is not None:  # (an int is no shape in Keras 3: Input(shape=20) raises, as below)
            try:
                dims = [d for d in shape if d is not None]
            except TypeError:
                raise ValueError(f"Cannot convert '{shape}' to a shape.") from None
            if not all(isinstance(d, (int, np.integer)) for d in dims):
                raise ValueError(f"Cannot convert '{shape}' to a shape.")
            if any(d < 0 for d in dims):
                raise ValueError(f"Cannot convert '{shape}' to a shape. Negative dimensions are not allowed.")
        self._batch_shape = (batch_size,) + tuple(shape)
        self.output_tensor = input_tensor or KerasTensor(self._batch_shape, dtype or "float32", name=name)
        self.output_tensor._keras_history = (self, None)
        if sparse:
            self.output_tensor.sparse = True
        if ragged:
            self.output_tensor.ragged = True
        self.built = True

    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    # Keras 3 gives an InputLayer one node with no inputs whose output is the Input's tensor
    # (``[layer.output for layer in vgg19.layers]`` starts with it).
    @property
    def input(self) -> Any:
        return []

    @property
    def output(self) -> Any:
        return self.output_tensor

    def get_config(self) -> dict:
        return {"batch_shape": tuple(self._batch_shape), "dtype": self.output_tensor.dtype
                if isinstance(self.output_tensor.dtype, str) else self.output_tensor.dtype.name,
                "sparse": bool(self.output_tensor.sparse), "ragged": bool(self.output_tensor.ragged),
                "name": self.name, "optional": False}

    def call(self, inputs: Any) -> Any:
        return inputs

    def _convert(self, x: Any) -> Any:
        """Keras's ``_convert_inputs_to_tensors``: a model's input takes its ``Input``'s dtype (a uint8 image
        fed to a float32 ``Input`` is cast to float32; strings fed to a numeric ``Input`` fail TF's Cast)."""
        return cast_input(super()._convert(x), self.output_tensor.dtype, strings=True)


def _first_call_param(call: Any) -> str | None:
    """The name of ``call``'s first argument after ``self`` (the inputs), or None."""
    import inspect

    try:
        params = list(inspect.signature(call).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    ok = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return params[0].name if params and params[0].kind in ok else None


def cast_input(x: Any, dtype: Any, strings: bool = False) -> Any:
    """``x`` (a numeric or bool tensor) cast to a model input's ``dtype``; anything else unchanged. With
    ``strings``, a string tensor for a numeric input is cast too: TF's ``UnimplementedError``, as Keras's."""
    if not isinstance(x, Tensor) or x._value.dtype.kind not in ("biufO" if strings else "biuf"):
        return x
    target = dtypes.as_dtype(dtype)
    if target == dtypes.string or x.dtype == target:
        return x
    return mo.cast(x, target)


def Input(shape: Any = None, batch_size: int | None = None, dtype: Any = None, name: str | None = None,  # noqa: N802
          batch_shape: Any = None, tensor: Any = None, sparse: Any = None, ragged: Any = None,
          **kwargs: Any) -> KerasTensor:
    """A symbolic input for the functional API: ``x = tf.keras.Input(shape=(8, 8, 1))``;
    ``sparse=True`` / ``ragged=True`` mark an input fed SparseTensors / RaggedTensors."""
    if batch_shape is not None:
        if not hasattr(batch_shape, "__iter__"):
            raise ValueError(f"Cannot convert '{batch_shape}' to a shape.")
        shape, batch_size = tuple(batch_shape)[1:], batch_shape[0]
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name, sparse=sparse, ragged=ragged)
    return layer.output_tensor


class _OpLayer(Layer):  # noqa: F811 -- defined here, after Layer
    """A Python operator applied to KerasTensors (``inputs / 255.0``, ``x[:, 0]``): a weightless
    node of the functional graph, named like Keras' operation (``add``, ``true_divide``) and saved as
    Keras saves it (``keras.src.ops.numpy``, the operator's arguments in ``inbound_nodes``); it is
    not listed in ``model.layers``, as Keras 3 lists only layers."""

    def __init__(self, op: str, args: tuple, name: str | None = None, decimals: int = 0,
                 config: dict | None = None, kwargs: dict | None = None) -> None:
        cls = _OPS[op][0]
        super().__init__(name=name or unique_name(to_snake_case(cls)))
        self._op = op
        self._op_class = cls  # Keras' operation class, as summary() shows it
        self._op_module = _OP_MODULES.get(op, "keras.src.ops.numpy")
        self._args = args  # the operator's arguments; KerasTensors stand where the inputs go
        self._decimals = decimals
        self._config = dict(config or {})  # a keras.ops operation's other arguments (its Keras config)
        self._kwargs = dict(kwargs or {})  # call arguments Keras passes by keyword (average's weights)
        self._autocast = False

    def __call__(self, inputs: Any = None, **kwargs: Any) -> Any:
        # Built with its KerasTensor arguments; a model's run calls it again with their values.
        if inputs is None:
            inputs = [a for a in nest.flatten((self._args, self._kwargs)) if isinstance(a, KerasTensor)]
        return super().__call__(list(inputs), **kwargs)

    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        try:
            return super()._symbolic_outputs(args, kwargs)
        except Exception:
            # zeros are no valid input to every operation (a Cholesky factor, an inverse): the shapes
            # come from a trace on placeholders instead
            try:
                out = self._traced_outputs(args, kwargs)
            except Exception:
                pass
            else:
                return nest.map_structure(lambda t: KerasTensor(tuple(t._shape_tuple()), t.dtype), out)
            raise

    def get_config(self) -> dict:
        config = {"name": self.name}
        if self._op == "round":
            config["decimals"] = self._decimals
        config.update(self._config)
        return config

    def call(self, inputs: Any) -> Any:
        values = iter(inputs)
        args, kwargs = nest.map_structure(lambda a: next(values) if isinstance(a, KerasTensor) else a,
                                          (self._args, self._kwargs))
        if self._config or kwargs or self._op.startswith("ops."):
            out = _OPS[self._op][2](*args, **kwargs, **self._config)
            return convert_to_tensor(out, dtypes.int32) if isinstance(out, int) else out  # ndim's int
        if self._op == "round":
            x = args[0]
            if not self._decimals:
                return mo.round(x)
            scale = 10.0 ** self._decimals
            return mo.round(x * scale) / scale
        return _OPS[self._op][2](*args)
