"""``tf.keras.mixed_precision``: dtype policies and dynamic loss scaling.

>>> tf.keras.mixed_precision.set_global_policy("mixed_float16")
>>> layer = tf.keras.layers.Dense(10)      # float32 variables, float16 math
>>> layer.compute_dtype, layer.variable_dtype
('float16', 'float32')

Under ``mixed_float16`` a layer casts its floating inputs to float16 and, while
its ``call`` runs, reads its float32 variables as float16 (Keras 3's autocast);
gradients flow back to the float32 variables. ``compile`` wraps the optimizer
in a ``LossScaleOptimizer``, as Keras does. ``mixed_bfloat16`` needs a bfloat16
dtype tapeflow does not have and raises ``NotImplementedError``.
"""

from __future__ import annotations

from typing import Any

from tapeflow.framework import dtypes

# (LossScaleOptimizer is here too, loaded on first use)
__all__ = ["DTypePolicy", "Policy", "set_global_policy", "global_policy", "set_dtype_policy", "dtype_policy"]

_FLOATS = ("float16", "float32", "float64")


class DTypePolicy:
    """A layer's dtypes: ``compute_dtype`` for its math, ``variable_dtype`` for its weights.

    ``"mixed_float16"`` computes in float16 with float32 variables; a float dtype
    name (``"float32"``, ``"float64"``, ``"float16"``) uses it for both.
    """

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = global_policy().name
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: name={name} "
                            f"(of type {type(name)})")
        if name == "mixed_bfloat16" or name == "bfloat16":
            raise NotImplementedError(f"DTypePolicy('{name}'): tapeflow has no bfloat16 dtype; use "
                                      "'mixed_float16' or a float dtype such as 'float32'")
        if name == "mixed_float16":
            self._compute, self._variable = "float16", "float32"
        else:
            try:
                dt = dtypes.as_dtype(name).name
            except (TypeError, ValueError, KeyError):
                dt = None
            if dt is None or dt not in _FLOATS + ("int32", "int64", "uint8", "bool", "int8", "int16", "string"):
                raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
                                 "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as "
                                 "'float32'.")
            self._compute = self._variable = dt
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def compute_dtype(self) -> str:
        return self._compute

    @property
    def variable_dtype(self) -> str:
        return self._variable

    @property
    def quantization_mode(self) -> None:
        """Keras's quantization mode of the policy: ``None`` (tapeflow has no quantized policies)."""
        return None

    def get_config(self) -> dict:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config: dict) -> DTypePolicy:
        return cls(**config)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, DTypePolicy):
            return self._name == other._name
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy

_global: list = [None]  # None: a policy of Keras's floatx
_floatx: list = ["float32"]  # tf.keras.backend.set_floatx


def as_policy(dtype: Any) -> DTypePolicy:
    """The policy for a layer's ``dtype`` argument: None (the global policy), a
    policy, a policy name, a dtype, or Keras's serialized ``{"class_name": "DTypePolicy", ...}``."""
    if dtype is None:
        return global_policy()
    if isinstance(dtype, DTypePolicy):
        return dtype
    if isinstance(dtype, dict) and "config" in dtype:
        return DTypePolicy(**dtype["config"])
    if isinstance(dtype, dtypes.DType):
        return DTypePolicy(dtype.name)
    if isinstance(dtype, str):
        return DTypePolicy(dtype)
    return DTypePolicy(dtypes.as_dtype(dtype).name)


def set_global_policy(policy: Any) -> None:
    """Sets the policy of layers created from now on (``"mixed_float16"``, ``"float32"``, a Policy, or None)."""
    if policy is None:
        _global[0] = None
        return
    p = as_policy(policy)
    if p.compute_dtype not in _FLOATS:
        raise ValueError(f"set_global_policy can only be used to set the global policy to floating-point policies, "
                         f"such as 'float32' and 'mixed_float16', but got policy: {p.name}")
    _global[0] = p


def global_policy() -> DTypePolicy:
    """The global dtype policy (``float32`` unless ``set_global_policy`` changed it)."""
    if _global[0] is None:  # Keras fixes the policy of floatx() on first use (clear_session resets it)
        _global[0] = DTypePolicy(_floatx[0])
    return _global[0]


set_dtype_policy = set_global_policy
dtype_policy = global_policy


def __getattr__(name: str) -> Any:
    # the optimizer package loads only when LossScaleOptimizer is asked for
    if name == "LossScaleOptimizer":
        from tapeflow.keras.optimizers.loss_scale_optimizer import LossScaleOptimizer

        return LossScaleOptimizer
    raise AttributeError(f"module 'tapeflow.keras.mixed_precision' has no attribute '{name}'")
