"""``tf.compat.v1``: eager-mode no-ops and TF 2's errors for graph-mode TF 1 names."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.context import executing_eagerly

import numpy as np

from tapeflow.framework.tensor_shape import Dimension, TensorShape
from tapeflow.graph.session import Graph, Session, default_graph

__all__ = ["enable_eager_execution", "enable_v2_behavior", "disable_eager_execution", "disable_v2_behavior",
           "executing_eagerly", "placeholder", "Session", "Graph", "Dimension", "enable_tensor_equality",
           "disable_tensor_equality", "get_variable", "variable_scope", "VariableScope", "global_variables",
           "trainable_variables", "global_variables_initializer", "variables_initializer",
           "initialize_all_variables", "train"]

_EQUALITY_OFF: dict | None = None  # the original operators while tensor equality is disabled


def disable_tensor_equality() -> None:
    """TF 1 semantics: ``==``/``!=`` on tensors and variables compare identity (Python bools) and they hash
    by id, as ``tf.compat.v1.disable_tensor_equality``. ``enable_tensor_equality`` restores TF 2's."""
    global _EQUALITY_OFF
    if _EQUALITY_OFF is not None:
        return
    from tapeflow.framework.tensor import Tensor
    from tapeflow.framework.variables import Variable

    _EQUALITY_OFF = {cls: {k: cls.__dict__[k] for k in ("__eq__", "__ne__", "__hash__") if k in cls.__dict__}
                     for cls in (Tensor, Variable)}
    for cls in (Tensor, Variable):
        cls.__eq__ = lambda self, other: self is other
        cls.__ne__ = lambda self, other: self is not other
        cls.__hash__ = lambda self: id(self)


def enable_tensor_equality() -> None:
    """TF 2 semantics (the default): ``==`` on tensors is elementwise, tensors and variables are unhashable."""
    global _EQUALITY_OFF
    if _EQUALITY_OFF is None:
        return
    for cls, saved in _EQUALITY_OFF.items():
        for k in ("__eq__", "__ne__", "__hash__"):
            if k in saved:
                setattr(cls, k, saved[k])
            elif k in cls.__dict__:
                delattr(cls, k)
    _EQUALITY_OFF = None


def enable_eager_execution(config: Any = None, device_policy: Any = None, execution_mode: Any = None) -> None:
    """No-op: tapeflow always executes eagerly (as TF 2)."""


def enable_v2_behavior() -> None:
    """No-op: tapeflow has TF 2's behaviour."""


def disable_eager_execution() -> None:
    raise NotImplementedError("tf.compat.v1.disable_eager_execution: tapeflow has no TF 1 graph mode; "
                              "use tf.function for graphs")


disable_v2_behavior = disable_eager_execution


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Any:
    """A graph input of a TF 1 graph (``with tf.Graph().as_default():``), fed by ``Session.run``'s
    ``feed_dict``; eagerly TF 2's ``RuntimeError``."""
    g = default_graph()
    if g is None:
        raise RuntimeError("tf.placeholder() is not compatible with eager execution.")
    dims = None if shape is None else TensorShape(shape)
    dims = None if dims is None or dims.rank is None else tuple(dims.as_list())
    return g.add_placeholder(dims, dtype, name or "Placeholder")


_VAR_SCOPES: list[str] = []  # tf.compat.v1.variable_scope's names, outermost first


