"""Keras 3.15 names added to tf.keras's activations, losses, metrics, initializers, regularizers and backend,
with values pinned from real TF 2.21 / Keras 3.15 (tests never import TF)."""

import numpy as np
import pytest

import tapeflow as tf

_ACT = {
    "leaky_relu": [[-0.6, -0.2, -0.14, -0.05, 0.0, 0.3, 0.5, 0.9, 1.0, 2.5]],
    "relu6": [[0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 0.5, 0.9, 1.0, 2.5]],
    "mish": [[-0.145647, -0.303401, -0.26787, -0.129927, 0.0, 0.208001, 0.375245, 0.761206, 0.865098, 2.471392]],
    "softsign": [[-0.75, -0.5, -0.411765, -0.2, 0.0, 0.230769, 0.333333, 0.473684, 0.5, 0.714286]],
    "log_sigmoid": [[-3.048587, -1.313262, -1.103186, -0.825939, -0.693147,
        -0.554355, -0.474077, -0.341154, -0.313262, -0.07889]],
    "hard_silu": [[-0.0, -0.333333, -0.268333, -0.114583, 0.0, 0.165, 0.291667, 0.585, 0.666667, 2.291667]],
    "hard_swish": [[-0.0, -0.333333, -0.268333, -0.114583, 0.0, 0.165, 0.291667, 0.585, 0.666667, 2.291667]],
    "hard_tanh": [[-1.0, -1.0, -0.7, -0.25, 0.0, 0.3, 0.5, 0.9, 1.0, 1.0]],
    "celu": [[-0.950213, -0.632121, -0.503415, -0.221199, 0.0, 0.3, 0.5, 0.9, 1.0, 2.5]],
    "glu": [[-1.723328, -0.622459, -0.497665, -0.182765, 0.0]],
    "sparsemax": [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]],
    "squareplus": [[0.302776, 0.618034, 0.709481, 0.882782, 1.0, 1.161187, 1.280776, 1.546586, 1.618034, 2.850781]],
    "soft_shrink": [[-2.5, -0.5, -0.2, 0.0, 0.0, 0.0, 0.0, 0.4, 0.5, 2.0]],
    "hard_shrink": [[-3.0, -1.0, -0.7, 0.0, 0.0, 0.0, 0.0, 0.9, 1.0, 2.5]],
    "tanh_shrink": [[-2.004945, -0.238406, -0.095632, -0.005081, 0.0,
        0.008687, 0.037883, 0.183702, 0.238406, 1.513386]],
    "sparse_plus": [[0.0, 0.0, 0.0225, 0.140625, 0.25, 0.4225, 0.5625, 0.9025, 1.0, 2.5]],
    "sparse_sigmoid": [[0.0, 0.0, 0.15, 0.375, 0.5, 0.65, 0.75, 0.95, 1.0, 1.0]],
    "threshold": [[-2.0, -2.0, -2.0, -2.0, -2.0, -2.0, 0.5, 0.9, 1.0, 2.5]],
    "celu2": [[-1.55374, -0.786939, -0.590624, -0.235006, 0.0, 0.3, 0.5, 0.9, 1.0, 2.5]],
    "sparsemax3": [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]],
}
_LOSS = {
    "bfce": 0.411257,
    "bfce_bal": 0.0328876,
    "bfce_logits": [0.909786, 0.121448, 0.574785, 1.213812],
    "cfce": 0.186923,
    "cfce_logits": [1.395359, 0.105533, 0.20474, 1.761353],
    "dice": 0.5375,
    "dice_ax": [0.3, 0.4, 0.5, 0.95],
    "dice_ax_cls": 0.375,
    "tversky": 0.5375,
    "tversky_ax": [0.3, 0.4, 0.5, 0.95],
    "cgce": 0.8535136,
    "cgce_f": [0.315634, 0.429474, 0.549183, 1.25311],
}

_X = np.array([[-3.0, -1.0, -0.7, -0.25, 0.0, 0.3, 0.5, 0.9, 1.0, 2.5]], np.float32)
_YT = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0]], np.float32)
_YP = np.array([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.25, 0.25, 0.5], [0.9, 0.05, 0.05]], np.float32)
_LG = np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0], [-0.5, 2.0, 1.5], [3.0, -1.0, 0.0]], np.float32)
_SW = np.array([1.0, 0.5, 2.0, 0.0], np.float32)


