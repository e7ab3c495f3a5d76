"""A functional model's symbolic build leaves random layers' seed generators as they were (Keras's
StatelessScope), and MultiHeadAttention's dropout is a Dropout layer's (names and masks: TF 2.21 pinned)."""

import numpy as np

import tapeflow as tf

keras = tf.keras


def test_building_a_model_does_not_advance_a_random_layers_seed():
    x = np.arange(32, dtype="float32").reshape(2, 4, 4, 1)
    keras.utils.set_random_seed(1)
    eager = np.asarray(keras.layers.RandomFlip("horizontal")(x, training=True))
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((4, 4, 1)), keras.layers.RandomFlip("horizontal")])
    built = np.asarray(model(x, training=True))
    np.testing.assert_array_equal(built, eager)
    np.testing.assert_array_equal(built[:, 0, :, 0], [[3, 2, 1, 0], [16, 17, 18, 19]])  # TF 2.21


def test_a_build_keeps_assignments_to_variables_it_creates():
    class Counter(keras.layers.Layer):
        def build(self, shape):
            self.n = self.add_weight(shape=(), initializer="zeros", trainable=False)
            self.n.assign(5.0)

        def call(self, x):
            self.n.assign_add(1.0)
            return x

    outer = tf.Variable(0.0)

    class Bumps(keras.layers.Layer):
        def call(self, x):
            outer.assign_add(1.0)
            return x

    c = Counter()
    keras.Model(*(lambda i: (i, Bumps()(c(i))))(keras.Input((2,))))
    assert float(c.n) == 5.0 and float(outer) == 0.0  # the build's assign stays; the calls' are undone (Keras)


def test_multi_head_attention_dropout_is_a_dropout_layer():
    keras.backend.clear_session()
    keras.utils.set_random_seed(3)
    x = np.random.RandomState(0).rand(2, 5, 8).astype("float32")
    inp = keras.Input((5, 8))
    mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4, dropout=0.5)
    out = mha(inp, inp)
    out = keras.layers.Dropout(0.2)(out)
    out = keras.layers.Softmax()(out)
    model = keras.Model(inp, out)
    # its Softmax and Dropout take the auto-names "softmax" and "dropout", as in Keras 3
    assert [layer.name for layer in model.layers] == ["input_layer", "multi_head_attention", "dropout_1", "softmax_1"]
    np.testing.assert_allclose(float(np.sum(np.asarray(mha(x, x, training=True)) ** 2)), 6.2373137, rtol=1e-6)
    np.testing.assert_allclose(float(np.sum(np.asarray(model(x, training=True)) ** 3)), 0.17957188, rtol=1e-6)


def test_random_ops_keep_the_known_entries_of_a_stacked_shape():
    seen = []

    @tf.function
    def f(x):
        s = tf.stack([tf.shape(x)[0], 1, 1, 1])
        for y in (tf.random.stateless_uniform(s, [1, 2]), tf.random.uniform(s), tf.random.normal(s)):
            seen.append(tuple(y.shape))
        return x

    f.get_concrete_function(tf.TensorSpec([None]))
    assert seen == [(None, 1, 1, 1)] * 3  # as TF's constant_value_as_shape
    flip = keras.layers.RandomFlip("horizontal", seed=1)
    ds = tf.data.Dataset.from_tensor_slices(np.zeros((4, 8, 8, 1), "uint8")).batch(2).map(flip)
    assert ds.element_spec.shape.as_list() == [None, 8, 8, 1]


def test_random_ops_take_a_shape_of_symbolic_scalars():
    seen = []

    @tf.function
    def f(x):
        y = tf.random.normal((tf.shape(x)[0], 2), seed=3)
        seen.append((tuple(y.shape), tuple(tf.random.uniform([tf.shape(x)[0], tf.shape(x)[1]]).shape)))
        return y

    f.get_concrete_function(tf.TensorSpec([None, None]))
    assert seen == [((None, 2), (None, None))]
    assert f(tf.ones([4, 3])).shape == (4, 2)
