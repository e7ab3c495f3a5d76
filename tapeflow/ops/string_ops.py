"""String ops (``tf.strings``): kernels on NumPy object arrays of ``bytes``.

String tensors hold ``bytes`` in object arrays, as TF's ``.numpy()`` shows
them. Every op here is ``NotDifferentiable`` (strings carry no gradient); each
has a shape rule so it works inside ``tf.function``. Ops with ragged results
(``split``, ``unicode_decode``, ``bytes_split``) return flat values plus
``row_splits`` of the flattened input, which the public function turns into a
``tf.RaggedTensor`` as TF does.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

_OBJ = np.dtype(object)
_UNITS = ("BYTE", "UTF8_CHAR")


def _b(x: Any) -> bytes:
    return x.encode("utf-8") if isinstance(x, str) else bytes(x)


def _map(fn, a: np.ndarray, dtype: Any = _OBJ) -> np.ndarray:
    a = np.asarray(a)
    out = np.empty(a.shape, dtype=dtype)
    flat = out.reshape(-1)
    for i, x in enumerate(a.reshape(-1)):
        flat[i] = fn(_b(x))
    return out


def _strings(x: Any, op: str) -> Tensor:
    t = x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=dtypes.string)
    if t.dtype != dtypes.string:
        raise TypeError(f"{op}: expected a string tensor, got {t.dtype.name} (convert with tf.strings.as_string).")
    return t


def _check_unit(unit: str, op: str) -> None:
    if unit not in _UNITS:
        raise InvalidArgumentError(
            None, None, f"Value for attr 'unit' of \"{unit}\" is not in the list of allowed values: "
            f"\"BYTE\", \"UTF8_CHAR\" [Op:{op}]")


def _same_as(dtype: Any):
    def rule(specs, **attrs):
        return [(specs[0][0], np.dtype(dtype))]
    return rule


def _unary(name: str, fn, dtype: Any = _OBJ):
    op = defop(name, lambda a, **attrs: _map(lambda s: fn(s, **attrs), a, dtype), shape=_same_as(dtype))
    NotDifferentiable(name)
    return op


def _ragged_aware(fn):
    """TF's ragged dispatch for elementwise string ops: applied to ``flat_values``, same row partitions."""
    import functools

    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):  # noqa: A002 - TF's argument name
        from tapeflow.ops.ragged import RaggedTensor

        if isinstance(input, RaggedTensor):
            return input.with_flat_values(wrapper(input.flat_values, *args, **kwargs))
        return fn(input, *args, **kwargs)

    return wrapper


# -- elementwise ---------------------------------------------------------------

def _utf8_len(s: bytes) -> int:
    return sum(1 for c in s if (c & 0xC0) != 0x80)


STRING_LENGTH = _unary("StringLength", lambda s, unit: len(s) if unit == "BYTE" else _utf8_len(s), np.int32)
STRING_UPPER = _unary("StringUpper", lambda s, encoding: s.upper())
STRING_LOWER = _unary("StringLower", lambda s, encoding: s.lower())
STRING_STRIP = _unary("StringStrip", lambda s: s.strip())
def _u(s: bytes) -> str:
    # RE2 matches UTF-8 text by code points (a class [¿] is one character, not two bytes); bytes that are no
    # UTF-8 pass through unchanged
    return s.decode("utf-8", "surrogateescape")


REGEX_REPLACE = _unary("RegexReplace", lambda s, pattern, rewrite, replace_global: pattern.sub(
    _rewriter(rewrite), _u(s), count=0 if replace_global else 1).encode("utf-8", "surrogateescape"))


class _Rewrite:
    """RE2's rewrite string: ``\\0``..``\\9`` are the match and its groups (an unmatched group is empty), ``\\\\``
    a backslash; any other escape ends the rewrite there (RE2 logs "invalid rewrite pattern"). Not Python's
    template syntax (where ``\\0`` is a NUL byte)."""

    def __init__(self, rewrite: bytes) -> None:
        text = _u(rewrite)
        self.parts: list = []
        i = 0
        while i < len(text):
            c = text[i]
            if c != "\\":
                self.parts.append(c)
                i += 1
                continue
            nxt = text[i + 1:i + 2]
            if nxt.isdigit() and nxt.isascii():
                self.parts.append(int(nxt))
            elif nxt == "\\":
                self.parts.append("\\")
            else:
                break
            i += 2

    def __call__(self, m: re.Match) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) if p <= m.re.groups else "") or ""
                       for p in self.parts)


_rewriter = functools.lru_cache(maxsize=256)(_Rewrite)  # each rewrite string parsed once
REGEX_FULL_MATCH = _unary("RegexFullMatch", lambda s, pattern: pattern.fullmatch(_u(s)) is not None, np.bool_)


@_ragged_aware
def length(input: Any, name: Any = None, unit: str = "BYTE") -> Tensor:
    """``tf.strings.length``: bytes (``unit="BYTE"``) or UTF-8 characters per string, as int32."""
    _check_unit(unit, "StringLength")
    return execute(STRING_LENGTH, (_strings(input, "StringLength"),), {"unit": unit})


@_ragged_aware
def upper(input: Any, encoding: str = "", name: Any = None) -> Tensor:
    """``tf.strings.upper``: ASCII upper case (other bytes unchanged, as TF)."""
    return execute(STRING_UPPER, (_strings(input, "StringUpper"),), {"encoding": encoding})


@_ragged_aware
def lower(input: Any, encoding: str = "", name: Any = None) -> Tensor:
    """``tf.strings.lower``: ASCII lower case."""
    return execute(STRING_LOWER, (_strings(input, "StringLower"),), {"encoding": encoding})


@_ragged_aware
def strip(input: Any, name: Any = None) -> Tensor:
    """``tf.strings.strip``: removes leading and trailing whitespace."""
    return execute(STRING_STRIP, (_strings(input, "StringStrip"),))


