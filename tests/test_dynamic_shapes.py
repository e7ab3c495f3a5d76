"""Unknown (None) dims in traced graphs: shape ops that return or take shape
tensors, and gradients that compute shapes at run time.

Every traced function here has an ``input_signature`` with None dims; the
static shapes and values are pinned against TF 2.21's.
"""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.graph import function as function_mod
from tapeflow.graph.graph import SymbolicTensor
from tapeflow.ops import shape_ops

F64 = tf.float64


@pytest.fixture(autouse=True)
def _no_per_shape_fallback(monkeypatch):
    # tf.function retraces per concrete shape when a trace with None dims
    # fails; here every trace with None dims must succeed on its own.
    monkeypatch.setattr(function_mod, "_SHAPE_ERRORS", ())


def _spec(*dims, dtype=F64):
    return tf.TensorSpec(list(dims), dtype)


def _traced(fn, *specs):
    return tf.function(fn, input_signature=list(specs))


# ----------------------------------------------------------------------------
# tf.shape / tf.size / tf.rank
# ----------------------------------------------------------------------------

def test_shape_size_rank_are_symbolic_ops_when_a_dim_is_unknown():
    seen = {}

    def f(x):
        seen["shape"], seen["size"], seen["rank"] = tf.shape(x), tf.size(x), tf.rank(x)
        return tf.shape(x), tf.size(x), tf.rank(x)

    s, n, r = _traced(f, _spec(None, 3, dtype=tf.float32))(tf.ones([5, 3]))
    assert isinstance(seen["shape"], SymbolicTensor) and seen["shape"].op.type == "Shape"
    assert seen["shape"].shape.as_list() == [2] and seen["shape"].dtype == tf.int32
    assert isinstance(seen["size"], SymbolicTensor) and seen["size"].shape.as_list() == []
    assert not isinstance(seen["rank"], SymbolicTensor)  # the rank is known: a constant
    assert s.numpy().tolist() == [5, 3] and s.dtype == tf.int32
    assert int(n) == 15 and int(r) == 2


def test_shape_of_a_fully_known_tensor_is_a_constant_even_in_a_graph():
    seen = {}

    def f(x):
        seen["s"] = tf.shape(x)
        return x

    _traced(f, _spec(2, 3))(tf.ones([2, 3], F64))
    assert not isinstance(seen["s"], SymbolicTensor)
    assert seen["s"].numpy().tolist() == [2, 3]


def test_shape_eager_values_and_out_type():
    x = tf.ones([2, 3])
    assert tf.shape(x).numpy().tolist() == [2, 3] and tf.shape(x).dtype == tf.int32
    assert tf.shape(x, out_type=tf.int64).dtype == tf.int64
    assert int(tf.size(x)) == 6 and int(tf.rank(x)) == 2
    with pytest.raises(InvalidArgumentError, match="out_type"):
        tf.shape(x, out_type=tf.float32)


def test_shape_int64_in_graph():
    f = _traced(lambda x: tf.shape(x, out_type=tf.int64), _spec(None, None))
    out = f(tf.ones([4, 2], F64))
    assert out.dtype == tf.int64 and out.numpy().tolist() == [4, 2]


# ----------------------------------------------------------------------------
# Shape tensors as arguments: static shapes as TF infers them, run-time values
# ----------------------------------------------------------------------------

def test_reshape_with_a_shape_built_from_tf_shape():
    seen = {}

    def f(x):
        r = tf.reshape(x, [tf.shape(x)[0], 3, 1])
        seen["r"], seen["flat"] = r.shape.as_list(), tf.reshape(x, [-1]).shape.as_list()
        return r

    x = np.arange(15.0).reshape(5, 3)
    out = _traced(f, _spec(None, 3))(tf.constant(x))
    assert seen == {"r": [None, 3, 1], "flat": [None]}
    np.testing.assert_array_equal(out.numpy(), x.reshape(5, 3, 1))


