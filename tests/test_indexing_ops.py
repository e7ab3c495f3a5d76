"""Array/indexing ops (tapeflow/ops/indexing_ops.py): values, gradients and
errors pinned against TensorFlow 2.21 (numbers below were printed by TF)."""

import numpy as np
import pytest

import tapeflow as tf

X = np.arange(12.0).reshape(3, 4)
W7 = np.arange(1.0, 50.0).reshape(7, 7)


def _grads(f, *xs):
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        for x in ts:
            tape.watch(x)
        y = f(*ts)
    return tape.gradient(y, ts)


def _dense(g):
    return tf.convert_to_tensor(g).numpy()


# -- pad -----------------------------------------------------------------------------

def test_pad_modes_match_tf():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(tf.pad(x, [[1, 1], [2, 2]], mode="reflect").numpy(), [
        [6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1], [6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1]])
    np.testing.assert_array_equal(tf.pad(x, [[1, 0], [0, 1]], constant_values=7).numpy(),
                                  [[7, 7, 7, 7], [1, 2, 3, 7], [4, 5, 6, 7]])
    np.testing.assert_array_equal(tf.pad(x, [[0, 0], [2, 1]], mode="SYMMETRIC").numpy(),
                                  [[2, 1, 1, 2, 3, 3], [5, 4, 4, 5, 6, 6]])
    assert tf.pad(tf.constant([1, 2]), [[1, 1]]).dtype == tf.int32


def test_pad_gradients_match_tf():
    g = _grads(lambda x: tf.reduce_sum(tf.pad(x, [[2, 2], [1, 2]], mode="REFLECT") * W7), X)[0]
    np.testing.assert_array_equal(_dense(g), [[60, 190, 132, 66], [69, 222, 156, 78], [32, 106, 76, 38]])
    g = _grads(lambda x: tf.reduce_sum(tf.pad(x, [[3, 1], [2, 1]], mode="SYMMETRIC") * W7), X)[0]
    np.testing.assert_array_equal(_dense(g), [[80, 80, 45, 96], [80, 80, 45, 96], [169, 169, 92, 193]])
    g = _grads(lambda x: tf.reduce_sum(tf.pad(x, [[1, 0], [0, 1]], constant_values=3.0) * W7[:4, :5]), X)[0]
    np.testing.assert_array_equal(_dense(g), [[8, 9, 10, 11], [15, 16, 17, 18], [22, 23, 24, 25]])


