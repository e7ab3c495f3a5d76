"""tf.random draws bit-equal to TF 2.21's Philox streams (values pinned from TF on CPU)."""

import numpy as np
import pytest

import tapeflow as tf


def near(a, b):
    # bit-equal to TF's draws (the values are TF's, printed exactly)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b, dtype=np.asarray(a).dtype))


def test_generator_from_seed_state_and_draws():
    g = tf.random.Generator.from_seed(1)
    assert g.state.numpy().tolist() == [1, 0, 0] and g.state.dtype == tf.int64
    near(g.normal([2, 3]), [[0.4384227395057678, -0.5343984365463257, -0.07710261642932892],
                             [1.5658046007156372, -0.10123450309038162, -0.2744975984096527]])
    assert g.state.numpy().tolist() == [1537, 0, 0]  # 256 counter steps per number, as TF
    g.reset_from_seed(1)
    near(g.normal([]), 0.4384227395057678)
    near(g.normal([]), 1.6272374391555786)


def test_generator_split_and_children():
    g = tf.random.Generator.from_seed(1)
    near(g.normal([]), 0.4384227395057678)
    kids = g.split(3)
    assert kids[0].state.numpy().tolist()[:2] == [0, 0]
    near([k.normal([]) for k in kids], [2.5364129543304443, 0.3318646252155304, -0.07144656777381897])
    near(g.normal([]), -0.7925308346748352)


def test_generator_inside_tf_function_advances_per_call():
    g = tf.random.Generator.from_seed(1)

    @tf.function
    def foo():
        return g.normal([])

    near(foo(), 0.4384227395057678)
    near(foo(), 1.6272374391555786)


def test_stateless_ops_match_tf():
    near(tf.random.stateless_normal([4], seed=[1, 2]), [0.544110119342804, 0.20738030970096588, 0.0735643208026886,
                                                          0.04643455147743225])
    near(tf.random.stateless_uniform([4], seed=[1, 2]), [0.8440604209899902, 0.19204533100128174, 0.9962232112884521,
                                                           0.16038739681243896])
    near(tf.random.stateless_uniform([4], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32), [0, 9, 4, 9])
    assert tf.random.split([1, 2], 3).numpy().tolist() == [
        [1105988140, 1738052849], [-335576002, 370444179], [10670227, -246211131]]
    f = tf.random.fold_in([1, 2], 3)
    assert f.dtype == tf.int32 and f.numpy().tolist() == [1105988140, 3]
    f64 = tf.random.fold_in([1, 2], tf.constant(3, tf.int64))
    assert f64.dtype == tf.int64 and f64.numpy().tolist() == [7464880146280614444, 3]


def test_seeded_stateful_ops_match_tf_streams():
    tf.random.set_seed(None)
    near(tf.random.normal([4], seed=2), [-0.8581108450889587, -0.19662298262119293, 0.13895045220851898,
                                             -1.2212767601013184])
    near(tf.random.normal([4], seed=2), [-0.056350406259298325, -0.16967563331127167, 0.09460341185331345,
                                             1.9712773561477661])  # the stream goes on
    tf.random.set_seed(1)
    near(tf.random.normal([4], seed=2),
         [-1.0467792749404907, 0.8397045731544495, 1.235836386680603, 2.0637853145599365])
    # another kernel: its own stream
    near(tf.random.uniform([3], seed=2), [0.406396746635437, 0.8575996160507202, 0.05539584159851074])
    near(tf.random.uniform([3]), [0.1651308536529541, 0.9014812707901001, 0.6309741735458374])
    near(tf.random.uniform([3], maxval=10, dtype=tf.int32), [2, 0, 2])
    near(tf.random.truncated_normal([5], seed=3), [-0.6708612442016602, 0.22357144951820374, 0.7972730398178101,
                                                  0.0961705893278122, 0.9259123206138611])


def test_graph_op_seeds_count_from_zero_as_tf():
    tf.random.set_seed(1)

    @tf.function
    def f():
        return tf.random.uniform([2]), tf.random.uniform([2])

    a, b = f()
    near(a, [0.8126964569091797, 0.07857465744018555])
    near(b, [0.055544137954711914, 0.018698453903198242])
    a, b = f()
    near(a, [0.8489425182342529, 0.09832477569580078])
    tf.random.set_seed(None)


def test_variable_initializers_in_tf_function_draw_once():
    # Two variables created on the first call from random ops traced before either exists: each initial
    # value runs only its own random op (TF lifts the initializer), so the bias is its op's first draw.
    tf.random.set_seed(22)

    class Linear(tf.Module):
        def __init__(self):
            self.built = False

        @tf.function
        def __call__(self, x):
            if not self.built:
                rand_w = tf.random.uniform(shape=[x.shape[-1], 1])
                rand_b = tf.random.uniform(shape=[])
                self.w, self.b = tf.Variable(rand_w), tf.Variable(rand_b)
                self.built = True
            return tf.matmul(x, self.w) + self.b

    m = Linear()
    near(m(tf.ones([1, 3])), [[1.6572842597961426]])
    near(m.w.numpy().ravel(), [0.05993151664733887, 0.6232527494430542, 0.9526306390762329])
    near(m.b, 0.0214693546295166)
    tf.random.set_seed(None)