def test_reshape_to_a_shape_tensor_of_two_unknown_dims():
    f = _traced(lambda x: tf.reshape(x, tf.shape(x)[::-1]), _spec(None, None))
    x = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(f(tf.constant(x)).numpy(), x.reshape(3, 4))


def test_reshape_with_a_bad_run_time_shape_names_the_counts():
    f = _traced(lambda x: tf.reshape(x, [tf.shape(x)[0], 4]), _spec(None, 3))
    with pytest.raises(InvalidArgumentError, match="tensor with 6 values, but the requested shape has 8"):
        f(tf.ones([2, 3], F64))
    with pytest.raises(InvalidArgumentError, match="requires a multiple of 4"):
        shape_ops.dynamic_reshape(tf.ones([2, 3]), tf.constant([4, -1]))


def test_zeros_ones_fill_from_shape_tensors():
    seen = {}

    def f(x):
        z = tf.zeros(tf.shape(x))
        o = tf.ones([tf.shape(x)[0], 2], tf.int32)
        fl = tf.fill(tf.shape(x), 2.0)
        seen.update(z=(z.shape.as_list(), z.dtype), o=(o.shape.as_list(), o.dtype), fl=fl.shape.as_list())
        return z, o, fl

    z, o, fl = _traced(f, _spec(None, 3, dtype=tf.float32))(tf.ones([4, 3]))
    assert seen == {"z": ([None, 3], tf.float32), "o": ([None, 2], tf.int32), "fl": [None, 3]}
    assert z.numpy().tolist() == [[0.0] * 3] * 4 and o.numpy().tolist() == [[1, 1]] * 4
    assert fl.numpy().tolist() == [[2.0] * 3] * 4


def test_broadcast_to_a_shape_tensor():
    seen = {}

    def f(x):
        b = tf.broadcast_to(x[:, :1], tf.shape(x))
        seen["b"] = b.shape.as_list()
        return b

    x = np.arange(6.0).reshape(2, 3)
    out = _traced(f, _spec(None, 3))(tf.constant(x))
    assert seen["b"] == [None, 3]
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(x[:, :1], (2, 3)))


def test_tile_with_static_and_dynamic_multiples():
    seen = {}

    def f(x):
        a = tf.tile(x, [2, 1])
        b = tf.tile(x, tf.stack([tf.shape(x)[0], 1]))
        seen["a"], seen["b"] = a.shape.as_list(), b.shape.as_list()
        return a, b

    x = np.arange(6.0).reshape(2, 3)
    a, b = _traced(f, _spec(None, 3))(tf.constant(x))
    assert seen == {"a": [None, 3], "b": [None, 3]}
    np.testing.assert_array_equal(a.numpy(), np.tile(x, [2, 1]))
    np.testing.assert_array_equal(b.numpy(), np.tile(x, [2, 1]))


def test_expand_dims_and_squeeze_with_several_unknown_dims():
    seen = {}

    def f(x):
        e = tf.expand_dims(x, 1)
        s = tf.squeeze(e, 1)
        seen["e"], seen["s"] = e.shape.as_list(), s.shape.as_list()
        return e, s

    x = np.arange(6.0).reshape(2, 3)
    e, s = _traced(f, _spec(None, None))(tf.constant(x))
    assert seen == {"e": [None, 1, None], "s": [None, None]}
    assert e.shape.as_list() == [2, 1, 3]
    np.testing.assert_array_equal(s.numpy(), x)


