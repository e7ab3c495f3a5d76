"""Keras input handling TF's tutorials rely on (1-D arrays, pandas, dicts, boolean masks,
summary() of preprocessing layers); numbers pinned against Keras 3.15 / TF 2.21."""

import warnings

import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras
pd = pytest.importorskip("pandas")


def _rs():
    return np.random.RandomState(0)


def test_fit_predict_evaluate_on_1d_arrays():
    rs = _rs()
    x1 = rs.rand(20).astype("float32")
    y1 = 2 * x1 + 1
    m = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.1), "mse")
    h = m.fit(x1, y1, epochs=2, batch_size=5, verbose=0, shuffle=False)
    np.testing.assert_allclose(h.history["loss"], [1.26788, 0.10533], atol=1e-5)
    np.testing.assert_allclose(m.predict(x1[:3], verbose=0).ravel(), [1.9902, 2.2711, 2.0813], atol=1e-4)
    assert m.evaluate(x1, y1, verbose=0) == pytest.approx(0.02123, abs=1e-5)
    i = keras.Input((1,))
    f = keras.Model(i, keras.layers.Dense(1, kernel_initializer="ones")(i))
    assert f.predict(np.ones(4, "float32"), verbose=0).shape == (4, 1)
    assert f(np.ones((4, 1, 1), "float32")).shape == (4, 1)  # a trailing axis of 1 is squeezed
    with pytest.raises(ValueError, match="Invalid input shape"):
        f(np.ones((4, 1, 2), "float32"))


def test_pandas_dataframe_and_series():
    rs = _rs()
    rs.rand(20)
    df = pd.DataFrame({"a": rs.rand(20), "b": rs.rand(20)})
    s = pd.Series(rs.rand(20))
    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="ones")])
    m.compile(keras.optimizers.SGD(0.1), "mse")
    h = m.fit(df, s, epochs=2, batch_size=5, verbose=0, shuffle=False, validation_split=0.2)
    np.testing.assert_allclose(h.history["val_loss"], [0.2261, 0.127], atol=1e-4)
    np.testing.assert_allclose(m.predict(df[:2], verbose=0).ravel(), [0.6893, 0.6345], atol=1e-4)
    assert m.evaluate(df, s, verbose=0) == pytest.approx(0.18533, abs=1e-5)
    t = tf.convert_to_tensor(df[:2])
    assert t.dtype == tf.float64 and t.shape == (2, 2)  # NumPy's dtype, as TF
    assert tf.convert_to_tensor(s[:2]).dtype == tf.float64


def test_dict_inputs_by_name():
    rs = _rs()
    ia, ib = keras.Input((2,), name="a"), keras.Input((1,), name="b")
    out = keras.layers.Dense(1, kernel_initializer="ones")(keras.layers.Concatenate()([ia, ib]))
    m = keras.Model({"a": ia, "b": ib}, out)
    m.compile(keras.optimizers.SGD(0.1), "mse")
    rs.rand(20)
    rs.rand(40)
    rs.rand(20)
    xa, xb, yy = rs.rand(10, 2).astype("float32"), rs.rand(10, 1).astype("float32"), rs.rand(10, 1).astype("float32")
    h = m.fit({"a": xa, "b": xb}, yy, epochs=2, batch_size=5, verbose=0, shuffle=False)
    assert len(h.history["loss"]) == 2 and h.history["loss"][1] < h.history["loss"][0]
    m2 = keras.Model([ia, ib], out)  # a dict for a list of Inputs goes by their names
    m2.compile(keras.optimizers.SGD(0.1), "mse")
    assert len(m2.fit({"a": xa, "b": xb}, yy, epochs=1, batch_size=5, verbose=0).history["loss"]) == 1


def test_plain_variables_in_a_model_subclass_are_not_weights_as_keras3():
    class M(keras.Model):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[1.0], [2.0]])
            self.b = tf.Variable(0.5)

        def call(self, x):
            return x @ self.w + self.b

    m = M()
    m(np.ones((1, 2), "float32"))
    assert (m.trainable_variables, m.weights) == ([], [])
    m.compile(keras.optimizers.SGD(0.1), "mse")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        h = m.fit(np.ones((4, 2), "float32"), np.zeros((4, 1), "float32"), epochs=2, verbose=0)
    assert any("does not have any trainable weights" in str(x.message) for x in w)
    assert h.history["loss"][0] == h.history["loss"][1] and m.w.numpy().ravel().tolist() == [1.0, 2.0]