def test_pad_errors():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(ValueError, match='one of "CONSTANT", "REFLECT", or "SYMMETRIC". Received `mode` = FOO'):
        tf.pad(x, [[1, 1], [2, 2]], mode="FOO")
    with pytest.raises(tf.errors.InvalidArgumentError, match="paddings must be less than the dimension size: 2, 1"):
        tf.pad(x, [[2, 1], [0, 0]], mode="REFLECT")
    with pytest.raises(tf.errors.InvalidArgumentError, match="no greater than the dimension size: 3, 1"):
        tf.pad(x, [[3, 1], [0, 0]], mode="SYMMETRIC")
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        tf.pad(x, [[-1, 1], [0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be the rank of inputs"):
        tf.pad(x, [[1, 1]])


# -- gather_nd / scatter_nd ---------------------------------------------------------------

def test_gather_nd_values_match_tf():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(tf.gather_nd(x, [1]).numpy(), [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(tf.gather_nd(x, [[0, 2], [1, 0]]).numpy(), [3.0, 4.0])
    p = tf.reshape(tf.range(24.0), (2, 3, 4))
    out = tf.gather_nd(p, [[[1], [0]], [[2], [2]]], batch_dims=1).numpy()
    np.testing.assert_array_equal(out, [[[4, 5, 6, 7], [0, 1, 2, 3]], [[20, 21, 22, 23], [20, 21, 22, 23]]])


def test_gather_nd_gradients_match_tf():
    w = tf.constant([1.0, 2.0, 3.0], tf.float64)
    g = _grads(lambda x: tf.reduce_sum(tf.gather_nd(x, [[0, 1], [2, 3], [0, 1]]) * w), X)[0]
    assert isinstance(g, tf.Tensor)
    np.testing.assert_array_equal(g.numpy(), [[0, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]])
    # Whole-row indices give a sparse gradient, as TF.
    g = _grads(lambda x: tf.reduce_sum(tf.gather_nd(x, [[2], [0]])), X)[0]
    assert isinstance(g, tf.IndexedSlices)
    np.testing.assert_array_equal(_dense(g), [[1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]])


def test_gather_nd_out_of_range():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[2, 0\] does not index into param "
                                                             r"shape \[2, 3\]"):
        tf.gather_nd(x, [[2, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index"):
        tf.gather_nd(x, [[-1, 0]])


def test_scatter_nd_adds_duplicates():
    np.testing.assert_array_equal(tf.scatter_nd([[1], [3], [1]], [1.0, 2.0, 3.0], [5]).numpy(), [0, 4, 0, 2, 0])
    g = _grads(lambda u: tf.reduce_sum(tf.scatter_nd([[1], [3], [1]], u, [5]) *
                                       tf.constant([1.0, 2.0, 3.0, 4.0, 5.0], tf.float64)), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g[0].numpy(), [2.0, 4.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[7\] does not index"):
        tf.scatter_nd([[7]], [1.0], [5])
    with pytest.raises(tf.errors.InvalidArgumentError, match="updates must have shape"):
        tf.scatter_nd([[1]], [1.0, 2.0], [5])


def test_tensor_scatter_family_matches_tf():
    np.testing.assert_array_equal(tf.tensor_scatter_nd_update(tf.zeros(4), [[1], [1]], [1.0, 2.0]).numpy(),
                                  [0, 2, 0, 0])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_max(tf.ones(4), [[1], [1], [2]], [3.0, 2.0, 0.0]).numpy(),
                                  [1, 3, 1, 1])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_min(tf.ones(4), [[1], [2]], [3.0, 0.0]).numpy(),
                                  [1, 1, 0, 1])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_add(tf.ones(4), [[1], [1]], [3.0, 2.0]).numpy(),
                                  [1, 6, 1, 1])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_sub(tf.ones(4), [[3]], [3.0]).numpy(), [1, 1, 1, -2])


def test_tensor_scatter_gradients_match_tf():
    w = tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)
    ga, gu = _grads(lambda a, u: tf.reduce_sum(tf.tensor_scatter_nd_max(a, [[1], [1], [2]], u) * w),
                    np.ones(4), np.array([3.0, 3.0, 1.0]))
    np.testing.assert_array_equal(ga.numpy(), [1.0, 0.0, 1.5, 4.0])
    np.testing.assert_array_equal(gu.numpy(), [1.0, 1.0, 1.5])
    ga, gu = _grads(lambda a, u: tf.reduce_sum(tf.tensor_scatter_nd_update(a, [[1], [2]], u) * w),
                    np.ones(4), np.array([3.0, 3.0]))
    np.testing.assert_array_equal(ga.numpy(), [1.0, 0.0, 0.0, 4.0])
    np.testing.assert_array_equal(gu.numpy(), [2.0, 3.0])


# -- boolean_mask, one_hot, reverse, roll, repeat, meshgrid ----------------------------

def test_boolean_mask_matches_tf():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(tf.boolean_mask(x, [True, False]).numpy(), [[1, 2, 3]])
    np.testing.assert_array_equal(tf.boolean_mask(x, [True, False, True], axis=1).numpy(), [[1, 3], [4, 6]])
    np.testing.assert_array_equal(tf.boolean_mask(x, [[True, False, True], [False, True, False]]).numpy(),
                                  [1, 3, 5])
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \(3,\) are incompatible"):
        tf.boolean_mask(x, [True, False, True])
    g = _grads(lambda x: tf.reduce_sum(tf.boolean_mask(x, [True, False, True])), X)[0]
    assert isinstance(g, tf.Tensor)
    np.testing.assert_array_equal(g.numpy(), [[1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]])


def test_one_hot_matches_tf():
    out = tf.one_hot([0, 2, -1, 5], 3)
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    out = tf.one_hot([0, 2], 3, on_value=5, off_value=-1, axis=0)
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), [[5, -1], [-1, -1], [-1, 5]])
    assert tf.one_hot([0, 2], 3, dtype=tf.int64).dtype == tf.int64
    with pytest.raises(TypeError, match="does not match dtype parameter"):
        tf.one_hot([0, 2], 3, on_value=1.0, dtype=tf.int32)


def test_reverse_roll_match_tf():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(tf.reverse(x, [1]).numpy(), [[3, 2, 1], [6, 5, 4]])
    np.testing.assert_array_equal(tf.roll(x, [1, -1], [0, 1]).numpy(), [[5, 6, 4], [2, 3, 1]])
    np.testing.assert_array_equal(tf.roll(x, [1, 1], [1, 1]).numpy(), [[2, 3, 1], [5, 6, 4]])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.reverse(x, [2])
    g = _grads(lambda x: tf.reduce_sum(tf.roll(x, 1, 0) * tf.constant(W7[:3, :4])), X)[0]
    np.testing.assert_array_equal(g.numpy(), [[8, 9, 10, 11], [15, 16, 17, 18], [1, 2, 3, 4]])


def test_repeat_matches_tf():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(tf.repeat(x, [1, 2], axis=0).numpy(), [[1, 2, 3], [4, 5, 6], [4, 5, 6]])
    np.testing.assert_array_equal(tf.repeat(x, 2).numpy(), [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6])
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        tf.repeat(x, [1, 2, 3], axis=0)
    g = _grads(lambda x: tf.reduce_sum(tf.repeat(x, [1, 0, 3], axis=0) * 2.0), X)[0]
    assert isinstance(g, tf.Tensor)  # dense, as TF
    np.testing.assert_array_equal(g.numpy(), [[2, 2, 2, 2], [0, 0, 0, 0], [6, 6, 6, 6]])


def test_meshgrid_matches_tf():
    a, b = tf.meshgrid([1, 2, 3], [4, 5])
    np.testing.assert_array_equal(a.numpy(), [[1, 2, 3], [1, 2, 3]])
    np.testing.assert_array_equal(b.numpy(), [[4, 4, 4], [5, 5, 5]])
    a, b = tf.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    np.testing.assert_array_equal(a.numpy(), [[1, 1], [2, 2], [3, 3]])
    np.testing.assert_array_equal(b.numpy(), [[4, 5], [4, 5], [4, 5]])
    ga, gb = _grads(lambda a, b: tf.reduce_sum(tf.meshgrid(a, b)[0] * tf.meshgrid(a, b)[1]),
                    np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0]))
    np.testing.assert_array_equal(ga.numpy(), [9, 9, 9])
    np.testing.assert_array_equal(gb.numpy(), [6, 6])


