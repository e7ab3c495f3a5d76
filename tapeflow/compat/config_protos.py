"""``tf.compat.v1.ConfigProto``, ``GPUOptions``, ``GraphOptions``, ``OptimizerOptions`` and ``RunOptions``: TF's
session-configuration protocol buffers, as messages with TF's fields (numbers, types, defaults), keyword
construction, sub-messages that come into being when touched, type checks and errors, the text format ``print``
shows, ``SerializeToString``/``FromString`` (protobuf's wire format, byte-equal for one-entry maps) and
``CopyFrom``/``MergeFrom``/``HasField``/``ClearField``.

tapeflow has no sessions' devices, thread pools or graph optimizers to configure: a ``tf.compat.v1.Session``
takes a ``config`` and runs as without one. Sub-messages tapeflow does not model (``rpc_options``,
``cluster_def``, ``experimental``, ``rewrite_options``, ``debug_options``, ...) raise ``NotImplementedError``.
"""

from __future__ import annotations

import struct
from typing import Any

__all__ = ["ConfigProto", "GPUOptions", "GraphOptions", "OptimizerOptions", "RunOptions"]

_MASK64 = (1 << 64) - 1


def _int_check(message: Any, name: str, value: Any, bits: int) -> int:
    if isinstance(value, bool):
        raise TypeError(f"Field tensorflow.{type(message).__name__}.{name}: Expected an int, got a boolean.")
    if isinstance(value, float):
        raise TypeError("'float' object cannot be interpreted as an integer")
    if not hasattr(value, "__index__"):
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
    v = int(value)
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise ValueError(f"Value out of range: {v}")
    return v


