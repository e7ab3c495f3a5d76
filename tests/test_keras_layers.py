"""tf.keras.layers: outputs pinned against TF 2.21 / Keras 3.15 (values
produced by the same code under TensorFlow), and layer behaviour."""

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
L = K.layers

# Expected values: the code of ``_compute`` run with TensorFlow 2.21.0 / Keras 3.15.1, rounded to 6 decimals.
EXPECTED = {'avgpool_s1': [[[[0.489671, 0.461481], [0.458817, 0.524334], [0.45137, 0.760235], [0.605004, 0.767696]],
                 [[0.346438, 0.231914], [0.351909, 0.389351], [0.500484, 0.694554], [0.678278, 0.803227]],
                 [[0.334129, 0.161018], [0.338012, 0.23796], [0.390864, 0.409099], [0.573754, 0.39737]],
                 [[0.321514, 0.54185], [0.463334, 0.495483], [0.448195, 0.371814], [0.449713, 0.39267]]],
                [[[0.425506, 0.44365], [0.374763, 0.232046], [0.495547, 0.216478], [0.791353, 0.320287]],
                 [[0.706837, 0.437855], [0.530614, 0.47441], [0.479844, 0.521315], [0.721248, 0.340271]],
                 [[0.572658, 0.517773], [0.610519, 0.582353], [0.632579, 0.691713], [0.623829, 0.416288]],
                 [[0.312644, 0.633078], [0.556569, 0.530271], [0.450278, 0.535342], [0.259049, 0.277714]]]],
 'avgpool_same': [[[[0.489671, 0.461481], [0.45137, 0.760235], [0.709624, 0.728448]],
                   [[0.334129, 0.161018], [0.390864, 0.409099], [0.729637, 0.334289]],
                   [[0.388695, 0.863741], [0.365606, 0.641457], [0.507772, 0.871339]]],
                  [[[0.425506, 0.44365], [0.495547, 0.216478], [0.973288, 0.402498]],
                   [[0.572658, 0.517773], [0.632579, 0.691713], [0.490337, 0.192475]],
                   [[0.252894, 0.711927], [0.17368, 0.561755], [0.03035, 0.122892]]]],
 'bn_infer': [[0.166508, 0.600836, 0.790808, 0.300395, 0.369036], [0.538054, 0.116393, 0.84336, 0.806829, 0.523653],
              [-0.315109, 0.264754, 0.189829, 0.495108, 0.557397]],
 'bn_moving': [[1.864856, 0.302505, 1.138139, 0.694636, 0.739223], [1.824489, 0.260674, 1.09684, 0.652889, 0.703728]],
 'bn_train': [[3.326728, 0.593984, 2.333151, 0.037323, 0.40977], [5.34676, -0.162716, 2.518817, 1.443158, 0.883104],
              [0.708266, 0.069024, 0.209925, 0.577837, 0.986403], [2.744615, 0.677367, 2.402359, 1.013217, 2.353097],
              [-0.004952, -0.031264, 1.668049, -0.40829, -0.336437],
              [2.430717, 0.228331, 2.909935, 1.030541, 1.013402], [2.284247, 0.042801, -0.781029, -0.043324, 1.51536],
              [-0.124483, 0.146319, -0.813886, 1.52423, -0.001315], [0.420185, 0.579662, 1.24917, 1.566274, 1.367761],
              [4.275331, -0.089561, 1.376987, 0.731965, 2.021248],
              [1.181705, 0.340297, -0.587557, 0.436618, 0.474295], [-0.534306, 0.525372, 0.71779, 1.889786, 1.227468],
              [3.163803, 0.374072, 1.928595, -0.145626, 0.805174], [0.19225, 0.174283, -0.434873, 1.862942, 0.169498],
              [3.706165, 0.087684, 2.734266, 1.111638, -0.065769], [5.115216, 0.63448, 2.855915, 0.884252, -0.02671],
              [-0.19069, 0.620022, 1.422576, -0.072454, 2.057129], [3.460684, 0.316127, 0.704914, 0.493956, 0.238579],
              [-1.446055, 0.576172, 1.0777, 0.829962, 0.471832],
              [4.353007, -0.145807, 0.688189, -0.441703, -0.090382]],
 'conv_same': [[[[-0.807034, 0.878356], [0.494348, -0.484293], [0.227482, -0.648645], [-0.18921, 0.493886],
                 [-0.463732, -0.647048]],
                [[-0.33922, 0.749122], [-0.190027, 0.180461], [-0.337457, 0.790845], [-0.218033, 0.221518],
                 [-0.198452, -0.95359]],
                [[-0.26469, 0.805816], [-0.020948, 0.095972], [0.081568, 0.163475], [-0.849275, 0.822477],
                 [0.133634, -0.740638]],
                [[0.278348, 0.229655], [0.226048, 0.50512], [-0.395667, 0.162379], [0.264721, 0.370831],
                 [0.181812, -0.532987]],
                [[-0.82299, 0.684205], [-0.663092, 0.42789], [-0.260421, -0.616928], [0.027889, -0.139437],
                 [-0.706366, -0.154804]]],
               [[[-0.252974, 0.493661], [-0.236685, -0.044965], [-0.386497, 0.855552], [-0.55795, 0.928469],
                 [0.228015, -0.872817]],
                [[-0.572687, 0.925568], [0.602625, -0.571893], [0.334161, -0.079774], [0.067477, 0.816636],
                 [-0.461729, -0.751122]],
                [[-0.294611, 0.942966], [-0.275462, -0.524882], [0.202872, 0.216299], [-0.837393, 0.298034],
                 [0.617554, -0.922994]],
                [[-0.608797, 0.820669], [-0.199681, 0.66457], [-0.343114, -0.223696], [0.061514, -0.668603],
                 [0.099634, -0.62529]],
                [[-0.809483, 0.688514], [-0.52479, 0.255944], [-0.291557, -0.557017], [0.013535, -0.355579],
                 [-0.118334, 0.114382]]]],
 'conv_same_s2': [[[[0.6236, 0.712789], [1.062757, 0.105899], [0.143978, 0.025701]],
                   [[-0.417998, 0.981485], [-0.084675, 1.206708], [-0.309416, -1.647392]],
                   [[0.37731, -0.036438], [-0.327082, -0.106434], [0.275276, -0.86457]]],
                  [[[0.428816, 0.302006], [0.156539, 0.883443], [0.046999, 0.026914]],
                   [[-0.742819, 1.538161], [0.439707, 0.415585], [-0.252288, -0.971527]],
                   [[-0.615588, 0.888602], [-0.266199, -0.497806], [0.191386, -1.003908]]]],
 'conv_valid_s2': [[[[-0.942825, -1.331997, 0.445325], [0.804347, 0.176351, 1.889553]],
                    [[-1.960744, 0.400632, 0.866779], [-1.136314, 0.677576, 0.402919]]],
                   [[[-0.614992, -0.099127, 0.968505], [-1.42507, -0.417933, 0.607776]],
                    [[-0.164441, -0.251193, 1.240534], [-0.222096, -0.198796, 0.295608]]]],
 'drop_inf': [[0.625095, 0.897214], [0.775686, 0.225207], [0.300166, 0.873553], [0.005265, 0.821228],
              [0.797069, 0.467935]],
 'emb': [[[3.0, 4.0, 5.0], [15.0, 16.0, 17.0]], [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]]],
 'flat': [2.0, 50.0],
 'functional': [[-0.891374, 0.216716], [-0.701016, 0.310548], [-0.289362, 0.054794]],
 'functional_layers': ['InputLayer', 'Dense', 'Dense'],
 'gap': [[0.462361, 0.526982], [0.492636, 0.453546]],
 'ln': [[-0.784917, -1.528542], [1.22284, 0.985597], [-0.805258, -1.554014], [-0.808358, -1.557896],
        [1.211175, 0.97099]],
 'maxpool_same_s2': [[[[0.775686, 0.897214], [0.9955, 0.873553], [0.9955, 0.98896]],
                      [[0.61254, 0.445076], [0.9955, 0.917168], [0.9955, 0.98896]],
                      [[0.509791, 0.880332], [0.692032, 0.84715], [0.830048, 0.871339]]],
                     [[[0.67645, 0.637997], [0.816338, 0.387632], [0.978748, 0.589992]],
                      [[0.874077, 0.927906], [0.944948, 0.903917], [0.967828, 0.903917]],
                      [[0.552327, 0.927906], [0.884057, 0.751325], [0.569694, 0.376288]]]],
 'maxpool_valid': [[[[0.775686, 0.897214], [0.9955, 0.873553]], [[0.61254, 0.247515], [0.692032, 0.917168]]],
                   [[[0.67645, 0.637997], [0.816338, 0.379446]], [[0.874077, 0.927906], [0.944948, 0.903917]]]],
 'n_params': 23.0,
 'relu6': [[0.325095, 0.5], [0.475686, -0.027479], [-0.019983, 0.5], [-0.049473, 0.5], [0.497069, -0.003207]],
 'reshape': [2.0, 25.0, 2.0],
 'softmax': [[0.432387, 0.567613], [0.634247, 0.365753], [0.360456, 0.639544], [0.306621, 0.693379],
             [0.581549, 0.418451]]}