# -- einsum, tensordot ---------------------------------------------------------------

def test_einsum_forms_match_tf():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(tf.einsum("ij,jk", x, tf.ones((3, 2))).numpy(), [[6, 6], [15, 15]])
    np.testing.assert_array_equal(tf.einsum("ba", x).numpy(), [[1, 4], [2, 5], [3, 6]])  # implicit: sorted
    np.testing.assert_array_equal(tf.einsum("ii->i", tf.ones((3, 3))).numpy(), [1, 1, 1])
    assert tf.einsum("...ij,...jk->...ik", tf.ones((2, 1, 2, 3)), tf.ones((5, 3, 4))).shape == (2, 5, 2, 4)
    out = tf.einsum("i,i->", tf.constant([1, 2]), tf.constant([3, 4]))
    assert out.dtype == tf.int32 and int(out) == 11
    np.testing.assert_allclose(tf.einsum("ij,jk,kl->il", x, tf.ones((3, 2)), tf.ones((2, 2))).numpy(),
                               [[12, 12], [30, 30]])


def test_einsum_gradients_match_tf():
    ga, gb = _grads(lambda a, b: tf.reduce_sum(tf.einsum("ij,jk->ik", a, b) ** 2),
                    np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4) / 10)
    np.testing.assert_allclose(ga.numpy(), [[3.24, 11.08, 18.92], [10.08, 33.76, 57.44]], rtol=1e-14)
    np.testing.assert_allclose(gb.numpy()[0], [33.6, 40.8, 48.0, 55.2], rtol=1e-14)
    g = _grads(lambda a: tf.reduce_sum(tf.einsum("ii->i", a) * tf.constant([1.0, 2.0, 3.0], tf.float64)),
               np.ones((3, 3)))[0]
    np.testing.assert_array_equal(g.numpy(), np.diag([1.0, 2.0, 3.0]))
    ga, gb = _grads(lambda a, b: tf.reduce_sum(tf.einsum("...ij,...jk->...ik", a, b)),
                    np.ones((2, 1, 2, 3)), np.ones((5, 3, 4)))
    assert ga.shape == (2, 1, 2, 3) and gb.shape == (5, 3, 4)
    np.testing.assert_array_equal(ga.numpy(), np.full((2, 1, 2, 3), 20.0))
    np.testing.assert_array_equal(gb.numpy(), np.full((5, 3, 4), 4.0))