@pytest.mark.parametrize("name", sorted(_ACT))
def test_activation_values_match_keras(name):
    a = tf.keras.activations
    if name == "threshold":
        got = a.threshold(_X, 0.4, -2.0)
    elif name == "celu2":
        got = a.celu(_X, alpha=2.0)
    elif name == "sparsemax3":
        got = a.sparsemax(np.array([[0.5, 1.2, -0.3], [3, 0.1, 2.9]], np.float32), axis=0)
    else:
        got = getattr(a, name)(_X)
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), _ACT[name], rtol=1e-5, atol=1e-6)


def test_activation_lookup_serialize_and_errors():
    a = tf.keras.activations
    assert a.get("hard_swish") is a.hard_silu and a.hard_swish is a.hard_silu
    assert a.serialize(a.get("mish")) == "mish"
    assert a.deserialize("relu6") is a.relu6
    assert a.deserialize({"module": "keras.activations", "class_name": "function", "config": "mish",
                          "registered_name": "mish"}) is a.mish
    assert a.deserialize("nope") == "nope"  # as Keras 3.15: an unknown name comes back unchanged
    with pytest.raises(ValueError, match="axis size must be divisible by 2"):
        a.glu(np.ones((2, 3), np.float32))
    assert tf.keras.layers.Dense(2, activation="leaky_relu").activation is a.leaky_relu


@pytest.mark.parametrize("name", ["mish", "celu", "glu", "squareplus", "sparse_plus", "log_sigmoid", "sparsemax"])
def test_activation_gradients_numerically(name):
    fn = getattr(tf.keras.activations, name)
    x0 = np.array([[-1.7, -0.6, 0.15, 0.45, 0.8, 1.9]], np.float64)
    x = tf.constant(x0)
    w = tf.constant(np.linspace(0.5, 1.5, fn(x0).shape[-1]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(fn(x) * w)
    g = tape.gradient(y, x).numpy()
    eps = 1e-6
    num = np.zeros_like(x0)
    for i in range(x0.shape[1]):
        d = np.zeros_like(x0)
        d[0, i] = eps
        num[0, i] = (float(tf.reduce_sum(fn(x0 + d) * w)) - float(tf.reduce_sum(fn(x0 - d) * w))) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-7)


def test_new_losses_match_keras():
    L = tf.keras.losses
    got = {
        "bfce": L.BinaryFocalCrossentropy()(_YT, _YP),
        "bfce_bal": L.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=0.3, gamma=1.5,
                                              label_smoothing=0.1)(_YT, _YP, sample_weight=_SW),
        "bfce_logits": L.binary_focal_crossentropy(_YT, _LG, from_logits=True),
        "cfce": L.CategoricalFocalCrossentropy()(_YT, _YP),
        "cfce_logits": L.categorical_focal_crossentropy(_YT, _LG, from_logits=True, label_smoothing=0.2, gamma=3.0,
                                                        alpha=0.5),
        "dice": L.Dice()(_YT, _YP),
        "dice_ax": L.dice(_YT, _YP, axis=-1),
        "dice_ax_cls": L.Dice(axis=-1)(_YT, _YP, sample_weight=_SW),
        "tversky": L.Tversky(alpha=0.3, beta=0.7)(_YT, _YP),
        "tversky_ax": L.tversky(_YT, _YP, axis=1),
        "cgce": L.CategoricalGeneralizedCrossEntropy(q=0.3)(np.array([1, 0, 2, 1]), _YP),
        "cgce_f": L.categorical_generalized_cross_entropy(np.array([1, 0, 2, 1]), _YP, q=0.7),
    }
    for k, v in got.items():
        np.testing.assert_allclose(v.numpy(), _LOSS[k], rtol=1e-5, atol=1e-7, err_msg=k)
    assert L.BinaryFocalCrossentropy(gamma=3.0).get_config() == {
        "name": "binary_focal_crossentropy", "reduction": "sum_over_batch_size", "from_logits": False,
        "label_smoothing": 0.0, "axis": -1, "apply_class_balancing": False, "alpha": 0.25, "gamma": 3.0}
    assert L.serialize(L.Tversky(alpha=0.2)) == {
        "module": "keras.losses", "class_name": "Tversky", "registered_name": None,
        "config": {"name": "tversky", "reduction": "sum_over_batch_size", "alpha": 0.2, "beta": 0.5, "axis": None}}
    assert L.deserialize(L.serialize(L.BinaryFocalCrossentropy(gamma=4.0))).gamma == 4.0
    assert L.CategoricalGeneralizedCrossEntropy().get_config()["q"] == 0.5
    with pytest.raises(ValueError, match=r"q must be in the interval \(0, 1\)"):
        L.CategoricalGeneralizedCrossEntropy(q=1.5)
    assert L.get("binary_focal_crossentropy") is L.binary_focal_crossentropy  # Keras 3: the function