def test_boolean_numpy_and_tensor_masks_index_like_boolean_mask():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert x[np.array([True, False, True])].numpy().tolist() == [[1.0, 2.0], [5.0, 6.0]]
    assert x[np.array([[True, False], [False, True], [True, True]])].numpy().tolist() == [1.0, 4.0, 5.0, 6.0]
    assert x[tf.constant([True, False, True])].numpy().tolist() == [[1.0, 2.0], [5.0, 6.0]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        x[[True, False, True]]  # a Python list of bools is not a mask in TF either
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.convert_to_tensor(v)[np.array([True, False, True])] ** 2)
    assert tape.gradient(y, v).numpy().tolist() == [2.0, 0.0, 6.0]


def _shapes(model):
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    return [row.split("│")[2].strip() for row in text.splitlines() if row.startswith("│")]


def test_summary_shapes_of_preprocessing_layers_as_keras():
    rs = _rs()
    norm = keras.layers.Normalization(axis=-1)
    norm.adapt(rs.rand(10, 9).astype("float32"))
    m = keras.Sequential([norm, keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
    assert _shapes(m) == ["(10, 9)", "?", "?"]  # adapt's shape; Dense layers not built yet
    df = pd.DataFrame(rs.rand(30, 9), columns=list("abcdefghi"))
    n1 = keras.layers.Normalization(axis=-1)
    n1.adapt(np.array(df))
    m1 = keras.Sequential([n1, keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])
    m1.predict(df[:10], verbose=0)
    assert _shapes(m1) == ["(10, 9)", "(10, 4)", "(10, 1)"]
    n2 = keras.layers.Normalization(axis=None)
    n2.adapt(df["a"].values)
    m2 = keras.Sequential([n2, keras.layers.Dense(1)])
    m2.compile("adam", "mse")
    m2.fit(df["a"], df["b"], epochs=1, verbose=0, validation_split=0.2)
    assert _shapes(m2) == ["(None, 1)", "(None, 1)"]


def test_model_inputs_cast_to_the_input_dtype_as_keras():
    # Keras 3's _convert_inputs_to_tensors: a uint8 image fed to a float32 Input is cast first
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    i = keras.Input((4,))
    m = keras.Model(i, keras.layers.Dense(2, kernel_initializer="ones")(i))
    out = m(x)
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [[6.0, 6.0], [22.0, 22.0], [38.0, 38.0]])
    assert m.predict(x, verbose=0).dtype == np.float32
    i = keras.Input((2,))
    ident = keras.Model(i, i * 2)
    assert ident(np.array([[True, False]])).dtype == tf.float32
    assert ident(np.array([[1, 2]], dtype=np.int64)).dtype == tf.float32
    i = keras.Input((2,), dtype="float16")
    assert keras.Model(i, i + 1)(np.array([[1.5, 2.0]])).dtype == tf.float16
    i = keras.Input((2,), dtype="int32")
    assert keras.Model(i, keras.layers.Embedding(10, 3)(i))(np.array([[1.0, 2.0]])).dtype == tf.float32
    # a Sequential built on its first call casts to its first layer's compute dtype
    seq = keras.Sequential([keras.layers.Dense(2, kernel_initializer="ones")])
    assert seq(np.arange(8).reshape(2, 4)).dtype == tf.float32
    assert keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])(x[:2]).dtype == tf.float32
    assert keras.Sequential([keras.layers.Dense(2, dtype="float64")])(x.astype("float32")).dtype == tf.float64
    assert keras.Sequential([keras.layers.Embedding(10, 2)])(np.array([[1, 2]])).dtype == tf.float32
    lookup = keras.Sequential([keras.layers.IntegerLookup(vocabulary=[5, 6, 7])])
    got = lookup(np.array([[5, 7, 9]], dtype=np.int32))
    assert got.dtype == tf.int64
    np.testing.assert_array_equal(got.numpy(), [[1, 3, 0]])
    assert keras.Sequential([keras.layers.StringLookup(vocabulary=["a", "b"])])(
        tf.constant([["a", "c"]])).dtype == tf.int64