def test_concat_and_split_with_unknown_dims():
    seen = {}

    def f(x):
        c0, c1 = tf.concat([x, x], 0), tf.concat([x, x], 1)
        halves = tf.split(x, 2, axis=0)
        parts = tf.split(x, [1, -1], axis=0)
        sized = tf.split(x, [1, 2], axis=1)
        seen.update(c0=c0.shape.as_list(), c1=c1.shape.as_list(), halves=[h.shape.as_list() for h in halves],
                    sized=[p.shape.as_list() for p in sized])
        return halves + parts

    x = np.arange(12.0).reshape(4, 3)
    h0, h1, p0, p1 = _traced(f, _spec(None, 3))(tf.constant(x))
    assert seen == {"c0": [None, 3], "c1": [None, 6], "halves": [[None, 3]] * 2, "sized": [[None, 1], [None, 2]]}
    np.testing.assert_array_equal(h1.numpy(), x[2:])
    np.testing.assert_array_equal(p1.numpy(), x[1:])
    with pytest.raises(InvalidArgumentError, match="evenly divide"):
        _traced(lambda v: tf.split(v, 2, axis=0), _spec(None, 3))(tf.ones([3, 3], F64))


def test_slice_static_shapes_keep_the_known_dims():
    seen = {}

    def f(x):
        seen.update(a=x[:1].shape.as_list(), b=x[1:, 1:].shape.as_list(), c=x[:, 0].shape.as_list(),
                    d=x[..., None].shape.as_list(), e=x[:, ::2].shape.as_list())
        return x[1:, 1:]

    out = _traced(f, _spec(None, 3))(tf.constant(np.arange(9.0).reshape(3, 3)))
    assert seen == {"a": [None, 3], "b": [None, 2], "c": [None], "d": [None, 3, 1], "e": [None, 2]}
    assert out.numpy().tolist() == [[4.0, 5.0], [7.0, 8.0]]


# ----------------------------------------------------------------------------
# Gradients with unknown dims: the traced gradient equals the eager one
# ----------------------------------------------------------------------------

_B = tf.constant(np.linspace(0.5, 1.5, 3))
_GRAD_CASES = {
    "sum_axis": lambda x: tf.reduce_sum(x * x, axis=1),
    "sum_keepdims": lambda x: tf.reduce_sum(x * x, axis=[0, 2], keepdims=True) * 2.0,
    "mean": lambda x: tf.reduce_mean(x * x, axis=[0, 2]),
    "mean_all": lambda x: tf.reduce_mean(x * x),
    "max": lambda x: tf.reduce_max(x, axis=1),
    "min": lambda x: tf.reduce_min(x, axis=0),
    "prod": lambda x: tf.reduce_prod(x, axis=1),
    "prod_batch": lambda x: tf.reduce_prod(x, axis=0),
    "reshape": lambda x: tf.reshape(x, [-1, 9]) ** 2,
    "expand_squeeze": lambda x: tf.squeeze(tf.expand_dims(x, 1) * 2.0, 1) ** 2,
    "slice": lambda x: x[1:, :2] ** 2,
    "slice_index": lambda x: x[:, 0] ** 2,
    "tile": lambda x: tf.tile(x, [2, 1, 3]) ** 2,
    "concat_batch": lambda x: tf.concat([x, x * 2.0], 0) ** 2,
    "split": lambda x: tf.split(x, [1, 2], axis=1)[1] * 3.0,
    "split_batch": lambda x: tf.split(x, [1, -1], axis=0)[1] ** 2,
    "gather_rows": lambda x: tf.gather(x, [0, 0, 1]) ** 2,
    "gather_axis1": lambda x: tf.gather(x, [2, 0], axis=1) ** 2,
    "gather_batch_dims": lambda x: tf.gather(x, tf.cast(x[:, :2, 0] * 2.0, tf.int32), axis=1, batch_dims=1) ** 2,
    "gather_of_rows": lambda x: tf.gather(x[:, 0], [2, 0], axis=1) ** 2,
    "add_bias": lambda x: (x + _B) ** 2,
    "mul_row": lambda x: x * x[:1],  # both (None, 3, 3) statically; 1 vs n at run time
    "matmul_row": lambda x: tf.matmul(x, x[:1]),  # batch dims broadcast 1 vs n at run time
    "select_row": lambda x: tf.where(x > 1.0, x, x[:1] * 0.5),
    "segment_sum": lambda x:
    tf.math.unsorted_segment_sum(tf.transpose(x, [1, 0, 2]), [0, 1, 1], 2),
    "broadcast_to": lambda x: tf.broadcast_to(x[:, :1], tf.shape(x)) ** 2,
    "sub_mean": lambda x: (x - tf.reduce_mean(x, axis=0, keepdims=True)) ** 2,
}