def test_loss_classes_compute_in_float32_like_keras():
    # Keras 3 converts y_true/y_pred to the loss's dtype (floatx): float64 arrays give a float32 loss
    assert tf.keras.losses.Huber()(np.array([0.0, 1.0]), np.array([2.0, 1.0])).dtype == tf.float32
    assert tf.keras.losses.MeanSquaredError()([0.0, 1.0], [2.0, 1.0]).dtype == tf.float32
    # ... and a Python list of floats is float32 for the functions too; float64 arrays stay float64
    assert tf.keras.metrics.huber([0.0, 1.0], [2.0, 1.0]).dtype == tf.float32
    assert tf.keras.metrics.huber(np.array([0.0, 1.0]), np.array([2.0, 1.0])).dtype == tf.float64


def test_metrics_namespace_loss_functions_and_serialization():
    m, L = tf.keras.metrics, tf.keras.losses
    for alias, fn in [("MSE", L.mean_squared_error), ("mae", L.mean_absolute_error),
                      ("MAPE", L.mean_absolute_percentage_error), ("msle", L.mean_squared_logarithmic_error),
                      ("KLD", L.kl_divergence), ("kullback_leibler_divergence", L.kl_divergence),
                      ("logcosh", L.log_cosh), ("hinge", L.hinge), ("squared_hinge", L.squared_hinge),
                      ("categorical_hinge", L.categorical_hinge), ("huber", L.huber), ("poisson", L.poisson),
                      ("binary_focal_crossentropy", L.binary_focal_crossentropy)]:
        assert getattr(m, alias) is fn, alias
        assert alias in dir(m)
    from tapeflow.keras.metrics import mse

    assert mse is L.mean_squared_error
    assert m.serialize(m.AUC())["class_name"] == "AUC"
    assert isinstance(m.deserialize("accuracy"), m.Accuracy)
    assert m.deserialize(m.serialize(m.Precision(thresholds=0.3))).thresholds.tolist() == pytest.approx([0.3])


def test_initializer_aliases_and_deserialize():
    ini = tf.keras.initializers
    assert ini.lecun_normal is ini.LecunNormal and ini.lecun_uniform is ini.LecunUniform
    assert ini.variance_scaling is ini.VarianceScaling
    assert ini.identity is ini.Identity is ini.IdentityInitializer and ini.OrthogonalInitializer is ini.Orthogonal
    assert isinstance(ini.deserialize("lecun_normal"), ini.LecunNormal)
    c = ini.deserialize({"module": "keras.initializers", "class_name": "Constant", "config": {"value": 2.0},
                         "registered_name": None})
    assert c(shape=(2,)).numpy().tolist() == [2.0, 2.0]
    assert np.asarray(ini.identity(gain=2.0)(shape=(2, 3))).tolist() == [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]


def test_orthogonal_regularizer_matches_keras():
    R = tf.keras.regularizers
    w = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [1.5, 0.2, -0.7], [0.0, 1.0, 1.0]], np.float32)
    assert float(R.OrthogonalRegularizer(factor=0.1)(tf.constant(w))) == pytest.approx(0.03573056682944298, rel=1e-6)
    assert float(R.OrthogonalRegularizer(0.05, mode="columns")(tf.constant(w))) == pytest.approx(
        0.008008022792637348, rel=1e-6)
    assert R.OrthogonalRegularizer(factor=0.1).get_config() == {"factor": 0.10000000149011612, "mode": "rows"}
    assert R.serialize(R.OrthogonalRegularizer(0.2, "columns")) == {
        "module": "keras.regularizers", "class_name": "OrthogonalRegularizer",
        "config": {"factor": 0.20000000298023224, "mode": "columns"}, "registered_name": None}
    l1l2 = R.deserialize({"module": "keras.regularizers", "class_name": "L1L2", "config": {"l1": 0.1, "l2": 0.2},
                          "registered_name": None})
    assert l1l2.get_config() == pytest.approx({"l1": 0.1, "l2": 0.2})
    assert isinstance(R.deserialize("l2"), R.L2) and isinstance(R.get("orthogonal_regularizer"),
                                                                 R.OrthogonalRegularizer)
    d = tf.keras.layers.Dense(3, kernel_regularizer=R.OrthogonalRegularizer(0.1),
                              kernel_initializer=tf.keras.initializers.Constant(w[:3]))
    d.build((None, 3))
    assert float(d.losses[0]) == pytest.approx(0.02822835184633732, rel=1e-6)
    with pytest.raises(ValueError, match="must have rank 2"):
        R.OrthogonalRegularizer()(tf.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="Invalid value for argument `mode`"):
        R.OrthogonalRegularizer(mode="diag")