def _fixed(layer, inp):
    layer(inp)  # build
    rr = np.random.default_rng(3)
    layer.set_weights([rr.normal(0, 0.5, w.shape).astype("float32") for w in layer.get_weights()])
    return layer(inp)


def _compute():
    r = np.random.default_rng(7)
    x = r.random((2, 5, 5, 2)).astype("float32")
    out = {}
    out["conv_valid_s2"] = _fixed(L.Conv2D(3, 3, strides=2), x)
    out["conv_same"] = _fixed(L.Conv2D(2, (2, 3), padding="same", activation="tanh"), x)
    out["conv_same_s2"] = _fixed(L.Conv2D(2, 3, strides=2, padding="same", use_bias=False), x)
    out["maxpool_same_s2"] = L.MaxPooling2D(3, strides=2, padding="same")(x)
    out["maxpool_valid"] = L.MaxPooling2D(2)(x)
    out["avgpool_same"] = L.AveragePooling2D(2, padding="same")(x)
    out["avgpool_s1"] = L.AveragePooling2D(2, strides=1)(x)
    out["gap"] = L.GlobalAveragePooling2D()(x)
    out["ln"] = _fixed(L.LayerNormalization(), x[0, 0])
    bn = L.BatchNormalization(momentum=0.9)
    bn(x.reshape(20, 5))
    # each weight from a fresh generator (so gamma, beta and the moving stats start equal), as when pinned
    bn.set_weights([np.abs(np.random.default_rng(3).normal(1, 0.5, w.shape)).astype("float32")
                    for w in bn.get_weights()])
    out["bn_train"] = bn(x.reshape(20, 5), training=True)
    out["bn_moving"] = [bn.moving_mean.numpy(), bn.moving_variance.numpy()]
    out["bn_infer"] = bn(x.reshape(20, 5)[:3], training=False)
    emb = L.Embedding(6, 3)
    emb(np.array([0]))
    emb.set_weights([np.arange(18, dtype="float32").reshape(6, 3)])
    out["emb"] = emb(np.array([[1, 5], [0, 2]]))
    out["flat"] = L.Flatten()(x).shape
    out["reshape"] = L.Reshape((25, 2))(x).shape
    out["softmax"] = L.Softmax()(x[0, 0])
    out["relu6"] = L.ReLU(max_value=0.5, negative_slope=0.1, threshold=0.2)(x[0, 0] - 0.3)
    out["drop_inf"] = L.Dropout(0.5)(x[0, 0], training=False)
    inp = K.Input((4,))
    h = L.Dense(3, activation="relu")(inp)
    o = L.Dense(2)(h)
    fm = K.Model(inp, o)
    rr = np.random.default_rng(4)
    fm.set_weights([rr.normal(0, 1, w.shape).astype("float32") for w in fm.get_weights()])
    out["functional"] = fm(r.random((3, 4)).astype("float32"))
    out["functional_layers"] = [type(layer).__name__ for layer in fm.layers]
    out["n_params"] = fm.count_params()
    return out