def _pattern(p: Any, op: str) -> re.Pattern:
    if isinstance(p, Tensor):
        if p.shape.rank not in (0, None) or not hasattr(p, "numpy"):
            raise InvalidArgumentError(None, None, f"{op}: pattern must be a scalar string [Op:{op}]")
        p = p.numpy()
    try:
        return re.compile(_u(_b(p)), re.DOTALL)
    except re.error as e:
        raise InvalidArgumentError(None, None, f"Invalid pattern: {_b(p).decode(errors='replace')}, error: {e} "
                                   f"[Op:{op}]") from None


@_ragged_aware
def regex_replace(input: Any, pattern: Any, rewrite: Any, replace_global: bool = True, name: Any = None) -> Tensor:
    """``tf.strings.regex_replace``: replaces matches of ``pattern`` (``\\1`` backreferences in ``rewrite``)."""
    rw = rewrite.numpy() if isinstance(rewrite, Tensor) else rewrite
    return execute(REGEX_REPLACE, (_strings(input, "RegexReplace"),),
                   {"pattern": _pattern(pattern, "RegexReplace"), "rewrite": _b(rw),
                    "replace_global": bool(replace_global)})


@_ragged_aware
def regex_full_match(input: Any, pattern: Any, name: Any = None) -> Tensor:
    """``tf.strings.regex_full_match``: whether each whole string matches ``pattern`` (bool)."""
    return execute(REGEX_FULL_MATCH, (_strings(input, "RegexFullMatch"),),
                   {"pattern": _pattern(pattern, "RegexFullMatch")})


# -- to_number / as_string -------------------------------------------------------

def _to_number(s: bytes, np_type: Any) -> Any:
    txt = s.decode("utf-8", errors="replace").strip()
    try:
        if np.issubdtype(np_type, np.integer):
            if not re.fullmatch(r"[+-]?\d+", txt):
                raise ValueError
            v = int(txt)
            info = np.iinfo(np_type)
            if not info.min <= v <= info.max:
                raise ValueError
            return v
        low = txt.lower()
        if low in ("inf", "+inf", "infinity", "+infinity", "-inf", "-infinity", "nan", "+nan", "-nan"):
            return float(low.replace("infinity", "inf"))
        if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", txt):
            raise ValueError
        return float(txt)
    except ValueError:
        raise InvalidArgumentError(
            None, None, f"StringToNumberOp could not correctly convert string: {txt} [Op:StringToNumber]") from None


STRING_TO_NUMBER = defop(
    "StringToNumber", lambda a, out_type: _map(lambda s: _to_number(s, out_type), a, _OBJ).astype(out_type),
    shape=lambda specs, out_type: [(specs[0][0], np.dtype(out_type))])
NotDifferentiable("StringToNumber")


@_ragged_aware
def to_number(input: Any, out_type: Any = dtypes.float32, name: Any = None) -> Tensor:
    """``tf.strings.to_number``: parses numbers; a bad string raises ``InvalidArgumentError``."""
    dt = dtypes.as_dtype(out_type)
    if dt not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'out_type' has DataType {dt.name} not in list of allowed "
                        "values: float32, float64, int32, int64")
    return execute(STRING_TO_NUMBER, (_strings(input, "StringToNumber"),), {"out_type": dt._np})


def _as_string_kernel(a, precision, scientific, shortest, width, fill):
    a = np.asarray(a)
    kind = a.dtype.kind
    if kind == "b":
        fmt = None
    elif kind in "iu":
        fmt = "%" + (fill if fill else "") + (str(width) if width > -1 else "") + "d"
    else:
        conv = "e" if scientific else "g" if shortest else "f"
        prec = f".{precision}" if precision > -1 else ""
        fmt = "%" + (fill if fill else "") + (str(width) if width > -1 else "") + prec + conv
    out = np.empty(a.shape, dtype=_OBJ)
    flat, src = out.reshape(-1), a.reshape(-1)
    for i, x in enumerate(src):
        if kind == "b":
            flat[i] = b"true" if x else b"false"
        elif kind == "c":
            flat[i] = ("(" + fmt % x.real + "," + fmt % x.imag + ")").encode()
        else:
            flat[i] = (fmt % x).encode()
    return out


AS_STRING = defop("AsString", _as_string_kernel, shape=_same_as(_OBJ))
NotDifferentiable("AsString")


@_ragged_aware
def as_string(input: Any, precision: int = -1, scientific: bool = False, shortest: bool = False, width: int = -1,
              fill: str = "", name: Any = None) -> Tensor:
    """``tf.strings.as_string``: formats numbers and bools as strings (printf-style, as TF)."""
    t = convert_to_tensor(input)
    if t.dtype == dtypes.string:
        raise TypeError("Value passed to parameter 'input' has DataType string not in list of allowed values "
                        "(tf.strings.as_string takes numbers or bools)")
    if len(fill) > 1:
        raise InvalidArgumentError(None, None, "Fill string must be one or fewer characters [Op:AsString]")
    if scientific and shortest:
        raise InvalidArgumentError(None, None, "Cannot select both scientific and shortest notation [Op:AsString]")
    if fill and fill != "0" and fill != " " and fill != "-" and fill != "+":
        raise InvalidArgumentError(None, None, f"Fill argument not supported: \"{fill}\" [Op:AsString]")
    return execute(AS_STRING, (t,), {"precision": int(precision), "scientific": bool(scientific),
                                     "shortest": bool(shortest), "width": int(width), "fill": fill})


# -- join / reduce_join / substr ------------------------------------------------------

def _join_kernel(*arrays, separator):
    arrays = [np.asarray(a) for a in arrays]
    shapes = {a.shape for a in arrays if a.ndim}
    if len(shapes) > 1:
        s = sorted(shapes, key=len)
        raise InvalidArgumentError(None, None, f"Input shapes do not match: [{','.join(map(str, s[0]))}] vs. "
                                   f"[{','.join(map(str, s[1]))}] [Op:StringJoin]")
    shape = shapes.pop() if shapes else ()
    bc = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    out = np.empty(shape, dtype=_OBJ)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = separator.join(_b(a[i]) for a in bc)
    return out


def _join_shape(specs, separator):
    shape = ()
    for s, _ in specs:
        if s is None:
            return [(None, _OBJ)]
        if len(s):
            shape = s
    return [(shape, _OBJ)]


