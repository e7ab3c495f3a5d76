"""``tf.keras.dtype_policies``: Keras 3's dtype policies (``DTypePolicy``, its alias ``FloatDTypePolicy``,
``DTypePolicyMap``) and ``get``/``serialize``/``deserialize``.

>>> tf.keras.dtype_policies.get("mixed_float16").compute_dtype
'float16'

The quantized policies (``QuantizedDTypePolicy``, ``Int4DTypePolicy``, ...) belong to Keras's quantization,
which tapeflow does not implement: they raise ``NotImplementedError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, MutableMapping
from typing import Any

import numpy as np

from tapeflow.keras.mixed_precision import DTypePolicy, global_policy

__all__ = ["DTypePolicy", "DTypePolicyMap", "FloatDTypePolicy", "deserialize", "get", "serialize"]

_QUANTIZATION_MODES = ("int8", "float8", "int4", "gptq", "awq")


class FloatDTypePolicy(DTypePolicy):
    """Keras 3's alias of ``DTypePolicy`` (it prints, and compares equal, as one)."""


class DTypePolicyMap(DTypePolicy, MutableMapping):
    """A dict from layer paths to ``DTypePolicy``\\ s, with a ``default_policy`` (``keras.config.dtype_policy()``
    when not given) for paths it does not hold. A key matches a path exactly or, failing that, as a regular
    expression (``re.fullmatch``); a path matching several patterns is a ``ValueError``.

    >>> m = tf.keras.dtype_policies.DTypePolicyMap(default_policy="float32")
    >>> m["encoder/.*"] = "float16"
    >>> m["encoder/attention/query"].name, m["decoder"].name
    ('float16', 'float32')
    """

    def __init__(self, default_policy: Any = None, policy_map: dict | None = None) -> None:
        if isinstance(default_policy, DTypePolicyMap):
            raise ValueError("`default_policy` cannot be a `DTypePolicyMap`.")
        if policy_map is not None and not isinstance(policy_map, dict):
            raise TypeError("If specified, `policy_map` must be a dict. "
                            f"Received: policy_map={policy_map} of type {type(policy_map)}")
        self._default_policy_arg = default_policy
        self._default_policy = get(default_policy)
        self._policy_map = policy_map or {}

    @property
    def name(self) -> str:
        return f"map_{self.default_policy.name}"

    @property
    def default_policy(self) -> DTypePolicy:
        return get(self._default_policy)

    @property
    def variable_dtype(self) -> str:
        return self.default_policy.variable_dtype

    @property
    def compute_dtype(self) -> str:
        return self.default_policy.compute_dtype

    @property
    def quantization_mode(self) -> None:
        return self.default_policy.quantization_mode

    def __getitem__(self, key: str) -> DTypePolicy:
        if key in self._policy_map:
            return self._policy_map[key]
        matching = [pattern for pattern in self._policy_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Path '{key}' matches multiple dtype policy specification keys: {matching}. Please "
                             "make sure each path only matches at most one dtype policy specification key in the "
                             "DTypePolicyMap.")
        if matching:
            return self._policy_map[matching[0]]
        return self.default_policy

    def __setitem__(self, key: str, policy: Any) -> None:
        if key in self._policy_map:
            raise ValueError(f"{key} already exist in the DTypePolicyMap with value {self._policy_map[key]}. "
                             "Please make sure to not use duplicated keys.")
        try:
            policy = get(policy)
        except Exception:
            raise ValueError("Cannot interpret the assigned value by `keras.dtype_policies.get`. "
                             f"Received: {policy} of type {type(policy)}") from None
        self._policy_map[key] = policy

    def __delitem__(self, key: str) -> DTypePolicy:
        return self._policy_map.pop(key)

    def __contains__(self, key: object) -> bool:
        return key in self._policy_map

    def __len__(self) -> int:
        return len(self._policy_map)

    def __iter__(self) -> Iterator:
        return iter(self._policy_map)

    def __eq__(self, other: Any) -> bool:
        return self is other

    __hash__ = object.__hash__

    def get_config(self) -> dict:
        return {"default_policy": self._default_policy_arg,
                "policy_map": {k: serialize(v) for k, v in self._policy_map.items()}}

    @classmethod
    def from_config(cls, config: dict, custom_objects: dict | None = None) -> DTypePolicyMap:
        config = dict(config)
        config["policy_map"] = {k: deserialize(v, custom_objects) for k, v in (config.get("policy_map") or {}).items()}
        return cls(**config)

    def __repr__(self) -> str:
        default = self._default_policy.name if self._default_policy is not None else None
        mapping = [(k, v.name) for k, v in self._policy_map.items()]
        return f"<DTypePolicyMap at {hex(id(self))} default_policy={default}, mapping={mapping}>"


_CLASSES = {"DTypePolicy": DTypePolicy, "FloatDTypePolicy": FloatDTypePolicy, "DTypePolicyMap": DTypePolicyMap}


def _quantized(name: str) -> None:
    from tapeflow.framework.errors import NotImplementedInTapeflowError

    raise NotImplementedInTapeflowError(f"tf.keras.dtype_policies.{name} (Keras's quantization) is not implemented "
                                        "in tapeflow")


def serialize(dtype_policy: DTypePolicy) -> dict:
    """Keras's ``{"module": ..., "class_name": ..., "config": ..., "registered_name": None}`` of a policy."""
    if isinstance(dtype_policy, DTypePolicy):
        cls = type(dtype_policy)
        name = cls.__name__ if cls in (FloatDTypePolicy, DTypePolicyMap) else "DTypePolicy"
        module = "keras.dtype_policies" if cls is DTypePolicyMap else "keras"
        config = dtype_policy.get_config()
        if cls is DTypePolicyMap and config["default_policy"] is not None:
            config["default_policy"] = serialize(get(config["default_policy"]))
        return {"module": module, "class_name": name, "config": config, "registered_name": None}
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(dtype_policy)


def deserialize(config: Any, custom_objects: dict | None = None) -> DTypePolicy:
    """The policy a ``serialize`` dict describes."""
    if isinstance(config, dict) and config.get("class_name") in _CLASSES:
        cls = _CLASSES[config["class_name"]]
        inner = config.get("config") or {}
        if cls is DTypePolicyMap:
            return DTypePolicyMap.from_config(inner, custom_objects)
        return cls.from_config(inner)
    if isinstance(config, dict) and str(config.get("class_name", "")).endswith("DTypePolicy"):
        _quantized(config["class_name"])
    from tapeflow.keras.saving.serialization import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects=custom_objects)


def get(identifier: Any) -> DTypePolicy:
    """A policy from ``None`` (the global policy), a policy, its name, a serialized dict or a dtype."""
    if identifier is None:
        return global_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier.startswith(_QUANTIZATION_MODES):
            _quantized(f"get('{identifier}')")
        return DTypePolicy(identifier)
    from tapeflow.framework import dtypes

    if isinstance(identifier, dtypes.DType) or (isinstance(identifier, type) and issubclass(identifier, np.generic)) \
            or isinstance(identifier, np.dtype):
        return DTypePolicy(dtypes.as_dtype(identifier).name)
    raise ValueError("Cannot interpret `dtype` argument. Expected a string or an instance of DTypePolicy. "
                     f"Received: dtype={identifier}")


def __getattr__(name: str) -> Any:
    if name in ("QuantizedDTypePolicy", "QuantizedFloat8DTypePolicy", "Int4DTypePolicy", "GPTQDTypePolicy",
                "AWQDTypePolicy"):
        _quantized(name)
    raise AttributeError(f"module 'tapeflow.keras.dtype_policies' has no attribute '{name}'")