def _grad_fn(fn):
    def g(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(fn(x)))  # a non-uniform weight per element
        return y, tf.convert_to_tensor(tape.gradient(y, x))

    return g


@pytest.mark.parametrize("name", sorted(_GRAD_CASES))
def test_traced_gradient_with_unknown_batch_matches_eager(name):
    g = _grad_fn(_GRAD_CASES[name])
    traced = _traced(g, _spec(None, 3, 3))
    rng = np.random.default_rng(3)
    for n in (4, 2):
        x = tf.constant(rng.uniform(0.5, 1.5, (n, 3, 3)))
        y_e, g_e = g(x)
        y_t, g_t = traced(x)
        np.testing.assert_allclose(y_t.numpy(), y_e.numpy(), rtol=1e-12)
        np.testing.assert_allclose(g_t.numpy(), g_e.numpy(), rtol=1e-12)
    assert traced.experimental_get_tracing_count() == 1


def test_traced_gradient_with_all_dims_unknown():
    g = _grad_fn(lambda x: tf.reduce_max(tf.reshape(x, [-1, 3]), axis=0) + tf.reduce_mean(x[:, 1:] ** 2))
    traced = _traced(g, _spec(None, None, 3))
    x = tf.constant(np.random.default_rng(1).uniform(size=(2, 5, 3)))
    np.testing.assert_allclose(traced(x)[1].numpy(), g(x)[1].numpy(), rtol=1e-12)


def test_gather_gradients_with_every_dim_unknown():
    def f(x):
        picked = tf.gather(x, tf.cast(x[:, :2] * 2.0, tf.int32), axis=1, batch_dims=1)
        return tf.gather(x, [0, 2], axis=1) ** 2, tf.gather(x, [1, 1, 0]) * 3.0, picked ** 2

    g = _grad_fn(lambda x: tf.concat([tf.reshape(t, [-1]) for t in f(x)], 0))
    x = tf.constant(np.random.default_rng(6).uniform(0.5, 1.4, (3, 4)))
    np.testing.assert_allclose(_traced(g, _spec(None, None))(x)[1].numpy(), g(x)[1].numpy(), rtol=1e-12)


def test_second_order_gradient_with_unknown_batch():
    def hvp(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.reduce_mean(x, axis=0) ** 3) + tf.reduce_sum(x[:, :1] * x)
            gx = inner.gradient(y, x)
            s = tf.reduce_sum(gx * gx)
        return outer.gradient(s, x)

    x = tf.constant(np.random.default_rng(2).uniform(size=(3, 4)))
    np.testing.assert_allclose(_traced(hvp, _spec(None, 4))(x).numpy(), hvp(x).numpy(), rtol=1e-12)


def test_tf_gradients_with_unknown_batch():
    def f(x):
        y = tf.reduce_sum(tf.reduce_mean(x * x, axis=1))
        return tf.gradients(y, x)[0]

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(_traced(f, _spec(None, 3))(tf.constant(x)).numpy(), 2 * x / 3)


# ----------------------------------------------------------------------------
# nn ops used in training, traced with an unknown batch
# ----------------------------------------------------------------------------