def test_backend_config_and_helpers_match_keras():
    K = tf.keras.backend
    assert [K.backend(), K.epsilon(), K.floatx(), K.image_data_format()] == ["tensorflow", 1e-07, "float32",
                                                                             "channels_last"]
    assert [K.result_type("int64", "float16"), K.result_type("float16", "float64"), K.result_type("bool", "int8"),
            K.result_type("int32"), K.result_type(), K.result_type("uint32", "int32"),
            K.result_type("bfloat16", "float16")] == ["float16", "float64", "int8", "int32", "float32", "int64",
                                                       "float32"]
    assert K.standardize_dtype(tf.float32) == "float32" and K.is_float_dtype("float16") and K.is_int_dtype("uint8")
    first = K.get_uid("ns11_prefix")
    assert K.get_uid("ns11_prefix") == first + 1
    x = tf.constant([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    assert K.int_shape(x) == (2, 3) and K.ndim(x) == 2 and K.dtype(x) == "float32"
    assert K.count_params(tf.Variable(tf.zeros((2, 3)))) == 6
    assert K.is_keras_tensor(tf.keras.Input((3,))) and not K.is_keras_tensor(x)
    assert isinstance(K.zeros((2, 2)), tf.Variable) and K.constant([1, 2]).dtype == tf.float32
    assert K.arange(5).dtype == tf.int32 and K.arange(-3).numpy().tolist() == []
    assert float(K.mean(tf.constant([True, False]))) == 0.5
    np.testing.assert_allclose(K.relu(x, alpha=0.1, max_value=2.5, threshold=0.7).numpy(),
                               [[1.0, -0.27, 2.5], [-0.02, 2.5, -0.17]], rtol=1e-6)
    np.testing.assert_allclose(K.hard_sigmoid(x).numpy(), [[0.7, 0.1, 1.0], [0.6, 1.0, 0.3]], rtol=1e-6)
    np.testing.assert_allclose(K.sqrt(tf.constant([-1.0, 4.0])).numpy(), [0.0, 2.0])
    np.testing.assert_allclose(K.clip(x, 3, 2).numpy(), np.full((2, 3), 3.0))
    y = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    np.testing.assert_allclose(K.dot(x, y).numpy(), np.tensordot(x.numpy(), y.numpy(), [[1], [1]]))
    assert K.repeat(x, 2).shape == (2, 2, 3) and K.repeat_elements(x, 2, 1).numpy()[0].tolist() == [
        1.0, 1.0, -2.0, -2.0, 3.0, 3.0]
    assert K.temporal_padding(y, (1, 2)).shape == (2, 6, 4)
    assert K.spatial_2d_padding(tf.zeros((1, 2, 2, 1))).shape == (1, 4, 4, 1)
    assert K.in_top_k(x, tf.constant([2, 0]), 1).numpy().tolist() == [True, False]
    assert str(K.cast_to_floatx([1, 2]).dtype) == "float32"
    v = K.variable([1.0, 2.0])
    K.set_value(v, [3, 4])
    K.update_add(v, [1.0, 1.0])
    assert K.batch_get_value([v])[0].tolist() == [4.0, 5.0]
    with pytest.raises(ValueError, match="Unknown `floatx` value: float8"):
        K.set_floatx("float8")
    with pytest.raises(NotImplementedError, match="channels_first"):
        K.set_image_data_format("channels_first")


def test_set_floatx_sets_the_default_layer_dtype_after_clear_session():
    K = tf.keras.backend
    try:
        K.set_floatx("float64")
        K.clear_session()  # as Keras: the global policy is fixed at first use, clear_session resets it
        d = tf.keras.layers.Dense(2)
        d.build((None, 3))
        assert K.floatx() == "float64" and d.kernel.dtype == tf.float64
    finally:
        K.set_floatx("float32")
        K.clear_session()
    d = tf.keras.layers.Dense(2)
    d.build((None, 3))
    assert d.kernel.dtype == tf.float32