def test_einsum_invalid_equations():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(ValueError, match="label q not present"):
        tf.einsum("ij,jk->ikq", x, tf.ones((3, 2)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected dimension"):
        tf.einsum("ij,jk->ik", x, tf.ones((4, 2)))
    with pytest.raises(ValueError, match='Got 2 inputs for equation "ij->", expecting 1'):
        tf.einsum("ij->", x, x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="broadcasting dimension"):
        tf.einsum("...ij,...jk", tf.ones((2, 1, 2, 3)), tf.ones((5, 3, 4)))
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        tf.einsum("i1,j->ij", tf.ones(2), tf.ones(2))


def test_tensordot_matches_tf():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(tf.tensordot(x, tf.ones((3, 2)), 1).numpy(), [[6, 6], [15, 15]])
    assert tf.tensordot(tf.ones(2), tf.ones(3), 0).shape == (2, 3)
    assert tf.tensordot(tf.ones((2, 3, 4)), tf.ones((4, 3)), [[1, 2], [1, 0]]).shape == (2,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="size-incompatible"):
        tf.tensordot(tf.ones((2, 3)), tf.ones((4, 3)), [[1], [0]])
    ga, gb = _grads(lambda a, b: tf.reduce_sum(tf.tensordot(a, b, 1)), np.ones((2, 3)), np.ones((3, 2)))
    np.testing.assert_array_equal(ga.numpy(), np.full((2, 3), 2.0))


# -- unique, sequence_mask, where, shape/size/rank ----------------------------------------

def test_unique_first_seen_order():
    y, idx = tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    np.testing.assert_array_equal(y.numpy(), [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(idx.numpy(), [0, 0, 1, 2, 2, 2, 3, 4, 4])
    res = tf.unique(tf.constant([3.0, 1.0, 3.0]))
    np.testing.assert_array_equal(res.y.numpy(), [3.0, 1.0])
    np.testing.assert_array_equal(res.idx.numpy(), [0, 1, 0])
    assert res.idx.dtype == tf.int32


def test_sequence_mask_matches_tf():
    np.testing.assert_array_equal(tf.sequence_mask([1, 3, 2], 5).numpy(), [
        [True, False, False, False, False], [True, True, True, False, False], [True, True, False, False, False]])
    out = tf.sequence_mask([[1, 3], [2, 0]])
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy()[1], [[True, True, False], [False, False, False]])
    out = tf.sequence_mask([1, 3], dtype=tf.float32)
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [[1, 0, 0], [1, 1, 1]])


def test_where_one_argument_and_shape_ops():
    out = tf.where([[True, False], [True, True]])
    assert out.dtype == tf.int64
    np.testing.assert_array_equal(out.numpy(), [[0, 0], [1, 0], [1, 1]])
    x = tf.ones((2, 3))
    assert int(tf.size(x)) == 6 and tf.size(x).dtype == tf.int32
    assert int(tf.rank(x)) == 2 and tf.rank(x).dtype == tf.int32
    np.testing.assert_array_equal(tf.shape(x).numpy(), [2, 3])
    assert tf.shape(x).dtype == tf.int32


def test_float_indices_and_negative_repeats_as_tf():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tindices"):
        tf.one_hot(tf.constant([0.0, 1.0]), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tindices"):
        tf.gather_nd(tf.ones(3), [[0.5]])
    np.testing.assert_array_equal(tf.repeat(tf.ones(2), [-1, 1]).numpy(), [1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="specified more than once"):
        tf.reverse(tf.ones((2, 2)), [0, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into"):
        tf.tensor_scatter_nd_update(tf.zeros(4), [[5]], [1.0])
    assert [t.shape for t in tf.meshgrid([1, 2], [3, 4, 5], [6, 7, 8, 9])] == [(3, 2, 4)] * 3
    assert tf.one_hot([1], 0).shape == (1, 0)
    assert tf.einsum("Ab->bA", tf.ones((2, 3))).shape == (3, 2)
    assert tf.einsum("ij, jk -> ik", tf.ones((2, 3)), tf.ones((3, 4))).shape == (2, 4)


def test_shape_rules_accept_unknown_dims():
    # What tf.function tracing sees: dims may be None.
    from tapeflow.ops import indexing_ops as ix
    from tapeflow.ops import special_ops as sp

    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    assert ix.PADV2.shape([((None, 3), f32), ((), f32)], paddings=((1, 2), (0, 1))) == [((None, 4), f32)]
    assert ix.MIRROR_PAD.shape([((None, 3), f32)], paddings=((1, 1), (2, 2)), mode="REFLECT") == [((None, 7), f32)]
    assert ix.GATHER_ND.shape([((None, 5, 6), f32), ((None, 4, 2), i32)]) == [((None, 4, 6), f32)]
    assert ix.SCATTER_ND.shape([((None, 1), i32), ((None,), f32)], shape=(5,)) == [((5,), f32)]
    assert ix.ONE_HOT.shape([((None,), i32), ((), f32), ((), f32)], depth=3, axis=-1) == [((None, 3), f32)]
    assert ix.EINSUM.shape([((None, 3), f32), ((3, 4), f32)], equation="ij,jk->ik") == [((None, 4), f32)]
    assert sp.TOPK.shape([((None, 7), f32)], k=2, index_type=i32) == [((None, 2), f32), ((None, 2), i32)]
    assert sp.SEGMENT_SUM.shape([((None, 3), f32), ((None,), i32)]) == [((None, 3), f32)]
    assert sp.SEG_MAX.shape([((None, 3), f32), ((None,), i32)], num_segments=4) == [((4, 3), f32)]


def test_ops_and_gradients_under_tf_function_with_unknown_batch():
    x = tf.constant(np.arange(12.0).reshape(3, 4))
    ops = [
        lambda v: tf.einsum("ij,kj->ik", v, v),
        lambda v: tf.pad(v, [[1, 1], [2, 0]], mode="REFLECT"),
        lambda v: tf.gather_nd(v, [[0, 1], [2, 2]]),
        lambda v: tf.math.top_k(v, 2).values,
        lambda v: tf.math.segment_max(v, tf.constant([0, 0, 1])),
        lambda v: tf.boolean_mask(v, v[:, 0] > 3.0),
    ]
    def make(f):
        def loss_and_grad(v):
            with tf.GradientTape() as tape:
                tape.watch(v)
                y = tf.reduce_sum(f(v) ** 2)
            return y, tf.convert_to_tensor(tape.gradient(y, v))

        return loss_and_grad

    for f in ops:
        loss_and_grad = make(f)
        ye, ge = loss_and_grad(x)
        yg, gg = tf.function(loss_and_grad, input_signature=[tf.TensorSpec([None, 4], tf.float64)])(x)
        np.testing.assert_allclose(yg.numpy(), ye.numpy())
        np.testing.assert_allclose(gg.numpy(), ge.numpy())


def test_einsum_unknown_dim_broadcasting_against_one_gives_right_gradient():
    @tf.function(input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([1, 3])])
    def f(a, b):
        with tf.GradientTape() as t:
            t.watch(b)
            y = tf.reduce_sum(tf.einsum("ij,ij->ij", a, b))
        return t.gradient(y, b)

    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(f(a, np.ones((1, 3), np.float32)).numpy(), a.sum(0, keepdims=True))


def test_gather_out_of_range_error_is_tfs_eager_text():
    # TF 2.21's eager message: the first bad entry in row-major order, with its index
    prefix = "{{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
    for params, indices, want in [([0.0], [1], "indices[0] = 1 is not in [0, 1)"),
                                  ([[1.0, 2.0], [3.0, 4.0]], [0, 2, -1], "indices[1] = 2 is not in [0, 2)"),
                                  ([1.0, 2.0, 3.0], [[0, 5], [7, 1]], "indices[0,1] = 5 is not in [0, 3)")]:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            tf.gather(tf.constant(params), indices)
        assert str(e.value) == prefix + want + " [Op:GatherV2]"
