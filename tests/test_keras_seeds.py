"""Keras 3's seeding with the TF backend: initializers take a Python-random seed when built and draw TF's
stateless numbers, Dropout draws TF's stateless_dropout from its SeedGenerator state; values pinned from
TF 2.21 / Keras 3.15."""

import random

import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras

F32 = np.float32


def eq(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b, dtype=np.asarray(a).dtype))


def test_unseeded_dense_after_random_seed_has_keras_weights():
    random.seed(0)
    d = keras.layers.Dense(3)
    d.build((None, 4))
    eq(d.kernel.numpy().ravel(), [0.029041826725006104, -0.35354846715927124, 0.6275290250778198,
                                  -0.7284318804740906, -0.19455158710479736, -0.5800946354866028,
                                  -0.0017217397689819336, 0.9012525081634521, 0.10046720504760742,
                                  -0.11580634117126465, 0.5202245712280273, 0.14508628845214844])
    assert random.random() == 0.3852453064766108  # the layer took exactly one Python-random seed
    random.seed(5)
    g = keras.initializers.GlorotUniform()
    assert g.seed == 668835602 and g.get_config() == {"seed": None, "input_axes": None, "output_axes": None}
    eq(g((2, 2)).numpy().ravel(), [0.5906490087509155, 0.5160301923751831, -0.3307287096977234, 0.7316703796386719])
    eq(g((2, 2)), g((2, 2)))  # Keras 3: every call of one initializer gives the same values


@pytest.mark.parametrize("init,expected", [
    (lambda: keras.initializers.GlorotUniform(seed=42), [-0.47666507959365845, -0.0034683942794799805,
                                                         0.47204601764678955, -1.0511846542358398,
                                                         -0.9232452511787415, 0.27727770805358887]),
    (lambda: keras.initializers.GlorotNormal(seed=42), [0.011372562497854233, -1.1432809829711914,
                                                        0.07448496669530869, 0.5836496949195862,
                                                        -0.015392358414828777, 0.0848979651927948]),
    (lambda: keras.initializers.HeUniform(seed=7), [0.698844313621521, 0.4869990348815918, -1.2507883310317993,
                                                    0.4078965187072754, -1.215350866317749, 0.47561371326446533]),
    (lambda: keras.initializers.RandomNormal(mean=1.0, stddev=2.0, seed=11),
     [2.1151938438415527, 1.136141061782837, 0.8318426609039307, 1.6239778995513916, 1.8173613548278809,
      3.119567632675171]),
    (lambda: keras.initializers.RandomUniform(-2.0, 3.0, seed=11),
     [2.270214080810547, -0.8466686010360718, 2.7456798553466797, 2.7905211448669434, 0.623100757598877,
      -1.7071117162704468]),
    (lambda: keras.initializers.TruncatedNormal(seed=3), [-0.03357924148440361, 0.08380252122879028,
                                                          -0.04721227288246155, 0.030396947637200356,
                                                          -0.02095366083085537, -0.024788716807961464]),
    (lambda: keras.initializers.VarianceScaling(2.0, "fan_out", "untruncated_normal", seed=9),
     [-0.5550820827484131, -0.4970337748527527, -0.7479323148727417, -2.1746819019317627, -0.14649856090545654,
      -0.38272833824157715]),
])
def test_seeded_initializers_draw_keras_values(init, expected):
    eq(init()((3, 2)).numpy().ravel(), expected)


def test_float64_and_conv_shapes():
    eq(keras.initializers.GlorotUniform(seed=1)((2, 2), dtype="float64").numpy().ravel(),
       [-1.156389371546452, 0.7405564534901492, -1.162167788935554, 0.5959794998399706])
    eq(keras.initializers.GlorotUniform(seed=1)((3, 3, 2, 4)).numpy().ravel()[:4],
       [0.2523254454135895, -0.02667984366416931, 0.06686082482337952, -0.07160153985023499])
    assert tf.cast(0.1, tf.float64).numpy() == 0.10000000149011612  # TF converts the Python float first


def test_dropout_masks_and_fit_match_keras():
    random.seed(0)
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6), keras.layers.Dropout(0.5), keras.layers.Dense(2)])
    assert random.random() == 0.890243920837131
    assert (len(m.weights), len(m.non_trainable_weights)) == (4, 0)  # the seed state is not a weight
    x = np.linspace(-1, 1, 12, dtype=F32).reshape(3, 4)
    eq(m(x, training=True), [[0.5873926877975464, -0.7046056389808655], [-0.03810969367623329, 0.005682104267179966],
                             [0.4104423522949219, -1.8567547798156738]])
    eq(m(x, training=True), [[0.06468380987644196, 0.5023314952850342],
                             [-0.010180053301155567, -0.4713377356529236],
                             [-0.5994628667831421, -1.379835605621338]])
    d = keras.layers.Dropout(0.3, noise_shape=(None, 1), seed=3)
    k = F32(1.4285714626312256)
    eq(d(np.ones((3, 4), F32), training=True), [[0] * 4, [k] * 4, [k] * 4])
    m.compile(optimizer="sgd", loss="mse")
    h = m.fit(x, np.ones((3, 2), F32), epochs=3, verbose=0, shuffle=False, batch_size=3)
    np.testing.assert_allclose(h.history["loss"], [2.97698712348938, 1.1432589292526245, 1.1826955080032349],
                               rtol=1e-6)
    eq(m.layers[1](x[:, :1] * np.ones((3, 6), F32), training=True),
       [[0.0] * 6, [-0.5454545617103577, 0, 0, -0.5454545617103577, 0, -0.5454545617103577],
        [0, 0, 0, 0.9090909361839294, 0.9090909361839294, 0.9090909361839294]])


