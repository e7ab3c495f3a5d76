"""tf.strings.to_hash_bucket_fast (FarmHash Fingerprint64), to_hash_bucket (TF's legacy Hash64) and
to_hash_bucket_strong (SipHash-2-4): buckets recorded from TensorFlow 2.21."""

import pytest

import tapeflow as tf
from tapeflow.ops.farmhash import fingerprint64
from tapeflow.ops.keyed_hash import hash64, siphash24

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


TF_LEGACY_MOD_2_62 = [105434511174508091, 2996632905371535868, 3579204183985781795, 1046625677629754806,
                      786047196495612765, 2809156280497303537, 3746616076060599274, 3993384660651300269,
                      2960345911509200448, 3429851175771700306, 1188214556408278225, 1260831952859287914,
                      1430365920931554667, 4169162641161452539, 4527227941403067175, 2192457456962414804,
                      2525959834624391444, 4185538572715980330, 739982330887139047, 1867496532087427513]
TF_SIP_1_2_MOD_2_62 = [443797209252341627, 546566331822570742, 4607785088827641202, 1250540936487842205,
                       3102492193577795962, 452531082214055213, 2222067896284876515, 2143850447796213531,
                       957890530879302020, 2649018002260510108, 1449931241982534344, 2083976100733463555,
                       1541948060395825868, 3980165345902758879, 1384389142664038360, 3342862793305436196,
                       3209810203499148325, 4118523408214967998, 565548761847910729, 3793071375781395744]


def test_legacy_hash64_every_tail_length():
    assert [hash64(w) % 2**62 for w in WORDS] == TF_LEGACY_MOD_2_62
    assert tf.strings.to_hash_bucket(WORDS, 2**62).numpy().tolist() == TF_LEGACY_MOD_2_62
    got = tf.strings.to_hash_bucket(WORDS, 1000).numpy().tolist()
    assert got == [899, 868, 699, 710, 573, 249, 178, 981, 256, 306, 129, 818, 379, 251, 983, 612, 444, 42, 951, 225]
    q = tf.ragged.constant([["Who", "is", "Dan", "Smith"], ["Pause"]])
    assert tf.strings.to_hash_bucket(q, 1024).to_list() == [[861, 1009, 1002, 429], [163]]
    t = tf.strings.to_hash_bucket("abc", 10)
    assert t.dtype == tf.int64 and t.shape == () and int(t) == 0


def test_strong_hash_is_siphash24_with_the_key():
    assert [siphash24(1, 2, w) % 2**62 for w in WORDS] == TF_SIP_1_2_MOD_2_62
    assert tf.strings.to_hash_bucket_strong(WORDS, 2**62, [1, 2]).numpy().tolist() == TF_SIP_1_2_MOD_2_62
    got = tf.strings.to_hash_bucket_strong(WORDS, 1000, [0xDEADBEEF, 2**62 + 5]).numpy().tolist()
    assert got == [13, 46, 417, 304, 658, 888, 287, 303, 278, 685, 4, 745, 852, 847, 803, 372, 404, 83, 77, 540]
    q = tf.ragged.constant([["Who", "is", "Dan", "Smith"], ["Pause"]])
    assert tf.strings.to_hash_bucket_strong(q, 1024, [3, 4]).to_list() == [[227, 396, 292, 282], [235]]

    @tf.function
    def f(x):
        return tf.strings.to_hash_bucket_strong(x, 7, [5, 6])

    assert f(tf.constant(["a", "b"])).numpy().tolist() == [0, 2]


def test_hash_bucket_errors_as_tf():
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_buckets' of 0 must be at least minimum 1"):
        tf.strings.to_hash_bucket("abc", 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_buckets' of 0 must be at least minimum 1"):
        tf.strings.to_hash_bucket_strong("abc", 0, [1, 2])
    for key in ([1], [1, 2, 3]):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Key must have 2 elements"):
            tf.strings.to_hash_bucket_strong("abc", 10, key)
    with pytest.raises(TypeError, match="Cannot convert 3 to EagerTensor of dtype string"):
        tf.strings.to_hash_bucket(3, 10)
    assert int(tf.strings.to_hash_bucket_strong("abc", 10, [-1, 2])) == 0  # an int64 attr, read as uint64
    with pytest.raises(OverflowError, match="int too big to convert"):
        tf.strings.to_hash_bucket_strong("abc", 10, [2**63, 2])