class VariableScope:
    """What ``variable_scope`` enters: its ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.original_name_scope = name + "/" if name else ""


class variable_scope:  # noqa: N801 - TF's name
    """``with tf.compat.v1.variable_scope("block"):`` names ``get_variable``'s variables ``block/...`` (and,
    as TF's, opens the name scope ``block`` for other ops and variables)."""

    def __init__(self, name_or_scope: Any, default_name: str | None = None, values: Any = None,
                 initializer: Any = None, regularizer: Any = None, caching_device: Any = None,
                 partitioner: Any = None, custom_getter: Any = None, reuse: Any = None, dtype: Any = None,
                 use_resource: Any = None, constraint: Any = None, auxiliary_name_scope: bool = True) -> None:
        name = name_or_scope.name if isinstance(name_or_scope, VariableScope) else name_or_scope
        if name is None:
            if default_name is None:
                raise TypeError("If default_name is None then name_or_scope is required")
            name = default_name
        self._name = str(name)
        self._ns: Any = None

    def __enter__(self) -> VariableScope:
        from tapeflow.module import name_scope

        _VAR_SCOPES.append(self._name)
        self._ns = name_scope(self._name)
        self._ns.__enter__()
        return VariableScope("/".join(_VAR_SCOPES))

    def __exit__(self, *exc: Any) -> None:
        self._ns.__exit__(*exc)
        _VAR_SCOPES.pop()


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None, regularizer: Any = None,
                 trainable: bool | None = None, collections: Any = None, caching_device: Any = None,
                 partitioner: Any = None, validate_shape: bool = True, use_resource: Any = None,
                 custom_getter: Any = None, constraint: Any = None, **kwargs: Any) -> Any:
    """TF 1's ``get_variable``: a variable named by the enclosing ``variable_scope``s (not by name scopes),
    initialized by ``initializer(shape, dtype)`` (default Glorot uniform) or to ``initializer`` itself. In a
    TF 1 graph a name is made once (a second ``get_variable`` of it is TF's ``ValueError``)."""
    from tapeflow import initializers
    from tapeflow.framework import dtypes
    from tapeflow.framework.tensor import Tensor
    from tapeflow.framework.variables import Variable
    from tapeflow.graph.graph import graph_scope

    full = "/".join(_VAR_SCOPES + [name])
    g = default_graph()
    if g is not None and full in g.var_store:
        raise ValueError(f"Variable {full} already exists, disallowed. Did you mean to set reuse=True or "
                         "reuse=tf.AUTO_REUSE in VarScope?")
    dtype = dtypes.as_dtype(dtype or dtypes.float32)
    if initializer is None:
        initializer = initializers.GlorotUniform()
    with graph_scope(None):  # the initial value is a value, computed now (TF lifts initializers out too)
        if callable(initializer):
            if shape is None:
                raise ValueError(f"Shape of a new variable ({full}) must be fully defined, but instead was None.")
            value = initializer(TensorShape(shape).as_list(), dtype=dtype)
        else:
            value = initializer if isinstance(initializer, Tensor) else Tensor(np.asarray(initializer,
                                                                                          dtype=dtype._np))
    var = Variable(value, name=f"{full}:0", trainable=trainable, dtype=dtype, constraint=constraint)
    if g is not None:
        g.var_store[full] = var
    return var


def global_variables(scope: str | None = None) -> list:
    """The variables made in the current TF 1 graph, in order (eagerly: ``[]``, as TF 2)."""
    g = default_graph()
    if g is None:
        return []
    return [v for v in g.variables if scope is None or v.name.startswith(scope)]


def trainable_variables(scope: str | None = None) -> list:
    return [v for v in global_variables(scope) if v.trainable]


def variables_initializer(var_list: list, name: str = "init") -> Any:
    """An op running each variable's initializer (None when executing eagerly, as TF's no-op)."""
    g = default_graph()
    if g is None:
        return None
    return g.group([g.initializer(v) for v in var_list], name=name)


def global_variables_initializer() -> Any:
    return variables_initializer(global_variables())


def initialize_all_variables() -> Any:
    return global_variables_initializer()


from tapeflow.compat import v1_train as train  # noqa: E402 - tf.compat.v1.train (Saver ...)


def __getattr__(name: str):
    from tapeflow.framework.errors import NotImplementedInTapeflowError

    if name == "keras":  # in TF 2.21 tf.compat.v1.keras is Keras 3, as tf.keras
        import tapeflow.keras

        return tapeflow.keras
    if name in ("zeros_initializer", "ones_initializer", "constant_initializer", "random_normal_initializer",
                "random_uniform_initializer"):
        import tapeflow

        return getattr(tapeflow, name)
    if name == "truncated_normal_initializer":
        from tapeflow.feature_column import TruncatedNormalV1

        return TruncatedNormalV1
    if name == "feature_column":
        import tapeflow.feature_column

        return tapeflow.feature_column
    if name in ("ConfigProto", "GPUOptions", "GraphOptions", "OptimizerOptions", "RunOptions"):
        from tapeflow.compat import config_protos

        return getattr(config_protos, name)
    if name == "distribute":
        from tapeflow.compat import v1_distribute

        return v1_distribute
    if name == "saved_model":
        from tapeflow.compat import v1_saved_model

        return v1_saved_model
    if name == "CriticalSection":
        from tapeflow.ops.critical_section_ops import CriticalSection

        return CriticalSection
    if name == "estimator":  # TF 2.16 removed it: TF 2.21 raises this AttributeError too
        raise AttributeError("module 'tensorflow.compat.v1' has no attribute 'estimator' (TensorFlow 2.16 "
                             "removed tf.estimator; use tf.keras)")
    raise NotImplementedInTapeflowError(f"tf.compat.v1.{name} is not implemented in tapeflow")