_RESULTS = {}


def _results():
    if not _RESULTS:
        _RESULTS.update(_compute())
    return _RESULTS


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_layer_output_matches_tf(key):
    got, want = _results()[key], EXPECTED[key]
    if key == "functional_layers":
        assert got == want
        return
    if key == "bn_moving":
        got = [np.asarray(g) for g in got]
    else:
        got = np.asarray(got.as_list() if hasattr(got, "as_list") else got)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-5, atol=2e-6)


# ----------------------------------------------------------------------------
# Behaviour
# ----------------------------------------------------------------------------

def test_dense_builds_lazily_from_the_first_input():
    layer = L.Dense(3)
    assert not layer.built and layer.weights == []
    y = layer(np.ones((2, 5), np.float32))
    assert layer.built and y.shape == (2, 3)
    assert [tuple(w.shape.as_list()) for w in layer.weights] == [(5, 3), (3,)]
    assert [w.name for w in layer.weights] == ["kernel", "bias"]
    assert layer.kernel.path.endswith("/kernel")


def test_float64_inputs_are_cast_to_the_layer_dtype():
    y = L.Dense(2)(np.ones((1, 3)))  # float64 NumPy input, float32 layer (Keras autocasts)
    assert y.dtype == tf.float32


def test_set_weights_checks_count_and_shapes():
    layer = L.Dense(2)
    layer(np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match="expecting 2 weights"):
        layer.set_weights([np.ones((3, 2))])
    with pytest.raises(ValueError, match="shape"):
        layer.set_weights([np.ones((4, 2)), np.ones(2)])
    layer.set_weights([np.ones((3, 2)), np.zeros(2)])
    np.testing.assert_array_equal(layer(np.ones((1, 3), np.float32)).numpy(), [[3.0, 3.0]])