class _Message:
    """A protocol buffer message: ``_FIELDS`` maps a name to ``(number, kind, extra)``; kinds are "int32",
    "int64", "bool", "double", "string", "enum" (extra: the value names), "message" (extra: the class name),
    "map" (string to int32), "repeated_string", and "unmodelled" (a message type tapeflow has no class for)."""

    _FIELDS: dict = {}

    def __init__(self, **kwargs: Any) -> None:
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_parent", None)
        for name, value in kwargs.items():
            if name not in self._FIELDS:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
            kind = self._FIELDS[name][1]
            if kind == "message":
                cls = _CLASSES[self._FIELDS[name][2]]
                if isinstance(value, dict):
                    value = cls(**value)
                elif not isinstance(value, cls):
                    raise TypeError(f"Parameter to initialize message field must be dict or instance of same "
                                    f"class: expected <class 'tensorflow.core.protobuf.config_pb2.{cls.__name__}'> "
                                    f"got {type(value)}.")
                getattr(self, name).CopyFrom(value)
            elif kind == "map":
                getattr(self, name).update(value)
            elif kind == "repeated_string":
                getattr(self, name).extend(value)
            else:
                setattr(self, name, value)

    def _touch(self) -> None:
        parent = self._parent
        if parent is not None:
            owner, name = parent
            owner._values[name] = self
            owner._touch()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        field = self._FIELDS.get(name)
        if field is None:
            raise AttributeError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        values = self._values
        if name in values:
            return values[name]
        number, kind, extra = field
        if kind == "unmodelled":
            raise NotImplementedError(f"tf.compat.v1.{type(self).__name__}.{name} (a {extra} message) is not "
                                      "modelled in tapeflow")
        if kind == "message":
            child = _CLASSES[extra]()
            object.__setattr__(child, "_parent", (self, name))
            return child
        if kind in ("map", "repeated_string"):
            container = _Container(self, name, {} if kind == "map" else [])
            values[name] = container
            return container
        return {"int32": 0, "int64": 0, "enum": 0, "bool": False, "double": 0.0, "string": ""}[kind]

    def __setattr__(self, name: str, value: Any) -> None:
        field = self._FIELDS.get(name)
        if field is None:
            raise AttributeError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        kind = field[1]
        if kind in ("message", "unmodelled"):
            raise AttributeError(f'Assignment not allowed to message field "{name}" in protocol message object.')
        if kind in ("map", "repeated_string"):
            raise AttributeError(f'Assignment not allowed to map, or repeated field "{name}" in protocol message '
                                 "object.")
        if kind in ("int32", "int64"):
            value = _int_check(self, name, value, 32 if kind == "int32" else 64)
        elif kind == "enum":
            if isinstance(value, str):
                if value not in field[2]:
                    raise ValueError(f"Enum type {name} has no value named {value}.")
                value = field[2][value]
            value = _int_check(self, name, value, 32)
        elif kind == "bool":
            if not hasattr(value, "__index__"):
                raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
            value = bool(value)
        elif kind == "double":
            if isinstance(value, str) or not hasattr(value, "__float__"):
                raise TypeError(f"must be real number, not {type(value).__name__}")
            value = float(value)
        elif kind == "string":
            if isinstance(value, bytes):
                value = value.decode("utf-8")
            if not isinstance(value, str):
                raise TypeError("bad argument type for built-in operation")
        self._values[name] = value
        self._touch()

    # -- protobuf's message methods ---------------------------------------------------------------------------

    def _present(self) -> list:
        out = []
        for name, (number, kind, extra) in sorted(self._FIELDS.items(), key=lambda kv: kv[1][0]):
            if name not in self._values:
                continue
            v = self._values[name]
            if kind == "message" or (kind in ("map", "repeated_string") and len(v._items)) or (
                    kind not in ("message", "map", "repeated_string") and v != 0 and v != ""):
                out.append((name, number, kind, extra, v))
        return out

    def HasField(self, name: str) -> bool:  # noqa: N802 - protobuf's name
        if name not in self._FIELDS:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        if self._FIELDS[name][1] != "message":
            raise ValueError(f"Field tensorflow.{type(self).__name__}.{name} does not have presence.")
        return name in self._values

    def ClearField(self, name: str) -> None:  # noqa: N802
        if name not in self._FIELDS:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        self._values.pop(name, None)

    def Clear(self) -> None:  # noqa: N802
        self._values.clear()

    def CopyFrom(self, other: _Message) -> None:  # noqa: N802
        if type(other) is not type(self):
            raise TypeError(f"Parameter to CopyFrom() must be instance of same class: expected "
                            f"{type(self).__name__} got {type(other).__name__}.")
        self.Clear()
        self.MergeFrom(other)
        self._touch()

    def MergeFrom(self, other: _Message) -> None:  # noqa: N802
        for name, (_, kind, _) in self._FIELDS.items():
            if name not in other._values:
                continue
            v = other._values[name]
            if kind == "message":
                getattr(self, name).MergeFrom(v)
            elif kind == "map":
                getattr(self, name).update(v._items)
            elif kind == "repeated_string":
                getattr(self, name).extend(v._items)
            else:
                setattr(self, name, v)

    def ListFields(self) -> list:  # noqa: N802
        return [(name, v) for name, _, _, _, v in self._present()]

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self.SerializeToString() == other.SerializeToString()

    def __ne__(self, other: Any) -> bool:
        return not self == other

    __hash__ = None  # protobuf messages are unhashable

    def _text(self, indent: str) -> str:
        lines = []
        for name, _, kind, extra, v in self._present():
            if kind == "message":
                body = v._text(indent + "  ")
                lines.append(f"{indent}{name} {{\n{body}{indent}}}\n")
            elif kind == "map":
                for key, val in v._items.items():
                    lines.append(f'{indent}{name} {{\n{indent}  key: "{key}"\n{indent}  value: {val}\n{indent}}}\n')
            elif kind == "repeated_string":
                lines.extend(f"{indent}{name}: {_quote(s)}\n" for s in v._items)
            elif kind == "bool":
                lines.append(f"{indent}{name}: true\n")
            elif kind == "string":
                lines.append(f"{indent}{name}: {_quote(v)}\n")
            elif kind == "enum":
                names = {num: key for key, num in extra.items()}
                lines.append(f"{indent}{name}: {names.get(v, v)}\n")
            elif kind == "double":
                text = repr(v)
                lines.append(f"{indent}{name}: {text[:-2] if text.endswith('.0') else text}\n")
            else:
                lines.append(f"{indent}{name}: {v}\n")
        return "".join(lines)

    def __str__(self) -> str:
        return self._text("")

    __repr__ = __str__

    def SerializeToString(self, deterministic: bool = False) -> bytes:  # noqa: N802
        out = bytearray()
        for _, number, kind, _, v in self._present():
            if kind == "message":
                body = v.SerializeToString()
                out += _varint(number << 3 | 2) + _varint(len(body)) + body
            elif kind == "map":
                for key, val in (sorted(v._items.items()) if deterministic else v._items.items()):
                    k = key.encode()
                    entry = b"\x0a" + _varint(len(k)) + k + b"\x10" + _varint(val & _MASK64)
                    out += _varint(number << 3 | 2) + _varint(len(entry)) + entry
            elif kind == "repeated_string":
                for s in v._items:
                    b = s.encode()
                    out += _varint(number << 3 | 2) + _varint(len(b)) + b
            elif kind == "string":
                b = v.encode()
                out += _varint(number << 3 | 2) + _varint(len(b)) + b
            elif kind == "double":
                out += _varint(number << 3 | 1) + struct.pack("<d", v)
            else:
                out += _varint(number << 3) + _varint(int(v) & _MASK64)
        return bytes(out)

    def ByteSize(self) -> int:  # noqa: N802
        return len(self.SerializeToString())

    @classmethod
    def FromString(cls, data: bytes) -> _Message:  # noqa: N802
        msg = cls()
        msg.MergeFromString(data)
        return msg

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802
        self.Clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data: bytes) -> int:  # noqa: N802
        by_number = {f[0]: (name, f[1], f[2]) for name, f in self._FIELDS.items()}
        pos, data = 0, bytes(data)
        while pos < len(data):
            tag, pos = _read_varint(data, pos)
            number, wire = tag >> 3, tag & 7
            if wire == 0:
                raw, pos = _read_varint(data, pos)
                payload: Any = raw
            elif wire == 1:
                payload, pos = struct.unpack_from("<d", data, pos)[0], pos + 8
            elif wire == 2:
                n, pos = _read_varint(data, pos)
                payload, pos = data[pos:pos + n], pos + n
            elif wire == 5:
                payload, pos = data[pos:pos + 4], pos + 4
            else:
                raise ValueError(f"Error parsing message with type 'tensorflow.{type(self).__name__}'")
            if number not in by_number:
                continue  # unknown fields are skipped here (protobuf keeps them)
            name, kind, extra = by_number[number]
            if kind == "message":
                getattr(self, name).MergeFromString(payload)
            elif kind == "map":
                entry = _MapEntry.FromString(payload)
                getattr(self, name)[entry.key] = entry.value
            elif kind == "repeated_string":
                getattr(self, name).append(payload.decode())
            elif kind == "string":
                setattr(self, name, payload.decode())
            elif kind == "unmodelled":
                raise NotImplementedError(f"tf.compat.v1.{type(self).__name__}.{name} (a {extra} message) is not "
                                          "modelled in tapeflow")
            elif kind == "double":
                setattr(self, name, payload)
            elif kind == "bool":
                setattr(self, name, bool(payload))
            else:
                bits = 32 if kind in ("int32", "enum") else 64
                v = payload & ((1 << bits) - 1) if bits == 32 else payload
                setattr(self, name, v - (1 << bits) if v >= 1 << (bits - 1) else v)
        return len(data)


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple:
    shift, value = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


