"""tf.strings.to_hash_bucket_fast: FarmHash Fingerprint64 buckets (values recorded from TensorFlow 2.21)."""

import pytest

import tapeflow as tf
from tapeflow.ops.farmhash import fingerprint64

WORDS = [b"", b"a", b"ab", b"abc", b"Who", b"is", b"Dan", b"Smith", b"abcdefg", b"abcdefgh", b"hello world!!",
         b"x" * 16, b"y" * 17, b"0123456789abcdef0123456789abcdef", b"z" * 33, bytes(range(64)), bytes(range(65)),
         bytes(range(200)), bytes(range(128)), "héllo wörld".encode() * 13]
TF_MOD_2_62 = [1936946117179621455, 3694432073954588131, 3066228220894225694, 2640714258260161385,
               426034595791921785, 3043494581802008320, 359893577734699245, 4427996311582422325,
               4341691227789030229, 4533385575889643785, 2069612503150846932, 3320895591121647644,
               426471879119003573, 1958373538681310840, 1983000239170337647, 3856493858525203531,
               478270155923209662, 525935771297148851, 2037963038260878803, 3713380506680521107]


def test_fingerprint64_every_length_branch():
    assert [fingerprint64(w) % 2**62 for w in WORDS] == TF_MOD_2_62
    got = tf.strings.to_hash_bucket_fast(WORDS, 1000).numpy().tolist()
    assert got == [263, 939, 502, 385, 785, 320, 957, 325, 229, 497, 644, 644, 573, 840, 359, 243, 374, 851, 803, 107]


def test_ragged_and_scalar_and_errors():
    q = tf.ragged.constant([["Who", "is", "Dan", "Smith"], ["Pause"]])
    b = tf.strings.to_hash_bucket_fast(q, 1024)
    assert isinstance(b, tf.RaggedTensor) and b.to_list() == [[633, 768, 237, 309], [28]]
    t = tf.strings.to_hash_bucket_fast("abc", 10)
    assert t.dtype == tf.int64 and int(t) == 5
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_buckets' of 0 must be at least minimum 1"):
        tf.strings.to_hash_bucket_fast("abc", 0)
    with pytest.raises(TypeError, match="Cannot convert 3 to EagerTensor of dtype string"):
        tf.strings.to_hash_bucket_fast(3, 10)
    q = tf.ragged.constant([["Who", "is", "the"], ["a"]])
    assert str(q[0, 2]) == "tf.Tensor(b'the', shape=(), dtype=string)"  # a NumPy bytes_ scalar prints as bytes