STRING_JOIN = defop("StringJoin", _join_kernel, shape=_join_shape)
NotDifferentiable("StringJoin")


def join(inputs: Any, separator: str = "", name: Any = None) -> Tensor:
    """``tf.strings.join``: joins strings elementwise (scalars broadcast; other shapes must match)."""
    from tapeflow.ops.ragged import RaggedTensor

    rag = next((x for x in inputs if isinstance(x, RaggedTensor)), None)
    if rag is not None:  # ragged operands share one row partition; dense ones must be scalars
        flat = [x.flat_values if isinstance(x, RaggedTensor) else x for x in inputs]
        return rag.with_flat_values(join(flat, separator))
    ts = [_strings(x, "StringJoin") for x in inputs]
    return execute(STRING_JOIN, tuple(ts), {"separator": _b(separator)})


def _reduce_join_kernel(a, axes, keepdims, separator):
    a = np.asarray(a)
    # TF joins with the first listed axis varying fastest (axis=None: row-major order).
    axes = [ax % a.ndim for ax in axes] if axes is not None else list(range(a.ndim - 1, -1, -1))
    keep = [d for d in range(a.ndim) if d not in axes]
    moved = np.transpose(a, keep + axes[::-1])
    kept_shape = tuple(a.shape[d] for d in keep)
    rows = moved.reshape(int(np.prod(kept_shape, dtype=np.int64)), -1) if a.size else np.empty(
        (int(np.prod(kept_shape, dtype=np.int64)), 0), dtype=_OBJ)
    out = np.empty(len(rows), dtype=_OBJ)
    for i, r in enumerate(rows):
        out[i] = separator.join(_b(x) for x in r)
    out = out.reshape(kept_shape)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
    return out


def _reduce_join_shape(specs, axes, keepdims, separator):
    s = specs[0][0]
    if s is None:
        return [(None, _OBJ)]
    n = len(s)
    ax = {x % n for x in axes} if axes is not None else set(range(n))
    if keepdims:
        return [(tuple(1 if d in ax else s[d] for d in range(n)), _OBJ)]
    return [(tuple(s[d] for d in range(n) if d not in ax), _OBJ)]


REDUCE_JOIN = defop("ReduceJoin", _reduce_join_kernel, shape=_reduce_join_shape)
NotDifferentiable("ReduceJoin")


def reduce_join(inputs: Any, axis: Any = None, keepdims: bool = False, separator: str = "", name: Any = None) -> Tensor:
    """``tf.strings.reduce_join``: joins strings across ``axis`` (all axes when ``None``)."""
    from tapeflow.ops.ragged import RaggedTensor

    if isinstance(inputs, RaggedTensor):
        from tapeflow.ops.ragged import ragged_ops

        return ragged_ops.reduce_join(inputs, axis, keepdims, separator)
    t = _strings(inputs, "ReduceJoin")
    axes = None
    if axis is not None:
        axes = [int(a) for a in np.ravel(axis.numpy() if isinstance(axis, Tensor) else axis)]
        rank = t.shape.rank
        if rank is not None:
            for a in axes:
                if not -rank <= a < max(rank, 1):
                    raise InvalidArgumentError(None, None, f"Invalid reduction dimension {a} for input with {rank} "
                                               "dimensions. [Op:ReduceJoin]")
    return execute(REDUCE_JOIN, (t,), {"axes": axes, "keepdims": bool(keepdims), "separator": _b(separator)})


def _utf8_offsets(s: bytes) -> list[int]:
    return [i for i, c in enumerate(s) if (c & 0xC0) != 0x80] + [len(s)]


def _substr_kernel(a, pos, ln, unit):
    a = np.asarray(a)
    shape = np.broadcast_shapes(a.shape, np.shape(pos), np.shape(ln))
    A = np.broadcast_to(a, shape).reshape(-1)
    P = np.broadcast_to(pos, shape).reshape(-1)
    L = np.broadcast_to(ln, shape).reshape(-1)
    out = np.empty(shape, dtype=_OBJ)
    flat = out.reshape(-1)
    for i in range(flat.size):
        s, p, n = _b(A[i]), int(P[i]), int(L[i])
        offs = _utf8_offsets(s) if unit == "UTF8_CHAR" else None
        size = len(offs) - 1 if offs is not None else len(s)
        q = p + size if p < 0 else p
        if not 0 <= q <= size:
            raise InvalidArgumentError(None, None, f"pos {p} out of range for string b'{s.decode('latin-1')}' at "
                                       f"index {i} [Op:Substr]")
        end = min(q + max(n, 0), size)
        flat[i] = s[offs[q]:offs[end]] if offs is not None else s[q:end]
    return out


SUBSTR = defop("Substr", _substr_kernel, shape=lambda specs, unit: [(specs[0][0], _OBJ)])
NotDifferentiable("Substr")


@_ragged_aware
def substr(input: Any, pos: Any, len: Any, unit: str = "BYTE", name: Any = None) -> Tensor:  # noqa: A002
    """``tf.strings.substr``: ``len`` bytes (or UTF-8 characters) from ``pos`` (negative counts from the end)."""
    _check_unit(unit, "Substr")
    t = _strings(input, "Substr")
    return execute(SUBSTR, (t, convert_to_tensor(pos), convert_to_tensor(len)), {"unit": unit})


# -- ragged results: split, bytes_split, unicode_decode / encode --------------------

def _rows_kernel(fn, a, out_dtype):
    a = np.asarray(a).reshape(-1)
    pieces, splits = [], [0]
    for x in a:
        p = fn(_b(x))
        pieces.extend(p)
        splits.append(len(pieces))
    vals = np.empty(len(pieces), dtype=out_dtype)
    vals[:] = pieces if out_dtype is _OBJ else np.asarray(pieces, dtype=out_dtype)
    return vals, np.asarray(splits, dtype=np.int64)


def _rows_shape(out_dtype):
    def rule(specs, **attrs):
        s = specs[0][0]
        n = None if s is None or any(d is None for d in s) else int(np.prod(s, dtype=np.int64))
        return [((None,), np.dtype(out_dtype)), ((None if n is None else n + 1,), np.dtype(np.int64))]
    return rule