_NN_CASES = {
    "softmax": lambda x: tf.nn.softmax(x) * x,
    "log_softmax": lambda x: tf.nn.log_softmax(x, axis=1),
    "softmax_xent": lambda x: tf.nn.softmax_cross_entropy_with_logits(tf.nn.softmax(x * 0.5), x),
    "softmax_xent_axis0": lambda x: tf.nn.softmax_cross_entropy_with_logits(tf.nn.softmax(x * 0.5, axis=0), x, axis=0),
    "sparse_xent": lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(
        tf.zeros(tf.shape(x)[:2], tf.int32), x),
    "bias_add": lambda x: tf.nn.bias_add(x, _B) ** 2,
    "moments": lambda x: tf.nn.moments(x, [0])[1],
    "relu": lambda x: tf.nn.relu(x - 1.0),
    "max_pool": lambda x: tf.nn.max_pool2d(x[..., None], 2, 1, "VALID"),
    "conv2d": lambda x: tf.nn.conv2d(x[..., None], tf.ones([2, 2, 1, 2], F64), 1, "SAME"),
    "conv2d_transpose": lambda x: tf.nn.conv2d_transpose(
        x[..., None], tf.constant(np.linspace(0.1, 0.8, 8).reshape(2, 2, 2, 1)), [tf.shape(x)[0], 3, 3, 2], 1, "SAME"),
}


@pytest.mark.parametrize("name", sorted(_NN_CASES))
def test_traced_nn_gradient_with_unknown_batch_matches_eager(name):
    g = _grad_fn(lambda x: tf.reduce_sum(_NN_CASES[name](x), axis=-1))
    traced = _traced(g, _spec(None, 3, 3))
    for n in (3, 1):
        x = tf.constant(np.random.default_rng(n).uniform(0.5, 1.5, (n, 3, 3)))
        np.testing.assert_allclose(traced(x)[1].numpy(), g(x)[1].numpy(), rtol=1e-10)


def test_dropout_gradient_with_unknown_batch_is_the_mask():
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.dropout(x, 0.5)
        return y, tape.gradient(y, x)

    y, g = _traced(f, _spec(None, 4))(tf.ones([6, 4], F64))
    np.testing.assert_array_equal(g.numpy(), y.numpy())  # x = 1: y is the scaled mask
    assert set(np.unique(g.numpy())) <= {0.0, 2.0}


# ----------------------------------------------------------------------------
# Goal: training steps traced once with an unknown batch, equal to eager
# ----------------------------------------------------------------------------

def _mlp_params():
    rng = np.random.default_rng(0)
    return [tf.Variable(rng.normal(0, 0.5, (4, 8)).astype(np.float32)), tf.Variable(np.zeros(8, np.float32)),
            tf.Variable(rng.normal(0, 0.5, (8, 3)).astype(np.float32)), tf.Variable(np.zeros(3, np.float32))]


def _mlp_step(params, lr=0.1):
    w1, b1, w2, b2 = params

    def step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
            logits = tf.nn.bias_add(tf.matmul(h, w2), b2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, params)
        for v, gv in zip(params, grads):
            v.assign_sub(lr * gv)
        return loss

    return step


def _cnn_params():
    rng = np.random.default_rng(1)
    return [tf.Variable(rng.normal(0, 0.3, (3, 3, 1, 4)).astype(np.float32)),
            tf.Variable(rng.normal(0, 0.3, (16, 3)).astype(np.float32)), tf.Variable(np.zeros(3, np.float32))]


def _cnn_step(params, lr=0.05):
    k, w, b = params

    def step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.nn.conv2d(x, k, 1, "SAME"))
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.reshape(h, [-1, 16])
            logits = tf.matmul(h, w) + b
            onehot = tf.one_hot(y, 3)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(onehot, logits))
        grads = tape.gradient(loss, params)
        for v, gv in zip(params, grads):
            v.assign_sub(lr * gv)
        return loss

    return step


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_training_step_traced_once_with_unknown_batch_matches_eager(model):
    make, step_of = (_mlp_params, _mlp_step) if model == "mlp" else (_cnn_params, _cnn_step)
    x_shape = (4,) if model == "mlp" else (4, 4, 1)
    eager_params, graph_params = make(), make()
    eager_step = step_of(eager_params)
    graph_step = tf.function(step_of(graph_params), input_signature=[
        tf.TensorSpec([None, *x_shape], tf.float32), tf.TensorSpec([None], tf.int32)])
    rng = np.random.default_rng(5)
    for n in (8, 13, 8):
        x = tf.constant(rng.normal(size=(n, *x_shape)).astype(np.float32))
        y = tf.constant(rng.integers(0, 3, n).astype(np.int32))
        loss_e, loss_g = eager_step(x, y), graph_step(x, y)
        np.testing.assert_allclose(loss_g.numpy(), loss_e.numpy(), rtol=1e-5)
        for ve, vg in zip(eager_params, graph_params):
            np.testing.assert_allclose(vg.numpy(), ve.numpy(), rtol=1e-5, atol=1e-6)
    assert graph_step.experimental_get_tracing_count() == 1


