"""Keras 3's variable paths and printed variables (values pinned from Keras 3.15 / TF 2.21): a weight's
``path`` is the scopes of the layers being built or called when it was created (``sequential/dense/kernel``),
its ``name`` the short name, and it prints as ``<Variable path=..., shape=..., dtype=..., value=...>``."""

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


@pytest.fixture(autouse=True)
def _fresh_names():
    tf.keras.backend.clear_session()


def paths(model):
    return [v.path for v in model.weights]


def test_sequential_prefixes_its_layers_however_it_is_built():
    m = tf.keras.Sequential([L.Dense(3, name="d1"), L.Dense(2)])
    m.build((None, 4))
    assert paths(m) == ["sequential/d1/kernel", "sequential/d1/bias", "sequential/dense/kernel",
                        "sequential/dense/bias"]
    assert [v.name for v in m.weights] == ["kernel", "bias", "kernel", "bias"]
    assert paths(tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(3)])) == [
        "sequential_1/dense_1/kernel", "sequential_1/dense_1/bias"]
    assert paths(tf.keras.Sequential([L.Dense(3, input_shape=(4,))])) == [
        "sequential_2/dense_2/kernel", "sequential_2/dense_2/bias"]
    m = tf.keras.Sequential([L.Dense(3)])
    m(tf.zeros((1, 4)))
    assert paths(m) == ["sequential_3/dense_3/kernel", "sequential_3/dense_3/bias"]


def test_functional_layers_built_outside_any_model_have_no_prefix():
    inp = tf.keras.Input((5, 4))
    x = L.LSTM(3, return_sequences=True)(inp)
    x = L.Bidirectional(L.GRU(2))(x)
    assert paths(tf.keras.Model(inp, x)) == [
        "lstm/lstm_cell/kernel", "lstm/lstm_cell/recurrent_kernel", "lstm/lstm_cell/bias",
        "bidirectional/forward_gru/gru_cell/kernel", "bidirectional/forward_gru/gru_cell/recurrent_kernel",
        "bidirectional/forward_gru/gru_cell/bias", "bidirectional/backward_gru/gru_cell/kernel",
        "bidirectional/backward_gru/gru_cell/recurrent_kernel", "bidirectional/backward_gru/gru_cell/bias"]
    inp = tf.keras.Input((5, 4))
    m = tf.keras.Model(inp, L.MultiHeadAttention(2, 3)(inp, inp))
    assert paths(m) == [f"multi_head_attention/{p}/{w}" for p in ("query", "key", "value", "attention_output")
                        for w in ("kernel", "bias")]
    inner = tf.keras.Sequential([L.Dense(3)], name="inner")
    inp = tf.keras.Input((4,))
    m = tf.keras.Model(inp, L.Dense(1)(inner(inp)), name="outer")
    assert paths(m) == ["inner/dense/kernel", "inner/dense/bias", "dense_1/kernel", "dense_1/bias"]


def test_subclassed_model_and_layer_built_in_build_or_init():
    class Block(L.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.d = L.Dense(2)
            self.w0 = self.add_weight(shape=(1,), name="w0")  # in __init__: no parent scope yet

        def build(self, shape):
            self.d.build(shape)  # explicitly, inside the block's build
            self.w = self.add_weight(shape=(1,), name="w")

        def call(self, x):
            return self.d(x) * self.w

    class M(tf.keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.b = Block()
            self.e = L.Dense(1)

        def call(self, x):
            return self.e(self.b(x))

    m = M()
    m(tf.zeros((1, 3)))
    assert paths(m) == ["block/w0", "m/block/w", "m/block/dense/kernel", "m/block/dense/bias", "m/dense_1/kernel",
                        "m/dense_1/bias"]
    td = tf.keras.Sequential([L.TimeDistributed(L.Dense(2)), L.Conv1D(2, 2), L.Embedding(5, 2)])
    td.build((None, 4, 3))
    assert paths(td) == ["sequential/time_distributed/dense_2/kernel", "sequential/time_distributed/dense_2/bias",
                         "sequential/conv1d/kernel", "sequential/conv1d/bias", "sequential/embedding/embeddings"]


def test_optimizer_and_metric_variables():
    m = tf.keras.Sequential([L.Dense(3)])
    m.build((None, 4))
    opt = tf.keras.optimizers.Adam()
    m.compile(opt, "mse")
    m.fit(np.zeros((2, 4), "float32"), np.zeros((2, 3), "float32"), verbose=0)
    assert [v.path for v in opt.variables] == [
        "adam/iteration", "adam/learning_rate", "adam/sequential_dense_kernel_momentum",
        "adam/sequential_dense_kernel_velocity", "adam/sequential_dense_bias_momentum",
        "adam/sequential_dense_bias_velocity"]
    assert opt.iterations.name == "iteration"
    assert [(v.name, v.path) for v in tf.keras.metrics.Mean().variables] == [("total", "mean/total"),
                                                                              ("count", "mean/count")]


def test_keras_variables_print_as_keras():
    layer = L.Layer()
    a = layer.add_weight(shape=(), initializer="ones", name="a")
    b = layer.add_weight(shape=(), dtype="int32", initializer="zeros", name="b")
    c = layer.add_weight(shape=(2,), initializer=tf.keras.initializers.Constant(0.1), name="c")
    d = layer.add_weight(shape=(), initializer=tf.keras.initializers.Constant(0.1), name="d")
    assert repr(a) == "<Variable path=layer/a, shape=(), dtype=float32, value=1.0>"
    assert str(b) == "<Variable path=layer/b, shape=(), dtype=int32, value=0>"
    assert str(c) == "<Variable path=layer/c, shape=(2,), dtype=float32, value=[0.1 0.1]>"
    assert str(d) == "<Variable path=layer/d, shape=(), dtype=float32, value=0.10000000149011612>"
    e = L.Dense(2, kernel_initializer="ones")
    e.build((None, 3))
    assert str(e.kernel) == ("<Variable path=dense/kernel, shape=(3, 2), dtype=float32, "
                             "value=[[1. 1.]\n [1. 1.]\n [1. 1.]]>")
    assert repr(tf.keras.optimizers.Adam().learning_rate) == (
        "<Variable path=adam/learning_rate, shape=(), dtype=float32, value=0.0010000000474974513>")
    assert repr(tf.Variable(1.0)).startswith("<tf.Variable 'Variable:0' shape=()")  # plain tf.Variable unchanged


def test_add_weight_positional_arguments_as_keras_3():
    layer = L.Layer()
    w = layer.add_weight((2,), "ones", "float64", name="w")
    assert w.shape == (2,) and w.dtype == tf.float64 and w.numpy().tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match=r"`name` must be passed as a keyword argument. Received: "
                                         r"add_weight\('kernel', \.\.\.\)"):
        layer.add_weight("kernel", shape=[3, 2])
    with pytest.raises(ValueError, match="`shape` was passed both positionally and as a keyword argument."):
        layer.add_weight((2,), shape=(2,))
    with pytest.raises(TypeError, match="at most 3 positional arguments but 4 were given"):
        layer.add_weight((2,), "ones", "float32", True)


def test_an_empty_name_stays_empty():
    """``super().__init__(name='')`` as the custom-layers tutorial's ResnetIdentityBlock: Keras keeps ''."""
    d = L.Dense(2, name="")
    d.build((None, 3))
    assert d.name == "" and paths(d) == ["kernel", "bias"]
    assert tf.keras.Sequential(name="").name == ""
    inp = tf.keras.Input((3,))
    assert tf.keras.Model(inp, L.Dense(1)(inp), name="").name == ""