def test_stateless_dropout_as_tf():
    eq(tf.nn.experimental.stateless_dropout(tf.ones([2, 4]), 0.5, seed=[5, 0]), [[0, 2, 2, 0], [2, 0, 0, 2]])
    with pytest.raises(ValueError, match=r"`rate` must be a scalar tensor or a float in the range \[0, 1\)"):
        tf.nn.experimental.stateless_dropout(tf.ones([2]), 1.5, seed=[1, 2])


def test_multi_head_attention_projections_start_from_keras_weights():
    # Keras 3 clones the initializers for each projection (query, key and value differ) and its attention
    # Dropout takes a Python-random seed between the value and output projections; values from Keras 3.15
    tf.keras.utils.set_random_seed(7)
    first = {}
    for drop in (0.0, 0.1):
        inp = tf.keras.Input((4, 5))
        mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, dropout=drop)
        out = mha(inp, inp)  # built before the Dense below draws its seed, as in the Keras run
        dense = tf.keras.layers.Dense(2)
        dense(out)
        first[drop] = {w.path.split("/", 1)[1]: np.asarray(w).ravel()[:3] for w in mha.weights + dense.weights
                       if w.path.endswith("kernel")}
    expect = {
        0.0: {"query/kernel": [0.632902, 0.560131, -0.472329], "key/kernel": [0.722047, -0.287918, 0.067188],
              "value/kernel": [0.523193, 0.144279, 0.387153],
              "attention_output/kernel": [0.377158, -0.536498, 0.051722], "kernel": [-0.590069, 0.658313, 0.703508]},
        0.1: {"query/kernel": [0.478715, -0.307216, 0.723264], "key/kernel": [0.127612, 0.500947, -0.31074],
              "value/kernel": [0.562375, 0.453015, -0.673365],
              "attention_output/kernel": [0.613843, -0.248714, -0.547182], "kernel": [0.650996, 0.304894, 0.245941]},
    }
    for drop, kernels in expect.items():
        assert set(first[drop]) == set(kernels)
        for name, values in kernels.items():
            np.testing.assert_allclose(first[drop][name], values, atol=1e-6)


class _Recorder(keras.Model):
    """Records the x of each training batch (fit's order of the samples)."""

    def __init__(self):
        super().__init__()
        self.d = keras.layers.Dense(1)
        self.seen = []

    def call(self, x):
        return self.d(x)

    def train_step(self, data):
        self.seen.append(data[0].numpy()[:, 0].astype(int).tolist())
        return {"z": tf.constant(0.0)}


@pytest.mark.parametrize("seed, first, last, batch_first, batch_second, batch_last", [
    (0, [71, 79, 4, 43, 73, 3], [94, 97, 39, 77, 76], [6, 21, 7, 3, 2, 13], [44, 63, 54, 33, 51, 48],
     [100, 97, 96, 99, 98]),
    (5, [64, 33, 96, 65, 47, 79], [28, 16, 53, 35, 73], [29, 13, 15, 22, 12, 28], [38, 48, 57, 52, 35, 61],
     [96, 97, 98, 100, 99]),
])
def test_fit_shuffles_arrays_in_keras_order(seed, first, last, batch_first, batch_second, batch_last):
    # Keras 3 / TF 2.21: tf.random.shuffle(tf.range(n)) in a tf.data map function that each epoch's new
    # iterator instantiates afresh, so with a global seed every epoch (and every fit) takes the same order;
    # shuffle="batch" shuffles within each batch from one stream. Pinned from TF with 101 samples, batch 32.
    random.seed(0)
    tf.random.set_seed(seed)
    m = _Recorder()
    m.compile(run_eagerly=True, loss="mse")
    x = np.arange(101, dtype=F32)[:, None]
    m.fit(x, x, epochs=2, batch_size=32, verbose=0)
    assert [m.seen[0][:6], m.seen[3], m.seen[4][:6]] == [first, last, first]
    assert sorted(sum(m.seen[:4], [])) == list(range(101))
    m.seen.clear()
    m.fit(x, x, epochs=2, batch_size=32, verbose=0, shuffle="batch")
    assert [m.seen[0][:6], m.seen[1][:6], m.seen[3], m.seen[4][:6]] == [batch_first, batch_second, batch_last,
                                                                         batch_first]


def test_saving_and_get_config_take_no_python_random_seed(tmp_path):
    # Keras 3 serializes the layers' own initializers: save/get_config draw nothing, so a model created after
    # saving starts from the same weights as in Keras (loading takes one seed per unseeded initializer or
    # SeedGenerator, as building does). Draws pinned from Keras 3.15.
    random.seed(0)
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dropout(0.2), keras.layers.Dense(2)])
    after_build = random.getstate()
    m.get_config()
    m.save(str(tmp_path / "m.keras"))
    assert random.getstate() == after_build
    keras.models.load_model(str(tmp_path / "m.keras"))
    after_load = random.getstate()
    random.setstate(after_build)
    for _ in range(3):  # two glorot_uniform kernels and Dropout's SeedGenerator
        random.randint(1, int(1e9))
    assert random.getstate() == after_load