def _split_one(s: bytes, sep: bytes | None, maxsplit: int) -> list[bytes]:
    if sep is None:
        if maxsplit < 0:
            return s.split()
        # TF's whitespace split: after ``maxsplit`` tokens the rest (whitespace-stripped on the left) is one more
        # token, even when it is empty ("abc" with maxsplit=1 gives [b"abc", b""]).
        tokens, rest = [], s.lstrip()
        while rest and len(tokens) < maxsplit:
            parts = rest.split(None, 1)
            tokens.append(parts[0])
            rest = parts[1].lstrip() if len(parts) > 1 else b""
        if len(tokens) == maxsplit and maxsplit > 0:
            tokens.append(rest)
        return tokens
    return s.split(sep, maxsplit)


STRING_SPLIT = defop("StringSplitV2", lambda a, sep, maxsplit: _rows_kernel(
    lambda s: _split_one(s, sep, maxsplit), a, _OBJ), shape=_rows_shape(_OBJ), num_outputs=2)
NotDifferentiable("StringSplitV2")
BYTES_SPLIT = defop("StringBytesSplit", lambda a: _rows_kernel(lambda s: [s[i:i + 1] for i in range(len(s))], a, _OBJ),
                    shape=_rows_shape(_OBJ), num_outputs=2)
NotDifferentiable("StringBytesSplit")


_ERRORS = ("strict", "replace", "ignore")
_OUTPUT_ENCODINGS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}


def _check_errors(errors: str, op: str) -> None:
    if errors not in _ERRORS:
        raise InvalidArgumentError(None, None, f"Value for attr 'errors' of \"{errors}\" is not in the list of allowed "
                                   f"values: \"strict\", \"replace\", \"ignore\" [Op:{op}]")


def _output_codec(enc: str, op: str) -> str:
    """TF's output encodings are exactly these three names (no aliases)."""
    if enc not in _OUTPUT_ENCODINGS:
        raise InvalidArgumentError(None, None, f"Value for attr 'output_encoding' of \"{enc}\" is not in the list of "
                                   f"allowed values: \"UTF-8\", \"UTF-16-BE\", \"UTF-32-BE\" [Op:{op}]")
    return _OUTPUT_ENCODINGS[enc]


def _input_codec(enc: str, op: str) -> str:
    """An input encoding as ICU names it, as Python's codec (ICU's converters take any name it knows)."""
    import codecs

    key = str(enc).upper().replace("_", "-")
    if key.replace("-", "") in ("UTF16", "UTF32"):
        return key.replace("-", "")  # BOM-dependent: see _decode
    try:
        return codecs.lookup(str(enc)).name
    except LookupError:
        raise InvalidArgumentError(None, None, f"Could not create converter for input encoding: {enc} [Op:{op}]") \
            from None


def _decode(s: bytes, codec: str, errors: str, replacement: int, replace_control: bool, op: str):
    """Code points of ``s`` and the byte offset where each starts. Malformed input: one ``replacement`` per
    maximal ill-formed subsequence (ICU's and Python's rule), dropped with ``ignore``, an error with ``strict``."""
    if codec in ("UTF16", "UTF32"):  # ICU's UTF-16/UTF-32: a BOM picks the byte order (and is dropped), else BE
        bom = {"UTF16": (b"\xff\xfe", b"\xfe\xff"), "UTF32": (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")}[codec]
        order = "le" if s.startswith(bom[0]) else "be"
        skip = len(bom[0]) if s.startswith(bom) else 0
        cps, offs = _decode(s[skip:], f"utf-{codec[3:]}-{order}", errors, replacement, replace_control, op)
        return cps, [o + skip for o in offs]
    cps: list[int] = []
    offs: list[int] = []
    pos = 0
    while pos <= len(s):
        try:
            good, bad = s[pos:].decode(codec), None
        except UnicodeDecodeError as e:
            good, bad = s[pos:pos + e.start].decode(codec), (pos + e.start, pos + e.end)
        at = pos
        for ch in good:
            cps.append(ord(ch))
            offs.append(at)
            at += len(ch.encode(codec))
        if bad is None:
            break
        if errors == "strict":
            raise InvalidArgumentError(None, None, f"Invalid formatting on input string [Op:{op}]")
        if errors == "replace":
            cps.append(replacement)
            offs.append(bad[0])
        pos = bad[1]
    if replace_control:
        cps = [replacement if c < 0x20 else c for c in cps]
    return cps, offs


def _decode_kernel(a, codec, errors, replacement, replace_control, split, offsets):
    """Flat code points (or characters, encoded as the input was) of every string, [offsets,] row splits."""
    a = np.asarray(a).reshape(-1)
    values: list = []
    starts: list[int] = []
    splits = [0]
    for x in a:
        cps, offs = _decode(_b(x), codec, errors, replacement, replace_control, "UnicodeDecode")
        if split:
            enc = {"UTF16": "utf-16-be", "UTF32": "utf-32-be"}.get(codec, codec)
            values.extend(_encode_cp(c, enc) for c in cps)
        else:
            values.extend(cps)
        starts.extend(offs)
        splits.append(len(values))
    if split:
        vals = np.empty(len(values), dtype=_OBJ)
        vals[:] = values
    else:
        vals = np.asarray(values, dtype=np.int32)
    out = (vals, np.asarray(starts, dtype=np.int64)) if offsets else (vals,)
    return (*out, np.asarray(splits, dtype=np.int64))


def _decode_shape(specs, codec, errors, replacement, replace_control, split, offsets):
    rows = _rows_shape(_OBJ if split else np.int32)(specs)
    return [rows[0], ((None,), np.dtype(np.int64)), rows[1]] if offsets else rows


UNICODE_DECODE = defop("UnicodeDecode", lambda a, **attrs: _decode_kernel(a, offsets=False, **attrs),
                       shape=lambda specs, **attrs: _decode_shape(specs, offsets=False, **attrs), num_outputs=2)
NotDifferentiable("UnicodeDecode")
UNICODE_DECODE_WITH_OFFSETS = defop(
    "UnicodeDecodeWithOffsets", lambda a, **attrs: _decode_kernel(a, offsets=True, **attrs),
    shape=lambda specs, **attrs: _decode_shape(specs, offsets=True, **attrs), num_outputs=3)
NotDifferentiable("UnicodeDecodeWithOffsets")


def _encode_cp(cp: int, codec: str) -> bytes:
    return chr(cp).encode(codec)


def _ragged_from_rows(values, splits, shape):
    """Builds TF's ragged result for an input of ``shape`` from flat rows."""
    from tapeflow.ops.ragged import RaggedTensor

    rt = RaggedTensor.from_row_splits(values, splits, validate=False)
    for d in reversed(shape[1:]):
        rt = RaggedTensor.from_uniform_row_length(rt, d, validate=False)
    return rt


def _ragged_result(op, t, attrs):
    *values, splits = execute(op, (t,), attrs)
    shape = tuple(t.shape.as_list()) if t.shape.rank is not None else None
    if shape is None:
        raise ValueError(f"{op.name}: the input's rank must be known (got a tensor of unknown rank).")
    if len(shape) != 0:
        values = [_ragged_from_rows(v, splits, shape) for v in values]
    return values[0] if len(values) == 1 else tuple(values)


def split(input: Any, sep: Any = None, maxsplit: int = -1, name: Any = None) -> Any:
    """``tf.strings.split``: splits on ``sep`` (whitespace runs when ``None``).

    A scalar gives a 1-D tensor; a rank-N input gives a ``tf.RaggedTensor`` of rank N+1.
    """
    from tapeflow.ops.ragged import RaggedTensor

    if isinstance(input, RaggedTensor):
        return input.with_flat_values(split(input.flat_values, sep, maxsplit))
    s = sep.numpy() if isinstance(sep, Tensor) else sep
    s = None if s is None or _b(s) == b"" else _b(s)
    return _ragged_result(STRING_SPLIT, _strings(input, "StringSplitV2"), {"sep": s, "maxsplit": int(maxsplit)})


@_ragged_aware
def bytes_split(input: Any, name: Any = None) -> Any:
    """``tf.strings.bytes_split``: each string as its bytes (ragged for rank ≥ 1)."""
    return _ragged_result(BYTES_SPLIT, _strings(input, "StringBytesSplit"), {})


def _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters, split, op):
    _check_errors(errors, op)
    return {"codec": _input_codec(input_encoding, op), "errors": errors, "replacement": int(replacement_char),
            "replace_control": bool(replace_control_characters), "split": split}


def _ragged_pair(fn):
    """Ragged dispatch for the ``*_with_offsets`` ops: both results keep the input's row partitions."""
    import functools

    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):  # noqa: A002 - TF's argument name
        from tapeflow.ops.ragged import RaggedTensor

        if isinstance(input, RaggedTensor):
            a, b = wrapper(input.flat_values, *args, **kwargs)
            return input.with_flat_values(a), input.with_flat_values(b)
        return fn(input, *args, **kwargs)

    return wrapper