def test_dense_rejects_a_wrong_input_width():
    layer = L.Dense(2)
    layer(np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match="incompatible"):
        layer(np.ones((1, 4), np.float32))


def test_frozen_layer_has_no_trainable_weights():
    model = K.Sequential([L.Dense(2), L.Dense(1)])
    model(np.ones((1, 3), np.float32))
    model.layers[0].trainable = False
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 2
    model.trainable = False
    assert model.trainable_weights == [] and len(model.weights) == 4


def test_batch_norm_has_keras_defaults_and_non_trainable_moving_stats():
    bn = L.BatchNormalization()
    assert (bn.momentum, bn.epsilon) == (0.99, 1e-3)
    bn(np.ones((4, 3), np.float32))
    assert [w.name for w in bn.trainable_weights] == ["gamma", "beta"]
    assert [w.name for w in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]


def test_dropout_is_active_only_with_training_true():
    x = np.ones((200, 50), np.float32)
    layer = L.Dropout(0.4, seed=1)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    y = layer(x, training=True).numpy()
    kept = y != 0
    assert 0.5 < kept.mean() < 0.7
    np.testing.assert_allclose(y[kept], 1 / 0.6, rtol=1e-6)


def test_training_flag_reaches_nested_layers():
    model = K.Sequential([L.Dropout(0.5, seed=0)])
    x = np.ones((10, 10), np.float32)
    assert np.any(model(x, training=True).numpy() == 0)
    np.testing.assert_array_equal(model(x).numpy(), x)


def test_auto_names_are_unique_per_class():
    a, b = L.Dense(1), L.Dense(1)
    assert a.name != b.name and a.name.startswith("dense") and b.name.startswith("dense")
    assert L.MaxPooling2D().name.startswith("max_pooling2d")
    assert L.Conv2D(1, 1).name.startswith("conv2d")


def test_seeded_initializers_repeat_and_respect_their_bounds():
    init = K.initializers.GlorotUniform(seed=3)
    a, b = init((20, 30)).numpy(), init((20, 30)).numpy()
    np.testing.assert_array_equal(a, b)
    limit = np.sqrt(6 / 50)
    assert a.min() >= -limit and a.max() <= limit and a.std() > limit / 3
    he = K.initializers.HeNormal(seed=0)((400, 100)).numpy()
    std = np.sqrt(2 / 400)
    assert abs(he.std() - std) < 0.1 * std and np.abs(he).max() <= 2 * std / 0.8796 + 1e-6  # truncated at 2 sigma
    np.testing.assert_array_equal(K.initializers.Constant(2.5)((2,)).numpy(), [2.5, 2.5])
    np.testing.assert_array_equal(K.initializers.Zeros()((2,)).numpy(), [0, 0])
    np.testing.assert_array_equal(K.initializers.Ones()((1,)).numpy(), [1])
    rn = K.initializers.RandomNormal(mean=1.0, stddev=0.1, seed=2)((1000,)).numpy()
    assert abs(rn.mean() - 1.0) < 0.02 and rn.dtype == np.float32
    assert isinstance(K.initializers.get("he_normal"), K.initializers.HeNormal)
    with pytest.raises(ValueError, match="initializer"):
        K.initializers.get("nope")