# ----------------------------------------------------------------------------
# The dynamic ops themselves, eagerly
# ----------------------------------------------------------------------------

def test_dynamic_ops_eager_values():
    x = tf.constant(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(shape_ops.dynamic_tile(x, tf.constant([1, 2])).numpy(),
                                  np.tile(x.numpy(), [1, 2]))
    assert shape_ops.dynamic_fill(tf.constant([2]), tf.constant(7)).numpy().tolist() == [7, 7]
    np.testing.assert_array_equal(shape_ops.sum_to_shape(x, tf.constant([1, 3])).numpy(), [[3.0, 5.0, 7.0]])
    a, b = shape_ops.dynamic_split(x, tf.constant([2, -1]), 1, 2)
    assert a.shape.as_list() == [2, 2] and b.shape.as_list() == [2, 1]


def test_dynamic_ops_bad_input_errors():
    x = tf.ones([2, 3])
    with pytest.raises(InvalidArgumentError, match="Unable to broadcast tensor of shape \\[2, 3\\]"):
        shape_ops.dynamic_broadcast_to(x, tf.constant([4, 3]))
    with pytest.raises(InvalidArgumentError, match="multiples argument to be a vector of length 2"):
        shape_ops.dynamic_tile(x, tf.constant([2]))
    with pytest.raises(InvalidArgumentError, match="Determined shape must"):
        shape_ops.dynamic_split(x, tf.constant([1, 1]), 1, 2)
    with pytest.raises(InvalidArgumentError, match="cannot be summed back"):
        shape_ops.sum_to_shape(x, tf.constant([2, 2]))
    with pytest.raises(TypeError, match="int32 or int64"):
        shape_ops.dynamic_reshape(x, tf.constant([3.0, 2.0]))


# ----------------------------------------------------------------------------
# Batching rules (vectorized jacobians): each equals running the op row by row
# ----------------------------------------------------------------------------

def _i32(v):
    return tf.constant(np.asarray(v, np.int32))


_BATCH_CASES = {
    "Shape": (lambda x: shape_ops.execute(shape_ops.SHAPE, (x,), {"out_type": np.dtype(np.int32)}), (3, 4)),
    "Size": (lambda x: shape_ops.execute(shape_ops.SIZE, (x,), {"out_type": np.dtype(np.int32)}), (3, 4)),
    "Rank": (lambda x: shape_ops.execute(shape_ops.RANK, (x,)), (3, 4)),
    "DynamicReshape": (lambda x: shape_ops.dynamic_reshape(x, _i32([2, -1])), (3, 4)),
    "DynamicBroadcastTo": (lambda x: shape_ops.dynamic_broadcast_to(x, _i32([2, 3, 4])), (3, 1)),
    "DynamicTile": (lambda x: shape_ops.dynamic_tile(x, _i32([2, 1])), (3, 4)),
    "DynamicFill": (lambda v: shape_ops.dynamic_fill(_i32([2, 3]), v), ()),
    "DynamicSplitV": (lambda x: shape_ops.dynamic_split(x, _i32([1, 3]), 1, 2)[1], (3, 4)),
    "SumToShape": (lambda x: shape_ops.sum_to_shape(x, _i32([1, 4])), (2, 3, 4)),
    "DynamicGatherGrad": (lambda x: shape_ops.gather_grad(x, _i32([[2, 0], [1, 2]]), tf.zeros((2, 3, 4), F64), 1, 1),
                          (2, 2, 4)),
    "DynamicStridedSliceGrad": (lambda x: shape_ops.strided_slice_grad(
        x, tf.zeros((3, 4), F64), (3, 4), (("s", 1, None, None),)), (2, 4)),
}


@pytest.mark.parametrize("name", sorted(_BATCH_CASES))
def test_batching_rule_matches_per_row(name, recwarn):
    from tapeflow.eager.batching import BatchInterpreter

    fn, shape = _BATCH_CASES[name]
    phys = tf.constant(np.random.default_rng(0).uniform(size=(5, *shape)))
    with BatchInterpreter(5) as interp:
        out = fn(interp.wrap(phys))
        got = out._phys.numpy()
    rows = np.stack([fn(phys[i]).numpy() for i in range(5)])
    np.testing.assert_allclose(got, rows)
    assert not [w for w in recwarn if "no batching rule" in str(w.message)]


def test_range_with_a_run_time_bound():
    seen = {}

    def f(x):
        r = tf.range(tf.shape(x)[0])
        r2 = tf.range(1, tf.shape(x)[0], 2)
        r3 = tf.range(tf.cast(tf.shape(x)[0], tf.float32))
        seen.update(r=(r.shape.as_list(), r.dtype), r3=r3.dtype)
        return r, r2, r3

    r, r2, r3 = _traced(f, _spec(None))(tf.ones([5], F64))
    assert seen == {"r": ([None], tf.int32), "r3": tf.float32}
    assert r.numpy().tolist() == [0, 1, 2, 3, 4] and r2.numpy().tolist() == [1, 3]
    assert r3.numpy().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and r3.dtype == tf.float32


def test_outer_tape_through_a_function_with_unknown_batch():
    f = _traced(lambda x: tf.reduce_sum(tf.reduce_max(x, 1) ** 2) + tf.reduce_sum(tf.sin(x + _B)), _spec(None, 3))
    x = tf.constant(np.random.default_rng(4).uniform(size=(4, 3)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        y2 = f.python_function(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), tape2.gradient(y2, x).numpy(), rtol=1e-12)


def test_outer_tape_through_a_function_where_equal_unknown_dims_broadcast():
    # (None, 2) * (None, 2) that broadcasts 1 vs n at run time, in a backward function.
    f = _traced(lambda x: tf.reduce_sum(x[:, 1:] * x[:1, :2]), _spec(None, 3))
    x = tf.constant(np.random.default_rng(4).uniform(size=(4, 3)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        y2 = f.python_function(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), tape2.gradient(y2, x).numpy(), rtol=1e-12)


def test_while_loop_gradient_where_equal_unknown_dims_broadcast():
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            _, z = tf.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, tf.sin(z) + x[:1]), [tf.constant(0), x])
            y = tf.reduce_sum(z)
        return tape.gradient(y, x)

    traced = _traced(f, _spec(None, 3))
    for n in (4, 1):
        x = tf.constant(np.random.default_rng(n).uniform(0.5, 1.5, (n, 3)))
        np.testing.assert_allclose(traced(x).numpy(), f(x).numpy(), rtol=1e-12)


def test_eye_with_run_time_sizes():
    seen = {}

    def f(x):
        e = tf.eye(tf.shape(x)[0])
        e2 = tf.eye(tf.shape(x)[0], 3, dtype=tf.int32)
        e3 = tf.eye(2, batch_shape=tf.shape(x)[:1])
        seen.update(e=e.shape.as_list(), e2=(e2.shape.as_list(), e2.dtype), e3=e3.shape.as_list())
        return e, e2, e3

    e, e2, e3 = _traced(f, _spec(None, None, dtype=tf.float32))(tf.ones([2, 4]))
    assert seen == {"e": [None, None], "e2": ([None, 3], tf.int32), "e3": [None, 2, 2]}
    assert e.numpy().tolist() == [[1.0, 0.0], [0.0, 1.0]] and e.dtype == tf.float32
    assert e2.numpy().tolist() == [[1, 0, 0], [0, 1, 0]]
    np.testing.assert_array_equal(e3.numpy(), np.broadcast_to(np.eye(2), (2, 2, 2)))


def test_shape_ops_docstring_examples_run():
    import doctest

    assert doctest.testmod(shape_ops, extraglobs={"tf": tf}).failed == 0


def test_output_gradients_of_known_shape_for_a_target_with_unknown_dims():
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.gradient(y, x, output_gradients=tf.ones([2, 3], F64) * 2.0)

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(_traced(f, _spec(None, 3))(tf.constant(x)).numpy(), 4 * x)


def test_reduce_retracing_generalizes_to_unknown_dims_and_gradients_still_work():
    g = _grad_fn(lambda x: tf.reduce_max(tf.reshape(x, [-1, 3]), axis=0) * tf.reduce_mean(x[1:]))
    f = tf.function(g, reduce_retracing=True)
    rng = np.random.default_rng(8)
    for n in (4, 5, 6):
        x = tf.constant(rng.uniform(size=(n, 3)))
        np.testing.assert_allclose(f(x)[1].numpy(), g(x)[1].numpy(), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 2  # the second trace has shape (None, 3)


def test_slices_with_run_time_bounds_and_dynamic_pad():
    # pix2pix's load(): image[:, w:, :] with w = tf.shape(image)[1] // 2; tf.slice / tf.pad of run-time values
    @tf.function(input_signature=[tf.TensorSpec([None, None, 3]), tf.TensorSpec([2], tf.int32)])
    def f(image, off):
        w = tf.shape(image)[1] // 2
        return (image[:, w:, :], image[:, :w, :], image[1:-1, -w:], tf.slice(image[..., 0], off, [2, -1]),
                tf.pad(image[..., 0], [[off[0], 1], [0, off[1]]], constant_values=9.0))

    x = np.arange(2 * 6 * 3, dtype=np.float32).reshape(2, 6, 3)
    a, b, c, s, p = f(x, tf.constant([0, 2]))
    np.testing.assert_array_equal(a, x[:, 3:])
    np.testing.assert_array_equal(b, x[:, :3])
    assert c.shape == (0, 3, 3)
    np.testing.assert_array_equal(s, x[:, 2:, 0])
    np.testing.assert_array_equal(p, np.pad(x[..., 0], [[0, 1], [0, 2]], constant_values=9.0))
    outs = f.get_concrete_function().structured_outputs
    assert [o.shape.as_list() for o in outs[:3]] == [[None, None, 3]] * 3
    assert outs[3].shape.as_list() == [2, None]
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        a, b, _, s, p = f(v, tf.constant([0, 2]))
        loss = tf.reduce_sum(a * 2) + tf.reduce_sum(b) + tf.reduce_sum(s) + tf.reduce_sum(p)
    g = tape.gradient(loss, v).numpy()
    expect = np.zeros_like(x)
    expect[:, 3:] += 2
    expect[:, :3] += 1
    expect[:, 2:, 0] += 1
    expect[..., 0] += 1
    np.testing.assert_array_equal(g, expect)


def test_reshape_of_a_tensor_of_unknown_rank_inside_tf_function():
    scalar = tf.function(lambda: tf.reshape(tf.numpy_function(lambda: np.float32(2.0), [], tf.float32), ()))
    assert float(scalar()) == 2.0 and scalar.get_concrete_function().structured_outputs.shape.as_list() == []
    mat = tf.function(lambda: tf.reshape(tf.numpy_function(lambda: np.ones((2, 3), np.float32), [], tf.float32),
                                         (3, -1)))
    assert mat().shape == (3, 2) and mat.get_concrete_function().structured_outputs.shape.as_list() == [3, None]