@_ragged_aware
def unicode_decode(input: Any, input_encoding: str, errors: str = "replace", replacement_char: int = 65533,
                   replace_control_characters: bool = False, name: Any = None) -> Any:
    """``tf.strings.unicode_decode``: code points (int32) of each string; ragged for rank ≥ 1.

    ``input_encoding`` is any encoding ICU (here: Python's codecs) knows; malformed input is replaced by
    ``replacement_char``, dropped (``errors="ignore"``) or an ``InvalidArgumentError`` (``"strict"``).
    """
    attrs = _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters, False,
                          "UnicodeDecode")
    return _ragged_result(UNICODE_DECODE, _strings(input, "UnicodeDecode"), attrs)


@_ragged_pair
def unicode_decode_with_offsets(input: Any, input_encoding: str, errors: str = "replace",
                                replacement_char: int = 65533, replace_control_characters: bool = False,
                                name: Any = None) -> tuple:
    """``tf.strings.unicode_decode_with_offsets``: ``(codepoints, offsets)``, each character's start byte (int64)."""
    attrs = _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters, False,
                          "UnicodeDecodeWithOffsets")
    return _ragged_result(UNICODE_DECODE_WITH_OFFSETS, _strings(input, "UnicodeDecodeWithOffsets"), attrs)


@_ragged_aware
def unicode_split(input: Any, input_encoding: str, errors: str = "replace", replacement_char: int = 65533,
                  name: Any = None) -> Any:
    """``tf.strings.unicode_split``: each string as its characters (in the input's encoding); ragged for rank ≥ 1."""
    attrs = _decode_attrs(input_encoding, errors, replacement_char, False, True, "UnicodeDecode")
    return _ragged_result(UNICODE_DECODE, _strings(input, "UnicodeDecode"), attrs)


@_ragged_pair
def unicode_split_with_offsets(input: Any, input_encoding: str, errors: str = "replace",
                               replacement_char: int = 65533, name: Any = None) -> tuple:
    """``tf.strings.unicode_split_with_offsets``: ``(chars, offsets)``, each character's start byte (int64)."""
    attrs = _decode_attrs(input_encoding, errors, replacement_char, False, True, "UnicodeDecodeWithOffsets")
    return _ragged_result(UNICODE_DECODE_WITH_OFFSETS, _strings(input, "UnicodeDecodeWithOffsets"), attrs)


def _transcode(s: bytes, codec, out_codec, errors, replacement, replace_control) -> bytes:
    cps, _ = _decode(s, codec, errors, replacement, replace_control, "UnicodeTranscode")
    return "".join(chr(c) if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF else chr(0xFFFD)
                   for c in cps).encode(out_codec)


UNICODE_TRANSCODE = _unary("UnicodeTranscode", _transcode)