def test_keras_tensor_refuses_raw_ops():
    x = K.Input((3,))
    assert x.shape == (None, 3)
    with pytest.raises(ValueError, match="symbolic"):  # TF 2.21: ValueError for a tf op on a KerasTensor
        tf.math.sin(x)
    y = (x + 1) * 2.0  # Python operators record operation nodes, as in Keras 3
    assert y.shape == (None, 3)
    model = K.Model(x, [y, -x[:, 0] / 2.0])
    assert [layer.name for layer in model.layers] == [model.layers[0].name]  # operations are not layers
    out = model(np.array([[1.0, 2.0, 3.0]], "float32"))
    np.testing.assert_allclose(out[0].numpy(), [[4.0, 6.0, 8.0]])
    np.testing.assert_allclose(out[1].numpy(), [-0.5])


def test_functional_model_shapes_and_disconnected_outputs():
    a = K.Input((8, 8, 1))
    y = L.Conv2D(4, 3, padding="same")(a)
    y = L.MaxPooling2D()(y)
    assert y.shape == (None, 4, 4, 4)
    model = K.Model(inputs=a, outputs=L.Dense(2)(L.Flatten()(y)))
    assert model(np.zeros((5, 8, 8, 1), np.float32)).shape == (5, 2)
    other = K.Input((3,))
    with pytest.raises(ValueError, match="not connected"):
        K.Model(a, L.Dense(1)(other))


def test_conv_and_pool_errors_are_clear():
    with pytest.raises(ValueError, match="ndim=4"):
        L.Conv2D(2, 3)(np.ones((2, 5, 5), np.float32))
    with pytest.raises(ValueError, match="padding"):
        L.MaxPooling2D(padding="full")
    with pytest.raises(NotImplementedError, match="channels_last"):
        L.Conv2D(2, 3, data_format="channels_first")


def test_layer_gradients_flow_to_every_weight():
    model = K.Sequential([L.Conv2D(2, 3, padding="same", activation="relu"), L.BatchNormalization(),
                          L.AveragePooling2D(2), L.Flatten(), L.LayerNormalization(), L.Dense(3)])
    x = np.random.default_rng(0).random((4, 6, 6, 1)).astype(np.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x, training=True) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    assert len(grads) == 8 and all(g is not None for g in grads)


def test_embedding_gradient_reaches_the_table():
    emb = L.Embedding(5, 2)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(emb(np.array([1, 1, 3])))
    g = tape.gradient(y, emb.embeddings)
    np.testing.assert_array_equal(tf.convert_to_tensor(g).numpy(), [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]])