class _Container:
    """A map or repeated field: changes mark the message (and its parents) present."""

    def __init__(self, owner: _Message, name: str, items: Any) -> None:
        self._owner, self._name, self._items = owner, name, items

    def _changed(self) -> None:
        self._owner._values[self._name] = self
        self._owner._touch()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(self._items, dict):
            if key not in self._items:  # as protobuf: reading a missing key adds it
                self[key] = 0
            return self._items[key]
        return self._items[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(self._items, dict):
            self._items[str(key)] = _int_check(self._owner, self._name, value, 32)
        else:
            self._items[key] = str(value)
        self._changed()

    def __delitem__(self, key: Any) -> None:
        del self._items[key]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __contains__(self, key: Any) -> bool:
        return key in self._items

    def __eq__(self, other: Any) -> bool:
        return self._items == (other._items if isinstance(other, _Container) else other)

    def keys(self):
        return self._items.keys()

    def items(self):
        return self._items.items()

    def values(self):
        return self._items.values()

    def get(self, key: Any, default: Any = None) -> Any:
        return self._items.get(key, default)

    def update(self, other: Any) -> None:
        for k, v in dict(other).items():
            self[k] = v

    def append(self, value: str) -> None:
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if not isinstance(value, str):
            raise TypeError("bad argument type for built-in operation")
        self._items.append(value)
        self._changed()

    def extend(self, values: Any) -> None:
        for v in values:
            self.append(v)

    def __repr__(self) -> str:
        return repr(self._items)


class _MapEntry(_Message):
    _FIELDS = {"key": (1, "string", None), "value": (2, "int32", None)}


class GPUOptions(_Message):
    """``tf.compat.v1.GPUOptions``: e.g. ``allow_growth``, ``per_process_gpu_memory_fraction``,
    ``visible_device_list`` (tapeflow runs on the CPU: kept, not acted on)."""

    _FIELDS = {
        "per_process_gpu_memory_fraction": (1, "double", None), "allocator_type": (2, "string", None),
        "deferred_deletion_bytes": (3, "int64", None), "allow_growth": (4, "bool", None),
        "visible_device_list": (5, "string", None), "polling_active_delay_usecs": (6, "int32", None),
        "polling_inactive_delay_msecs": (7, "int32", None), "force_gpu_compatible": (8, "bool", None),
        "experimental": (9, "unmodelled", "GPUOptions.Experimental"),
    }


class OptimizerOptions(_Message):
    """``tf.compat.v1.OptimizerOptions`` (``global_jit_level = OptimizerOptions.ON_1`` ...: kept, not acted on)."""

    L1, L0 = 0, -1
    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2
    _FIELDS = {
        "do_common_subexpression_elimination": (1, "bool", None), "do_constant_folding": (2, "bool", None),
        "opt_level": (3, "enum", {"L1": 0, "L0": -1}), "do_function_inlining": (4, "bool", None),
        "global_jit_level": (5, "enum", {"DEFAULT": 0, "OFF": -1, "ON_1": 1, "ON_2": 2}),
        "max_folded_constant_in_bytes": (6, "int64", None), "cpu_global_jit": (7, "bool", None),
    }


class GraphOptions(_Message):
    """``tf.compat.v1.GraphOptions``."""

    _FIELDS = {
        "enable_recv_scheduling": (2, "bool", None), "optimizer_options": (3, "message", "OptimizerOptions"),
        "build_cost_model": (4, "int64", None), "infer_shapes": (5, "bool", None),
        "place_pruned_graph": (6, "bool", None), "enable_bfloat16_sendrecv": (7, "bool", None),
        "timeline_step": (8, "int32", None), "build_cost_model_after": (9, "int64", None),
        "rewrite_options": (10, "unmodelled", "RewriterConfig"),
    }


class ConfigProto(_Message):
    """``tf.compat.v1.ConfigProto``: a session's configuration (``gpu_options``, ``allow_soft_placement``,
    ``log_device_placement``, ``intra_op_parallelism_threads`` ...). tapeflow keeps it; a session does not act
    on it (``tf.config.threading`` sets tapeflow's threads).

    >>> config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
    >>> config.gpu_options.allow_growth = True
    >>> print(config)
    gpu_options {
      allow_growth: true
    }
    allow_soft_placement: true
    <BLANKLINE>
    """

    _FIELDS = {
        "device_count": (1, "map", None), "intra_op_parallelism_threads": (2, "int32", None),
        "placement_period": (3, "int32", None), "device_filters": (4, "repeated_string", None),
        "inter_op_parallelism_threads": (5, "int32", None), "gpu_options": (6, "message", "GPUOptions"),
        "allow_soft_placement": (7, "bool", None), "log_device_placement": (8, "bool", None),
        "use_per_session_threads": (9, "bool", None), "graph_options": (10, "message", "GraphOptions"),
        "operation_timeout_in_ms": (11, "int64", None),
        "session_inter_op_thread_pool": (12, "unmodelled", "ThreadPoolOptionProto"),
        "rpc_options": (13, "unmodelled", "RPCOptions"), "cluster_def": (14, "unmodelled", "ClusterDef"),
        "isolate_session_state": (15, "bool", None), "experimental": (16, "unmodelled", "ConfigProto.Experimental"),
        "share_cluster_devices_in_session": (17, "bool", None),
        "pluggable_device_options": (18, "message", "GPUOptions"),
    }


class RunOptions(_Message):
    """``tf.compat.v1.RunOptions`` (``trace_level = RunOptions.FULL_TRACE`` ...)."""

    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    _FIELDS = {
        "trace_level": (1, "enum", {"NO_TRACE": 0, "SOFTWARE_TRACE": 1, "HARDWARE_TRACE": 2, "FULL_TRACE": 3}),
        "timeout_in_ms": (2, "int64", None), "inter_op_thread_pool": (3, "int32", None),
        "output_partition_graphs": (5, "bool", None), "debug_options": (6, "unmodelled", "DebugOptions"),
        "report_tensor_allocations_upon_oom": (7, "bool", None),
        "experimental": (8, "unmodelled", "RunOptions.Experimental"),
    }


_CLASSES = {"GPUOptions": GPUOptions, "OptimizerOptions": OptimizerOptions, "GraphOptions": GraphOptions}