@_ragged_aware
def unicode_transcode(input: Any, input_encoding: str, output_encoding: str, errors: str = "replace",
                      replacement_char: int = 65533, replace_control_characters: bool = False,
                      name: Any = None) -> Tensor:
    """``tf.strings.unicode_transcode``: re-encodes each string (same shape); output is UTF-8, UTF-16-BE or
    UTF-32-BE."""
    _check_errors(errors, "UnicodeTranscode")
    out_codec = _output_codec(output_encoding, "UnicodeTranscode")
    codec = _input_codec(input_encoding, "UnicodeTranscode")
    return execute(UNICODE_TRANSCODE, (_strings(input, "UnicodeTranscode"),),
                   {"codec": codec, "out_codec": out_codec, "errors": errors, "replacement": int(replacement_char),
                    "replace_control": bool(replace_control_characters)})


def _script_table():
    from tapeflow.ops._unicode_scripts import _RUNS

    return np.asarray(_RUNS[0::2], dtype=np.int64), np.asarray(_RUNS[1::2], dtype=np.int32)


def _script_kernel(a):
    starts, codes = _STRING_CACHE.get("scripts") or _STRING_CACHE.setdefault("scripts", _script_table())
    a = np.asarray(a, dtype=np.int64)
    out = codes[np.searchsorted(starts, a, side="right") - 1]
    return np.where((a < 0) | (a > 0x10FFFF), np.int32(-1), out).astype(np.int32)


_STRING_CACHE: dict = {}
UNICODE_SCRIPT = defop("UnicodeScript", _script_kernel, shape=_same_as(np.int32))
NotDifferentiable("UnicodeScript")


@_ragged_aware
def unicode_script(input: Any, name: Any = None) -> Tensor:
    """``tf.strings.unicode_script``: ICU's ``UScriptCode`` (int32) of each code point; -1 for an invalid one."""
    t = input if isinstance(input, Tensor) else convert_to_tensor(input, dtype=dtypes.int32)
    if t.dtype != dtypes.int32:
        raise InvalidArgumentError(None, None, f"cannot compute UnicodeScript as input #0(zero-based) was expected to "
                                   f"be a int32 tensor but is a {t.dtype.name} tensor [Op:UnicodeScript] name: ")
    return execute(UNICODE_SCRIPT, (t,), {})


def _encode_kernel(values, splits, errors, replacement, codec="utf-8"):
    out = np.empty(len(splits) - 1, dtype=_OBJ)
    for i in range(len(out)):
        chars = []
        for cp in values[splits[i]:splits[i + 1]]:
            cp = int(cp)
            if not (0 <= cp <= 0x10FFFF) or 0xD800 <= cp <= 0xDFFF:
                if errors == "strict":
                    raise InvalidArgumentError(None, None, f"Invalid code point: {cp} [Op:UnicodeEncode]")
                if errors == "ignore":
                    continue
                cp = replacement
            chars.append(chr(cp))
        out[i] = "".join(chars).encode(codec)
    return out


UNICODE_ENCODE = defop("UnicodeEncode", _encode_kernel, shape=lambda specs, errors, replacement, codec: [
    ((None if specs[1][0] is None or specs[1][0][0] is None else specs[1][0][0] - 1,), _OBJ)])
NotDifferentiable("UnicodeEncode")


def unicode_encode(input: Any, output_encoding: str, errors: str = "replace", replacement_char: int = 65533,
                   name: Any = None) -> Tensor:
    """``tf.strings.unicode_encode``: code points (last axis; dense or ragged) to UTF-8, UTF-16-BE or UTF-32-BE
    strings."""
    from tapeflow.ops import array_ops
    from tapeflow.ops.ragged import RaggedTensor

    _check_errors(errors, "UnicodeEncode")
    attrs = {"errors": errors, "replacement": int(replacement_char),
             "codec": _output_codec(output_encoding, "UnicodeEncode")}
    if isinstance(input, RaggedTensor):
        if input.ragged_rank > 1 or input.flat_values.shape.rank != 1:
            return input.with_values(unicode_encode(input.values, output_encoding, errors, replacement_char))
        return execute(UNICODE_ENCODE, (input.values, input.row_splits), attrs)
    t = convert_to_tensor(input, dtype=dtypes.int32)
    shape = t.shape.as_list()
    if len(shape) == 0:
        raise InvalidArgumentError(None, None, "unicode_encode: input must have rank >= 1 (code points on the last "
                                   "axis) [Op:UnicodeEncode]")
    n = shape[-1]
    outer = shape[:-1]
    rows = int(np.prod(outer, dtype=np.int64))
    splits = convert_to_tensor(np.arange(rows + 1, dtype=np.int64) * n)
    flat = execute(UNICODE_ENCODE, (array_ops.reshape(t, [-1]), splits), attrs)
    return array_ops.reshape(flat, outer) if len(outer) != 1 else flat


# -- format -------------------------------------------------------------------------

def _fmt_scalar(x: Any) -> str:
    if isinstance(x, (bytes, np.bytes_)):
        return '"' + x.decode("utf-8", errors="replace") + '"'
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (np.float16, np.float32)) or (isinstance(x, np.floating) and x.dtype.itemsize < 4):
        return _short_float(x, 6, 9, np.float32)
    if isinstance(x, (float, np.floating)):
        return _short_float(x, 15, 17, np.float64)
    if isinstance(x, (complex, np.complexfloating)):
        return f"({x.real:g},{x.imag:g})"
    return str(x)


def _short_float(x: Any, digits: int, more: int, kind: Any) -> str:
    # TF prints floats as absl's SimpleFtoa: %.6g (%.15g for doubles) unless that does not round-trip.
    txt = f"{x:.{digits}g}"
    if not np.isfinite(x) or kind(float(txt)) == kind(x):
        return txt
    return f"{x:.{more}g}"