def test_merge_layers_in_a_functional_model():
    x = K.Input((3,))
    a, b = L.Dense(2)(x), L.Dense(2)(x)
    outs = [L.Add()([a, b]), L.Subtract()([a, b]), L.Multiply()([a, b]), L.Average()([a, b]),
            L.Maximum()([a, b]), L.Minimum()([a, b]), L.Concatenate()([a, b])]
    model = K.Model(x, outs)
    av, bv = (np.asarray(t) for t in K.Model(x, [a, b])(np.ones((1, 3), np.float32)))
    got = [np.asarray(t) for t in model(np.ones((1, 3), np.float32))]
    want = [av + bv, av - bv, av * bv, (av + bv) / 2, np.maximum(av, bv), np.minimum(av, bv),
            np.concatenate([av, bv], -1)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    with pytest.raises(ValueError, match="list"):
        L.Add()(np.ones((1, 2), np.float32))


# TF 2.21 / Keras 3.15: tf.keras.activations on linspace(-3, 3, 7), rounded to 6 decimals.
TF_ACTIVATIONS = {'elu': [-0.9502130150794983, -0.8646649718284607, -0.6321210265159607, 0.0, 1.0, 2.0, 3.0],
 'exponential': [0.0497869998216629, 0.13533499836921692, 0.3678790032863617, 1.0, 2.7182819843292236,
                 7.389056205749512, 20.085535049438477],
 'gelu': [-0.004050000105053186, -0.045499999076128006, -0.15865500271320343, 0.0, 0.8413450121879578,
          1.9544999599456787, 2.9959499835968018],
 'gelu_a': [-0.003636999987065792, -0.04540200158953667, -0.15880799293518066, 0.0, 0.8411920070648193,
            1.9545979499816895, 2.9963629245758057],
 'linear': [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0],
 'relu': [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0],
 'relu_p': [-0.699999988079071, -0.5, -0.30000001192092896, -0.10000000149011612, 1.0, 2.0, 2.0],
 'selu': [-1.6705689430236816, -1.520166039466858, -1.1113309860229492, 0.0, 1.0507010221481323, 2.1014020442962646,
          3.1521029472351074],
 'sigmoid': [0.047426000237464905, 0.11920300126075745, 0.2689409852027893, 0.5, 0.7310590147972107,
             0.8807970285415649, 0.9525740146636963],
 'softmax': [[0.001567999948747456, 0.004263000097125769, 0.011587999761104584, 0.03150000050663948,
              0.08562599867582321, 0.23275600373744965, 0.6326969861984253]],
 'softplus': [0.048587001860141754, 0.12692800164222717, 0.3132619857788086, 0.6931470036506653, 1.3132619857788086,
              2.1269280910491943, 3.0485870838165283],
 'swish': [-0.14227800071239471, -0.2384060025215149, -0.2689409852027893, 0.0, 0.7310590147972107,
           1.7615940570831299, 2.857722043991089],
 'tanh': [-0.9950550198554993, -0.964028000831604, -0.7615939974784851, 0.0, 0.7615939974784851, 0.964028000831604,
          0.9950550198554993]}


@pytest.mark.parametrize("name", sorted(TF_ACTIVATIONS))
def test_activation_matches_tf(name):
    A = K.activations
    x = np.linspace(-3, 3, 7).astype("float32")
    got = {"gelu_a": lambda: A.gelu(x, approximate=True),
           "relu_p": lambda: A.relu(x, negative_slope=0.2, max_value=2.0, threshold=0.5),
           "softmax": lambda: A.softmax(x.reshape(1, -1))}.get(name, lambda: A.get(name)(x))()
    np.testing.assert_allclose(np.asarray(got, np.float64), TF_ACTIVATIONS[name], atol=2e-6)


def test_dense_units_must_be_a_python_int_checked_before_naming():
    # Keras 3 refuses a NumPy integer (``tf.reduce_prod(shape).numpy()``), before the layer takes a name
    tf.keras.backend.clear_session()
    with pytest.raises(ValueError, match=r"^Received an invalid value for `units`, expected a positive integer. "
                                         r"Received: units=784$"):
        tf.keras.layers.Dense(np.int32(784))
    with pytest.raises(ValueError, match="units=0"):
        tf.keras.layers.Dense(0)
    assert tf.keras.layers.Dense(3).name == "dense"


def test_weightless_layers_are_built_at_construction_as_keras():
    # Keras 3.15: these call _build_at_init() (summary() shows "0", not "0 (unbuilt)"; no build_config)
    built = [L.Dropout(0.1), L.SpatialDropout1D(0.1), L.GaussianNoise(0.1), L.Activation("relu"), L.ReLU(),
             L.LeakyReLU(), L.Softmax(), L.ELU(), L.Identity(), L.Masking(), L.MaxPooling2D(), L.AveragePooling1D(2),
             L.GlobalAveragePooling1D(), L.GlobalMaxPooling2D(), L.Reshape((2,)), L.ActivityRegularization()]
    assert all(layer.built for layer in built)
    unbuilt = [L.Dense(2), L.Embedding(3, 2), L.Flatten(), L.PReLU(), L.Concatenate(), L.Rescaling(1.0)]
    assert not any(layer.built for layer in unbuilt)

    class MyDropout(L.Dropout):  # a subclass with its own build() is built by its first call, as in Keras
        def build(self, input_shape):
            self.seen = input_shape

    assert not MyDropout(0.1).built
    inp = tf.keras.Input((4,))
    model = tf.keras.Model(inp, L.Dropout(0.1)(L.Dense(2, kernel_initializer="zeros")(inp)))  # no RNG draws
    layers = tf.keras.utils.serialize_keras_object(model)["config"]["layers"]
    assert [("build_config" in c) for c in layers] == [False, True, False]