@pytest.mark.parametrize("dtype,expected", [
    (np.float64, [0.2999614354048876, 0.3410444613400274, 0.664834327169197]),
])
def test_philox_double_uniform(dtype, expected):
    from tapeflow.ops import philox

    np.testing.assert_allclose(philox.uniform(1, 0, (3,), dtype), expected, rtol=0, atol=0)


def test_philox_kernels_against_tf_words():
    from tapeflow.ops import philox

    assert philox.uniform_full_int(1, 0, (3,), np.uint32).tolist() == [4175744164, 1555169499, 2980410603]
    assert philox.uniform_full_int(1, 0, (2,), np.uint64).tolist() == [6679402142117448868, 684265014234019051]
    assert philox.uniform_int(1, 0, (6,), 3, 13, np.int64).tolist() == [11, 4, 12, 12, 4, 6]
    near(philox.truncated_normal(1, 0, (8,), np.float32),
         [0.4384227395057678, -0.5343984365463257, -0.07710261642932892, 1.5658046007156372, 1.6272374391555786,
          0.041380707174539566, -0.10412996262311935, 0.7932631373405457])
    np.testing.assert_allclose(philox.normal(1, 0, (4,), np.float64),
                               [1.3047755394201908, -0.8400973242485322, 0.8239721517327651, -0.37081625645504807],
                               rtol=0, atol=0)
    big = philox.normal(1, 0, (4096,), np.float32)  # the NumPy path: the same numbers within one float32 ulp
    np.testing.assert_allclose(big[:6], [0.4384227395057678, -0.5343984365463257, -0.07710261642932892,
                                          1.5658046007156372, -0.10123450309038162, -0.2744975984096527], rtol=3e-7)


def test_categorical_matches_tf():
    tf.random.set_seed(None)
    logits = [[0.0, 1.0, 2.0], [2.0, 0.0, -1.0]]
    assert tf.random.stateless_categorical(logits, 7, seed=[1, 2]).numpy().tolist() == [
        [2, 2, 1, 2, 2, 2, 2], [0, 0, 0, 0, 0, 0, 0]]
    assert tf.random.categorical(logits, 5, seed=3).numpy().tolist() == [[1, 2, 0, 2, 2], [0, 0, 0, 0, 0]]
    assert tf.random.categorical(logits, 5, seed=3).numpy().tolist() == [[2, 2, 2, 2, 1], [0, 0, 0, 1, 0]]
    assert tf.random.categorical([[0.0, float("-inf"), 2.0]], 5, seed=3, dtype=tf.int32).numpy().tolist() == [
        [0, 2, 0, 2, 2]]
    z = tf.zeros([3, 4])
    assert tf.random.stateless_categorical(z, 6, seed=[1, 2]).numpy().tolist() == [
        [3, 3, 0, 3, 2, 2], [3, 0, 3, 3, 2, 1], [0, 1, 2, 1, 3, 1]]
    draws = [tf.random.categorical(tf.zeros([1, 4]), 3, seed=5).numpy().tolist() for _ in range(3)]
    assert draws == [[[0, 2, 2]], [[2, 2, 1]], [[3, 1, 0]]]


def test_shuffle_matches_tf():
    tf.random.set_seed(None)
    assert [tf.random.shuffle(tf.range(10), seed=7).numpy().tolist() for _ in range(3)] == [
        [7, 2, 0, 9, 8, 4, 5, 1, 6, 3], [3, 7, 9, 5, 8, 4, 2, 0, 6, 1], [7, 3, 2, 0, 9, 4, 1, 8, 5, 6]]
    assert tf.random.shuffle(tf.reshape(tf.range(12), [6, 2]), seed=9).numpy().tolist() == [
        [6, 7], [2, 3], [10, 11], [4, 5], [0, 1], [8, 9]]
    tf.random.set_seed(1)
    assert tf.random.shuffle(tf.range(8), seed=4).numpy().tolist() == [0, 4, 3, 2, 7, 1, 6, 5]
    assert tf.random.shuffle(tf.constant([5])).numpy().tolist() == [5]
    tf.random.set_seed(None)


def test_large_draws_cross_philox_blocks_as_tf():
    # 70,001 numbers span several of the generator's 16,384-call blocks; values pinned from TF 2.21
    u = tf.random.stateless_uniform([70001], seed=[1, 2]).numpy()
    near(u[[0, 65535, 65536, 65537, 70000]], [0.8440604209899902, 0.3679924011230469, 0.8930950164794922,
                                                   0.009541034698486328, 0.1908280849456787])
    assert float(u.astype(np.float64).sum()) == 35025.29294192791
    g = tf.random.Generator.from_seed(5).uniform([70001]).numpy()
    near(g[[65536, 70000]], [0.49120044708251953, 0.6937010288238525])
    n = tf.random.stateless_normal([70001], seed=[3, 4]).numpy()
    near(n[[65536, 70000]], [-0.8782331943511963, -0.07383469492197037])
