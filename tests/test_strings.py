"""tf.strings: values, dtypes, shapes and errors pinned against TensorFlow 2.21."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

S = ["hello world", "  a  b ", "héllo"]


def _v(t):
    return t.numpy().tolist()


def test_length_bytes_and_utf8_chars():
    s = tf.constant(S)
    n = tf.strings.length(s)
    assert n.dtype == tf.int32 and _v(n) == [11, 7, 6]
    assert _v(tf.strings.length(s, unit="UTF8_CHAR")) == [11, 7, 5]
    assert _v(tf.strings.length(tf.constant([[b"ab"], [b"\xc3"]]), unit="UTF8_CHAR")) == [[2], [1]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the list of allowed values"):
        tf.strings.length(s, unit="X")


def test_split_whitespace_and_sep_is_ragged():
    s = tf.constant(S)
    r = tf.strings.split(s)
    assert isinstance(r, tf.RaggedTensor)
    assert r.to_list() == [[b"hello", b"world"], [b"a", b"b"], [b"h\xc3\xa9llo"]]
    assert tf.strings.split(s, sep=" ").to_list() == [
        [b"hello", b"world"], [b"", b"", b"a", b"", b"b", b""], [b"h\xc3\xa9llo"]]
    assert tf.strings.split(["a,b,,c"], sep=",").to_list() == [[b"a", b"b", b"", b"c"]]
    assert tf.strings.split([""], sep=",").to_list() == [[b""]] and tf.strings.split([""]).to_list() == [[]]
    assert tf.strings.split(["a<>b<>c"], sep="<>").to_list() == [[b"a", b"b", b"c"]]
    assert tf.strings.split(["a,,b"], sep=",", maxsplit=1).to_list() == [[b"a", b",b"]]


def test_split_scalar_is_dense_and_rank2_is_ragged_rank3():
    d = tf.strings.split("a b")
    assert isinstance(d, tf.Tensor) and d.shape == (2,) and _v(d) == [b"a", b"b"]
    r = tf.strings.split(tf.constant([["a b", "c"], ["d", "e f g"]]))
    assert r.shape.as_list() == [2, 2, None]
    assert r.to_list() == [[[b"a", b"b"], [b"c"]], [[b"d"], [b"e", b"f", b"g"]]]


@pytest.mark.parametrize("s, m, expected", [
    ("abc", 1, [b"abc", b""]), ("abc", 2, [b"abc"]), ("a b c", 1, [b"a", b"b c"]), ("a b", 2, [b"a", b"b", b""]),
    ("a b ", 1, [b"a", b"b "]), (" a", 2, [b"a"]), ("", 1, []), ("a  b  c  d", 2, [b"a", b"b", b"c  d"]),
])
def test_split_whitespace_maxsplit_as_tf(s, m, expected):
    assert _v(tf.strings.split(s, maxsplit=m)) == expected


def test_join_and_reduce_join():
    assert tf.strings.join(["a", "b"], separator="-").numpy() == b"a-b"
    assert _v(tf.strings.join([tf.constant(["a", "b"]), "x"])) == [b"ax", b"bx"]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Input shapes do not match: \[2\] vs. \[3\]"):
        tf.strings.join([tf.constant(["a", "b"]), tf.constant(["a", "b", "c"])])
    m = tf.constant([["a", "b"], ["c", "d"]])
    assert tf.strings.reduce_join(m).numpy() == b"abcd"
    assert _v(tf.strings.reduce_join(m, axis=1, separator=",")) == [b"a,b", b"c,d"]
    k = tf.strings.reduce_join(m, axis=0, keepdims=True)
    assert k.shape == (1, 2) and _v(k) == [[b"ac", b"bd"]]
    assert _v(tf.strings.reduce_join(m, axis=-1)) == [b"ab", b"cd"]
    m = tf.constant([["a", "b", "c"], ["d", "e", "f"]])
    assert tf.strings.reduce_join(m, axis=[0, 1], separator=".").numpy() == b"a.d.b.e.c.f"
    assert tf.strings.reduce_join(m, axis=[1, 0], separator=".").numpy() == b"a.b.c.d.e.f"
    m3 = tf.reshape(tf.strings.as_string(tf.range(8)), [2, 2, 2])
    assert _v(tf.strings.reduce_join(m3, axis=[2, 0], separator=".")) == [b"0.1.4.5", b"2.3.6.7"]
    assert tf.strings.reduce_join(tf.constant([], tf.string)).numpy() == b""


def test_substr_bytes_utf8_negative_and_out_of_range():
    s = tf.constant(S)
    assert _v(tf.strings.substr(s, 1, 3)) == [b"ell", b" a ", b"\xc3\xa9l"]
    assert _v(tf.strings.substr(s, -3, 2)) == [b"rl", b" b", b"ll"]
    assert tf.strings.substr("héllo", 1, 3, unit="UTF8_CHAR").numpy() == b"\xc3\xa9ll"
    assert _v(tf.strings.substr(tf.constant(["hello", "world"]), [1, 2], [2, 10])) == [b"el", b"rld"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="pos 5 out of range for string b'abc' at index 0"):
        tf.strings.substr("abc", 5, 1)


def test_case_strip_and_regex():
    s = tf.constant(S)
    assert _v(tf.strings.upper(s)) == [b"HELLO WORLD", b"  A  B ", b"H\xc3\xa9LLO"]
    assert tf.strings.lower("AbC").numpy() == b"abc"
    assert _v(tf.strings.strip(s)) == [b"hello world", b"a  b", b"h\xc3\xa9llo"]
    assert _v(tf.strings.regex_replace(s, "l+", "L")) == [b"heLo worLd", b"  a  b ", b"h\xc3\xa9Lo"]
    assert _v(tf.strings.regex_replace(s, "l", "L", replace_global=False)) == [
        b"heLlo world", b"  a  b ", b"h\xc3\xa9Llo"]
    assert tf.strings.regex_replace("abc", "(b)", r"<\1>").numpy() == b"a<b>c"
    m = tf.strings.regex_full_match(s, "h.*")
    assert m.dtype == tf.bool and _v(m) == [True, False, True]


def test_to_number_dtypes_and_errors():
    f = tf.strings.to_number(["1.5", "2"])
    assert f.dtype == tf.float32 and _v(f) == [1.5, 2.0]
    i = tf.strings.to_number(["3", "-4"], out_type=tf.int32)
    assert i.dtype == tf.int32 and _v(i) == [3, -4]
    assert tf.strings.to_number(["1e3"], out_type=tf.float64).dtype == tf.float64
    for bad, t in [("abc", tf.float32), ("1.5", tf.int32), ("99999999999", tf.int32)]:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=f"StringToNumberOp could not correctly convert string: {bad}"):
            tf.strings.to_number(bad, out_type=t)


def test_as_string_options():
    assert _v(tf.strings.as_string([1.5, 2.25])) == [b"1.500000", b"2.250000"]
    assert _v(tf.strings.as_string([1.5], precision=2)) == [b"1.50"]
    assert _v(tf.strings.as_string([1234.5], scientific=True)) == [b"1.234500e+03"]
    assert _v(tf.strings.as_string([3], width=5, fill="0")) == [b"00003"]
    assert _v(tf.strings.as_string([True, False])) == [b"true", b"false"]
    assert _v(tf.strings.as_string(tf.constant([7], tf.int64), width=4)) == [b"   7"]
    assert _v(tf.strings.as_string(tf.constant([1.0, 1e10, 1e-5, 0.1]))) == [
        b"1.000000", b"10000000000.000000", b"0.000010", b"0.100000"]
    assert _v(tf.strings.as_string(tf.constant([0.1, 1e-7, 123456789.0]), shortest=True)) == [
        b"0.1", b"1e-07", b"1.23457e+08"]
    assert _v(tf.strings.as_string(tf.constant([-1.5]), width=8, fill="0")) == [b"-1.500000"]


def test_format_prints_tensors_as_tf():
    assert tf.strings.format("x={} y={}", (tf.constant([1, 2, 3]), 5)).numpy() == b"x=[1 2 3] y=5"
    assert tf.strings.format("{}", tf.constant([[1.5, 2.0]])).numpy() == b"[[1.5 2]]"
    assert tf.strings.format("v: {}", tf.range(20)).numpy() == b"v: [0 1 2 ... 17 18 19]"
    assert tf.strings.format("{}", tf.constant(["a", "b"])).numpy() == b'["a" "b"]'
    assert tf.strings.format("{}", tf.constant(3.0)).numpy() == b"3"
    assert tf.strings.format("{}", tf.reshape(tf.range(12), [3, 4])).numpy() == b"[[0 1 2 3]\n [4 5 6 7]\n [8 9 10 11]]"
    assert tf.strings.format("{}", tf.reshape(tf.range(60), [10, 6])).numpy() == (
        b"[[0 1 2 3 4 5]\n [6 7 8 9 10 11]\n [12 13 14 15 16 17]\n ...\n [42 43 44 45 46 47]\n [48 49 50 51 52 53]\n"
        b" [54 55 56 57 58 59]]")
    assert tf.strings.format("a {} b {}", [tf.constant([0.1, 1e-7, 123456789.0]), tf.constant([True, False])]
                             ).numpy() == b"a [0.1 1e-07 123456792] b [1 0]"
    assert tf.strings.format("{}", tf.reshape(tf.range(8), [2, 2, 2])).numpy() == (
        b"[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]")
    assert tf.strings.format("{}", tf.range(10), summarize=-1).numpy() == b"[0 1 2 3 4 5 6 7 8 9]"
    assert tf.strings.format("<>", tf.range(2), placeholder="<>").numpy() == b"[0 1]"
    with pytest.raises(ValueError, match="num placeholders"):
        tf.strings.format("{} {}", [tf.constant(1)])


def test_bytes_split_and_unicode():
    assert _v(tf.strings.bytes_split("abc")) == [b"a", b"b", b"c"]
    assert tf.strings.bytes_split(["ab", "c"]).to_list() == [[b"a", b"b"], [b"c"]]
    d = tf.strings.unicode_decode("héllo", "UTF-8")
    assert d.dtype == tf.int32 and _v(d) == [104, 233, 108, 108, 111]
    assert tf.strings.unicode_decode(["hé", "x"], "UTF-8").to_list() == [[104, 233], [120]]
    assert tf.strings.unicode_encode([104, 233], "UTF-8").numpy() == b"h\xc3\xa9"
    assert _v(tf.strings.unicode_encode(tf.ragged.constant([[104, 233], [120]]), "UTF-8")) == [b"h\xc3\xa9", b"x"]
    assert _v(tf.strings.unicode_encode(tf.constant([[104, 105], [106, 107]]), "UTF-8")) == [b"hi", b"jk"]
    assert _v(tf.strings.unicode_split("héllo", "UTF-8")) == [b"h", b"\xc3\xa9", b"l", b"l", b"o"]
    assert tf.strings.unicode_split(["hé", "x"], "UTF-8").to_list() == [[b"h", b"\xc3\xa9"], [b"x"]]
    assert _v(tf.strings.unicode_decode("语言".encode("UTF-16-BE"), "UTF-16-BE")) == [35821, 35328]


def test_string_ops_inside_tf_function_and_not_differentiable():
    traces = []

    @tf.function
    def f(x):
        traces.append(1)
        return (tf.strings.upper(x), tf.strings.length(x), tf.strings.split(x),
                tf.strings.reduce_join(x, separator="|"),
                tf.strings.to_number(tf.strings.as_string(tf.strings.length(x))),
                tf.strings.format("{}", x), tf.strings.substr(x, 0, 1), tf.strings.join([x, "!"]))

    up, n, sp, rj, num, fm, sub, jn = f(tf.constant(["a b", "cd"]))
    assert _v(up) == [b"A B", b"CD"] and _v(n) == [3, 2] and sp.to_list() == [[b"a", b"b"], [b"cd"]]
    assert rj.numpy() == b"a b|cd" and _v(num) == [3.0, 2.0] and fm.numpy() == b'["a b" "cd"]'
    assert _v(sub) == [b"a", b"c"] and _v(jn) == [b"a b!", b"cd!"]
    up, *_ = f(tf.constant(["x", "yy"]))
    assert _v(up) == [b"X", b"YY"] and len(traces) == 1
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = tf.strings.to_number(tf.strings.as_string(x * 2.0))
    assert float(y) == 2.0 and tape.gradient(y, x) is None


def test_string_tensor_str_and_repr():
    t = tf.constant(["a", "b"])
    assert repr(t) == "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>"
    assert str(tf.constant("x")) == "tf.Tensor(b'x', shape=(), dtype=string)"
    assert np.asarray(t).dtype == object


def test_elementwise_string_ops_dispatch_on_ragged():
    r = tf.ragged.constant([["a b", "Bb"], ["1"]])
    assert tf.strings.length(r).to_list() == [[3, 2], [1]]
    assert tf.strings.upper(r).to_list() == [[b"A B", b"BB"], [b"1"]]
    assert tf.strings.to_number(tf.ragged.constant([["1"], ["2", "3"]])).to_list() == [[1.0], [2.0, 3.0]]
    assert tf.strings.regex_replace(r, "b", "x").to_list() == [[b"a x", b"Bx"], [b"1"]]
    assert tf.strings.substr(r, 0, 1).to_list() == [[b"a", b"B"], [b"1"]]
    assert tf.strings.as_string(tf.ragged.constant([[1], [2, 3]])).to_list() == [[b"1"], [b"2", b"3"]]
    assert tf.strings.join([r, "!"]).to_list() == [[b"a b!", b"Bb!"], [b"1!"]]
    assert tf.strings.regex_full_match(r, "a.*").to_list() == [[True, False], [False]]
    assert tf.strings.unicode_decode(r, "UTF-8").to_list() == [[[97, 32, 98], [66, 98]], [[49]]]
    assert tf.strings.split(r).to_list() == [[[b"a", b"b"], [b"Bb"]], [[b"1"]]]


@pytest.mark.parametrize("s, dtype, expected", [
    (" 1", "int32", 1), ("1 ", "float32", 1.0), ("+5", "int64", 5), ("inf", "float32", np.inf),
    ("-Infinity", "float64", -np.inf), ("1e40", "float32", np.inf), (".5", "float32", 0.5), ("5.", "float32", 5.0),
    ("0x10", "int32", None), ("", "float32", None), ("1_0", "float32", None), ("1e5", "int32", None),
])
def test_to_number_edge_cases_as_tf(s, dtype, expected):
    if expected is None:
        with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert"):
            tf.strings.to_number(s, getattr(tf, dtype))
    else:
        assert tf.strings.to_number(s, getattr(tf, dtype)).numpy() == expected


def test_unicode_decode_errors_modes():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid formatting on input string"):
        tf.strings.unicode_decode(b"a\xffb", "UTF-8", errors="strict")
    assert _v(tf.strings.unicode_decode(b"a\xffb", "UTF-8", errors="replace")) == [97, 65533, 98]
    assert _v(tf.strings.unicode_decode(b"a\xffb", "UTF-8", errors="ignore")) == [97, 98]
    assert tf.strings.unicode_encode([104, 0x110000], "UTF-8").numpy() == b"h\xef\xbf\xbd"


def test_explicit_string_dtype_holds_bytes():
    assert tf.convert_to_tensor("x", dtype=tf.string).numpy() == b"x"
    assert _v(tf.constant(["a", "b"], dtype=tf.string)) == [b"a", b"b"]
    assert _v(tf.constant(np.array(["a"], dtype=object), dtype=tf.string)) == [b"a"]


def test_reduce_join_of_ragged_rows():
    # TF 2.21's ragged dispatch of tf.strings.reduce_join (text-generation tutorials join unicode_split chars back)
    r = tf.strings.unicode_split(["abc", "ed"], "UTF-8")
    assert tf.strings.reduce_join(r, axis=-1).numpy().tolist() == [b"abc", b"ed"]
    assert tf.strings.reduce_join(r, axis=1, separator="-").numpy().tolist() == [b"a-b-c", b"e-d"]
    assert tf.strings.reduce_join(r).numpy() == b"abced"
    assert tf.strings.reduce_join(r, axis=0).numpy().tolist() == [b"ae", b"bd", b"c"]
    kept = tf.strings.reduce_join(r, axis=-1, keepdims=True)
    assert kept.shape == (2, 1) and kept.numpy().tolist() == [[b"abc"], [b"ed"]]
    inner = tf.ragged.constant([[["a", "b"]], [["c", "d"], ["e", "f"]]], inner_shape=(2,))
    assert tf.strings.reduce_join(inner, axis=1).numpy().tolist() == [[b"a", b"b"], [b"ce", b"df"]]


# text11: the tensorflow/text unicode guide's ops; values and messages from TF 2.21


def test_unicode_transcode_and_encodings():
    t = tf.strings.unicode_transcode(["语言处理", "ab"], "UTF8", "UTF-16-BE")
    assert t.dtype == tf.string and _v(t) == [b"\x8b\xed\x8a\x00Y\x04t\x06", b"\x00a\x00b"]
    assert tf.strings.unicode_transcode("ab", "UTF-8", "UTF-32-BE").numpy() == b"\x00\x00\x00a\x00\x00\x00b"
    assert tf.strings.unicode_transcode(b"\xe9", "latin1", "UTF-8").numpy() == b"\xc3\xa9"
    assert tf.strings.unicode_transcode("ab", "UTF-16-BE", "UTF-8").numpy() == b"\xe6\x85\xa2"
    # malformed input: one replacement per maximal ill-formed subsequence (3 for an encoded surrogate)
    assert tf.strings.unicode_transcode(b"\xed\xa0\x80", "UTF-8", "UTF-16-BE").numpy() == b"\xff\xfd" * 3
    assert tf.strings.unicode_transcode(b"a\xffb", "UTF-8", "UTF-8", replacement_char=63).numpy() == b"a?b"
    assert tf.strings.unicode_transcode(b"a\xffb", "UTF-8", "UTF-8", errors="ignore").numpy() == b"ab"
    assert tf.strings.unicode_transcode("a\x01b", "UTF-8", "UTF-8",
                                        replace_control_characters=True).numpy() == b"a\xef\xbf\xbdb"
    r = tf.strings.unicode_transcode(tf.ragged.constant([[b"ab"], [b"c", b"d"]]), "UTF-8", "UTF-16-BE")
    assert r.to_list() == [[b"\x00a\x00b"], [b"\x00c", b"\x00d"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid formatting on input string"):
        tf.strings.unicode_transcode(b"a\xffb", "UTF-8", "UTF-8", errors="strict")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not create converter for input encoding: foo"):
        tf.strings.unicode_transcode("ab", "foo", "UTF-8")
    with pytest.raises(tf.errors.InvalidArgumentError, match='"latin1" is not in the list of allowed values'):
        tf.strings.unicode_transcode("ab", "UTF-8", "latin1")
    with pytest.raises(tf.errors.InvalidArgumentError, match='"bogus" is not in the list of allowed values'):
        tf.strings.unicode_decode(b"a", "UTF-8", errors="bogus")
    # output encodings are exactly TF's three names; input encodings are ICU's (BOM-aware UTF-16, UTF-8's BOM kept)
    with pytest.raises(tf.errors.InvalidArgumentError, match='"UTF8" is not in the list'):
        tf.strings.unicode_encode([97], "UTF8")
    assert tf.strings.unicode_encode([27, 0x1F60A], "UTF-16-BE").numpy() == b"\x00\x1b\xd8=\xde\n"
    assert tf.strings.unicode_encode([27, 0x8BED], "UTF-32-BE").numpy() == b"\x00\x00\x00\x1b\x00\x00\x8b\xed"
    assert _v(tf.strings.unicode_decode(b"\xff\xfea\x00", "UTF-16")) == [97]
    assert _v(tf.strings.unicode_decode("ab", "UTF-16")) == [24930]
    assert _v(tf.strings.unicode_decode(b"\xef\xbb\xbfa", "UTF-8")) == [65279, 97]
    assert _v(tf.strings.unicode_decode(b"\xd8\x00\x00a", "UTF-16-BE")) == [65533, 97]
    assert _v(tf.strings.unicode_decode("\t\n\x1f \x7f\x85", "UTF-8", replace_control_characters=True)) == [
        65533, 65533, 65533, 32, 127, 133]


def test_unicode_decode_and_split_with_offsets():
    cp, off = tf.strings.unicode_decode_with_offsets("🎈🎉🎊", "UTF-8")
    assert cp.dtype == tf.int32 and off.dtype == tf.int64
    assert _v(cp) == [127880, 127881, 127882] and _v(off) == [0, 4, 8]
    cp, off = tf.strings.unicode_decode_with_offsets([["🎈🎉🎊", "ab"]], "UTF-8")
    assert cp.to_list() == [[[127880, 127881, 127882], [97, 98]]] and off.to_list() == [[[0, 4, 8], [0, 1]]]
    cp, off = tf.strings.unicode_decode_with_offsets(b"a\xe4\xb8b\xf0\x9f\x8e", "UTF-8")
    assert _v(cp) == [97, 65533, 98, 65533] and _v(off) == [0, 1, 3, 4]
    cp, off = tf.strings.unicode_decode_with_offsets(b"a\xe4\xb8b\xf0\x9f\x8e", "UTF-8", errors="ignore")
    assert _v(cp) == [97, 98] and _v(off) == [0, 3]
    _, off = tf.strings.unicode_decode_with_offsets("语言".encode("UTF-16-BE"), "UTF-16-BE")
    assert _v(off) == [0, 2]
    ch, off = tf.strings.unicode_split_with_offsets(["ab", "c"], "UTF-8")
    assert ch.to_list() == [[b"a", b"b"], [b"c"]] and off.to_list() == [[0, 1], [0]]


def test_unicode_script():
    s = tf.strings.unicode_script([33464, 1041])  # Han, Cyrillic
    assert s.dtype == tf.int32 and _v(s) == [17, 8]
    assert tf.strings.unicode_script(33464).numpy() == 17
    assert tf.strings.unicode_script(tf.ragged.constant([[33464], [1041, 65]])).to_list() == [[17], [8, 25]]
    # Common (0) punctuation, Inherited (1) combining marks, Hiragana 20, Unknown 103 (unassigned), -1 invalid
    assert _v(tf.strings.unicode_script([44, 0x300, 12371, 0x378, 0xD800, -5, 0x110000, 0x10FFFF])) == [
        0, 1, 20, 103, 103, -1, -1, 103]
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a int32 tensor but is a int64"):
        tf.strings.unicode_script(tf.constant([1], tf.int64))