def summarize(a: np.ndarray, n: int) -> str:
    """TF's ``SummarizeValue``: nested brackets, ``...`` beyond ``n`` per edge (``n < 0``: all)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return _fmt_scalar(a[()])

    def rec(x, depth=0):
        if x.ndim == 1:
            items = list(x)
            if 0 <= n and 2 * n < len(items):
                parts = [_fmt_scalar(v) for v in items[:n]] + ["..."] + [_fmt_scalar(v) for v in items[-n:]]
            else:
                parts = [_fmt_scalar(v) for v in items]
            return "[" + " ".join(parts) + "]"
        subs = list(x)
        if 0 <= n and 2 * n < len(subs):
            parts = [rec(v, depth + 1) for v in subs[:n]] + ["..."] + [rec(v, depth + 1) for v in subs[-n:]]
        else:
            parts = [rec(v, depth + 1) for v in subs]
        return "[" + ("\n" * (x.ndim - 1) + " " * (depth + 1)).join(parts) + "]"

    return rec(a)


def _format_kernel(*arrays, template, placeholder, summarize_n):
    pieces = template.split(placeholder)
    out = pieces[0]
    for a, rest in zip(arrays, pieces[1:]):
        out += summarize(a, summarize_n) + rest
    return np.asarray(out.encode("utf-8"), dtype=_OBJ)


STRING_FORMAT = defop("StringFormat", _format_kernel, shape=lambda specs, **attrs: [((), _OBJ)])
NotDifferentiable("StringFormat")


def format(template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3, name: Any = None) -> Tensor:  # noqa: A001
    """``tf.strings.format``: fills each ``placeholder`` in ``template`` with a tensor printed as TF prints it."""
    from tapeflow.framework import nest

    items = nest.flatten(inputs)
    if template.count(placeholder) != len(items):
        raise ValueError(f"num placeholders in template and num inputs must match: {template.count(placeholder)} "
                         f"vs. {len(items)}")
    ts = tuple(x if isinstance(x, Tensor) else convert_to_tensor(x) for x in items)
    return execute(STRING_FORMAT, ts, {"template": template, "placeholder": placeholder,
                                       "summarize_n": int(summarize)})


def _fingerprint_bucket(s: bytes, num_buckets: int) -> int:
    from tapeflow.ops.farmhash import fingerprint64

    return fingerprint64(s) % num_buckets


STRING_TO_HASH_BUCKET_FAST = _unary("StringToHashBucketFast", _fingerprint_bucket, np.int64)


@_ragged_aware
def to_hash_bucket_fast(input: Any, num_buckets: int, name: Any = None) -> Tensor:  # noqa: A002 - TF's name
    """``tf.strings.to_hash_bucket_fast``: FarmHash ``Fingerprint64`` of each string modulo ``num_buckets``
    (int64, TF's buckets)."""
    n = _num_buckets(num_buckets, "StringToHashBucketFast")
    return execute(STRING_TO_HASH_BUCKET_FAST, (_strings(input, "StringToHashBucketFast"),), {"num_buckets": n})


def _num_buckets(num_buckets: int, op: str) -> int:
    n = int(num_buckets)
    if n < 1:
        raise InvalidArgumentError(None, None, f"Value for attr 'num_buckets' of {n} must be at least minimum 1 "
                                   f"[Op:{op}]")
    return n


def _legacy_bucket(s: bytes, num_buckets: int) -> int:
    from tapeflow.ops.keyed_hash import hash64

    return hash64(s) % num_buckets


def _strong_bucket(s: bytes, num_buckets: int, key: tuple) -> int:
    from tapeflow.ops.keyed_hash import siphash24

    return siphash24(key[0], key[1], s) % num_buckets


STRING_TO_HASH_BUCKET = _unary("StringToHashBucket", _legacy_bucket, np.int64)
STRING_TO_HASH_BUCKET_STRONG = _unary("StringToHashBucketStrong", _strong_bucket, np.int64)


@_ragged_aware
def to_hash_bucket(input: Any, num_buckets: int, name: Any = None) -> Tensor:  # noqa: A002 - TF's name
    """``tf.strings.to_hash_bucket``: TF's legacy ``Hash64`` of each string modulo ``num_buckets`` (int64,
    TF's buckets; TF recommends ``to_hash_bucket_fast``)."""
    n = _num_buckets(num_buckets, "StringToHashBucket")
    return execute(STRING_TO_HASH_BUCKET, (_strings(input, "StringToHashBucket"),), {"num_buckets": n})


@_ragged_aware
def to_hash_bucket_strong(input: Any, num_buckets: int, key: Any, name: Any = None) -> Tensor:  # noqa: A002
    """``tf.strings.to_hash_bucket_strong``: SipHash-2-4 under the two-integer ``key`` of each string modulo
    ``num_buckets`` (int64, TF's buckets)."""
    n = _num_buckets(num_buckets, "StringToHashBucketStrong")
    k = tuple(int(v) for v in key)
    if any(not -2**63 <= v < 2**63 for v in k):
        raise OverflowError("int too big to convert (the key of StringToHashBucketStrong is a list of int64)")
    k = tuple(v & 0xFFFFFFFFFFFFFFFF for v in k)
    if len(k) != 2:
        raise InvalidArgumentError(None, None, "Key must have 2 elements [Op:StringToHashBucketStrong]")
    return execute(STRING_TO_HASH_BUCKET_STRONG, (_strings(input, "StringToHashBucketStrong"),),
                   {"num_buckets": n, "key": k})


# -- n-grams -------------------------------------------------------------------------

def _ngrams_kernel(data, splits, separator, widths, left_pad, right_pad, pad_width, preserve_short):
    data, splits = np.asarray(data).reshape(-1).tolist(), np.asarray(splits, np.int64)
    grams: list[bytes] = []
    out_splits = [0]

    def emit(row: list, width: int, count: int) -> None:
        pad = min(width - 1 if pad_width < 0 else pad_width, width - 1)  # TF's get_pad_width
        padded = [left_pad] * pad + row + [right_pad] * pad
        grams.extend(separator.join(padded[i:i + width]) for i in range(count))

    for r in range(splits.size - 1):
        row = [_b(x) for x in data[splits[r]:splits[r + 1]]]
        start = len(grams)
        for w in widths:
            pad = min(w - 1 if pad_width < 0 else pad_width, w - 1)
            emit(row, w, max(0, len(row) + 2 * pad - w + 1))
        if preserve_short and len(grams) == start and row:
            emit(row, len(row) + 2 * pad_width, 1)  # the whole (padded) row, as TF
        out_splits.append(len(grams))
    out = np.empty(len(grams), _OBJ)
    out[:] = grams
    return out, np.asarray(out_splits, np.int64)


STRING_NGRAMS = defop("StringNGrams", _ngrams_kernel, num_outputs=2, shape=lambda specs, **attrs: [
    ((None,), _OBJ), (specs[1][0], np.dtype(np.int64))])
NotDifferentiable("StringNGrams")


def ngrams(data: Any, ngram_width: Any, separator: str = " ", pad_values: Any = None, padding_width: Any = None,
           preserve_short_sequences: bool = False, name: Any = None) -> Any:
    """``tf.strings.ngrams``: joins each window of ``ngram_width`` adjacent strings of the innermost axis with
    ``separator`` (all widths of a tuple, one after another per row), optionally padded with ``pad_values``."""
    from tapeflow.ops.ragged import RaggedTensor

    if pad_values is None:
        left_pad = right_pad = b""
    elif isinstance(pad_values, (list, tuple)):
        if not all(isinstance(p, (str, bytes)) for p in pad_values[:2]):
            raise TypeError("pad_values must be a string, tuple of strings, or None.")
        left_pad, right_pad = _b(pad_values[0]), _b(pad_values[1])
    elif isinstance(pad_values, (str, bytes)):
        left_pad = right_pad = _b(pad_values)
    else:
        raise TypeError("pad_values must be a string, tuple of strings, or None.")
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
    if any(w < 1 for w in widths):
        raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
    pad_width = 0 if pad_values is None else (-1 if padding_width is None else int(padding_width))
    attrs = {"separator": _b(separator), "widths": tuple(int(w) for w in widths), "left_pad": left_pad,
             "right_pad": right_pad, "pad_width": pad_width, "preserve_short": bool(preserve_short_sequences)}
    if isinstance(data, RaggedTensor):
        if isinstance(data.values, RaggedTensor):
            return data.with_values(ngrams(data.values, ngram_width, separator, pad_values, padding_width,
                                           preserve_short_sequences))
        values, splits = execute(STRING_NGRAMS, (_strings(data.values, "StringNGrams"), data.row_splits), attrs)
        return RaggedTensor.from_row_splits(values, splits, validate=False)
    t = _strings(data, "StringNGrams")
    shape = t._shape_tuple()
    if len(shape) == 0:
        raise ValueError("Data must have rank>0")
    from tapeflow.ops import array_ops, math_ops, shape_ops

    n = shape_ops.size(t, out_type=dtypes.int64)
    if len(shape) == 1:
        return execute(STRING_NGRAMS, (t, array_ops.stack([convert_to_tensor(np.int64(0)), n])), attrs)[0]
    width = shape[-1]
    if width is None:
        raise NotImplementedError("tf.strings.ngrams of a dense tensor whose last dimension is unknown in tapeflow")
    # every row has `width` strings, so as many n-grams: the dense result keeps the leading dims
    per_row = sum(max(0, width + 2 * min(w - 1 if pad_width < 0 else pad_width, w - 1) - w + 1) for w in widths)
    if preserve_short_sequences and per_row == 0 and width:
        per_row = 1
    nrows = math_ops.floordiv(n, np.int64(max(width, 1)))
    splits = math_ops.multiply(array_ops.range_(nrows + 1, dtype=dtypes.int64), np.int64(width))
    values, _ = execute(STRING_NGRAMS, (array_ops.reshape(t, [-1]), splits), attrs)
    lead = list(shape[:-1])
    if lead.count(None) > 1:
        raise NotImplementedError("tf.strings.ngrams of a dense tensor with several unknown dimensions in tapeflow")
    return array_ops.reshape(values, [-1 if d is None else d for d in lead] + [per_row])


def _segment_join_kernel(inputs, segment_ids, num_segments, separator):
    ids = np.asarray(segment_ids).astype(np.int64)
    a = np.asarray(inputs, dtype=object)
    n = int(np.asarray(num_segments))
    if a.shape[:ids.ndim] != ids.shape:
        raise InvalidArgumentError(None, None, f"segment_ids.shape = {list(ids.shape)} does not start with "
                                   f"inputs.shape = {list(a.shape)} [Op:UnsortedSegmentJoin]")
    inner = a.shape[ids.ndim:]
    rows, flat_ids = a.reshape((-1,) + inner), ids.reshape(-1)
    if flat_ids.size and (flat_ids.min() < 0 or flat_ids.max() >= n):
        raise InvalidArgumentError(None, None, "segment_ids are not allowed to exceed num_segments or to have "
                                   "negative values. [Op:UnsortedSegmentJoin]")
    out = np.empty((n,) + inner, dtype=object)
    for seg in range(n):
        picked = rows[flat_ids == seg]
        for pos in np.ndindex(*inner):
            out[(seg,) + pos] = separator.join(picked[(slice(None),) + pos].tolist())
    return out


def _segment_join_shape(specs, separator):
    s, si = specs[0][0], specs[1][0]
    return [(None if s is None or si is None else (None,) + tuple(s[len(si):]), _OBJ)]


UNSORTED_SEGMENT_JOIN = defop("UnsortedSegmentJoin", _segment_join_kernel, shape=_segment_join_shape)
NotDifferentiable("UnsortedSegmentJoin")


def unsorted_segment_join(inputs: Any, segment_ids: Any, num_segments: Any, separator: str = "",
                          name: Any = None) -> Tensor:
    """``tf.strings.unsorted_segment_join``: the strings of each segment joined with ``separator`` in their order
    (an empty segment gives ``""``), ``num_segments`` rows; ids must be in ``[0, num_segments)``.

    >>> tf.strings.unsorted_segment_join(["this", "is", "a", "test"], [0, 0, 1, 1], 2, separator=":").numpy()
    array([b'this:is', b'a:test'], dtype=object)
    """
    t = _strings(inputs, "UnsortedSegmentJoin")
    ids = segment_ids if isinstance(segment_ids, Tensor) else convert_to_tensor(segment_ids)
    n = num_segments if isinstance(num_segments, Tensor) else convert_to_tensor(num_segments)
    return execute(UNSORTED_SEGMENT_JOIN, (t, ids, n), {"separator": _b(separator)})
