"""tf.keras.losses and tf.keras.metrics, pinned against TF 2.21 / Keras 3.15."""

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras

# ``_compute`` run under TensorFlow 2.21.0 / Keras 3.15.1, rounded to 7 decimals.
EXPECTED = {'acc': 0.75,
 'auc': 0.8269231,
 'auc_10': 0.7988782,
 'auc_pr': 0.8469752,
 'bacc': 0.5833333,
 'bce': 1.2004013,
 'bce_logits_ls': 0.9081039,
 'cacc': 0.0,
 'cce': 2.4389379,
 'cce_logits_ls': 2.3499997,
 'huber': 0.1241235,
 'mae': 0.5576735,
 'mean': 3.2,
 'mean_w_sw': 0.4711962,
 'mse': 0.3692076,
 'mse_fn': [0.4026392, 0.2928812, 0.2312565, 0.5500535],
 'mse_none': [0.4026392, 0.2928812, 0.2312565, 0.5500535],
 'mse_sum': 1.4768305,
 'mse_sw': 0.4122967,
 'prec': 0.7407407,
 'prec_t': [0.65, 1.0],
 'rec': 0.7692308,
 'scacc': 0.0,
 'scacc_sw': 0.0,
 'scce': 2.4389379,
 'scce_fn': [1.1969843, 4.1710043, 3.2314894, 1.1562738],
 'scce_logits_sw': 1.3987585}


def _res(m, *a, **k):
    m.update_state(*a, **k)
    return m.result()


def _compute():
    r = np.random.default_rng(5)
    yt = r.random((4, 3)).astype("float32")
    yp = r.random((4, 3)).astype("float32") * 2 - 0.5
    lab = np.array([0, 2, 1, 2])
    onehot = np.eye(3, dtype="float32")[lab]
    logits = (r.random((4, 3)).astype("float32") - 0.5) * 4
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    bt = (r.random((4, 3)) > 0.5).astype("float32")
    bp = r.random((4, 3)).astype("float32")
    sw = np.array([1.0, 0.5, 0.0, 2.0], "float32")
    out = {}
    out["mse"] = K.losses.MeanSquaredError()(yt, yp)
    out["mse_sw"] = K.losses.MeanSquaredError()(yt, yp, sample_weight=sw)
    out["mse_sum"] = K.losses.MeanSquaredError(reduction="sum")(yt, yp)
    out["mse_none"] = K.losses.MeanSquaredError(reduction=None)(yt, yp)
    out["mae"] = K.losses.MeanAbsoluteError()(yt, yp)
    out["huber"] = K.losses.Huber(delta=0.3)(yt, yp)
    out["bce"] = K.losses.BinaryCrossentropy()(bt, bp)
    out["bce_logits_ls"] = K.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.2)(bt, logits)
    out["cce"] = K.losses.CategoricalCrossentropy()(onehot, probs)
    out["cce_logits_ls"] = K.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)(onehot, logits)
    out["scce"] = K.losses.SparseCategoricalCrossentropy()(lab, probs)
    out["scce_logits_sw"] = K.losses.SparseCategoricalCrossentropy(from_logits=True)(lab, logits, sample_weight=sw)
    out["scce_fn"] = K.losses.sparse_categorical_crossentropy(lab, logits, from_logits=True)
    out["mse_fn"] = K.losses.mse(yt, yp)
    out["mean_w_sw"] = K.losses.MeanSquaredError(reduction="mean_with_sample_weight")(yt, yp, sample_weight=sw)
    # metrics
    res = _res
    out["acc"] = res(K.metrics.Accuracy(), [1, 2, 3, 4], [1, 2, 0, 4])
    out["bacc"] = res(K.metrics.BinaryAccuracy(), bt, bp)
    out["cacc"] = res(K.metrics.CategoricalAccuracy(), onehot, logits)
    out["scacc"] = res(K.metrics.SparseCategoricalAccuracy(), lab, logits)
    out["scacc_sw"] = res(K.metrics.SparseCategoricalAccuracy(), lab, logits, sample_weight=sw)
    yb = (r.random(50) > 0.5).astype("float32")
    pb = np.clip(yb * 0.3 + r.random(50) * 0.7, 0, 1).astype("float32")
    out["auc"] = res(K.metrics.AUC(), yb, pb)
    out["auc_pr"] = res(K.metrics.AUC(curve="PR"), yb, pb)
    out["auc_10"] = res(K.metrics.AUC(num_thresholds=10), yb, pb)
    out["prec"] = res(K.metrics.Precision(), yb, pb)
    out["rec"] = res(K.metrics.Recall(), yb, pb)
    out["prec_t"] = res(K.metrics.Precision(thresholds=[0.3, 0.7]), yb, pb)
    m = K.metrics.Mean()
    m.update_state([1.0, 2.0, 3.0])
    m.update_state(5.0, sample_weight=2.0)
    out["mean"] = m.result()
    return out


_RESULTS = {}


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_loss_or_metric_matches_tf(key):
    if not _RESULTS:
        _RESULTS.update(_compute())
    np.testing.assert_allclose(np.asarray(_RESULTS[key], np.float64), EXPECTED[key], rtol=2e-6, atol=1e-6)


# ----------------------------------------------------------------------------
# Behaviour
# ----------------------------------------------------------------------------

def test_accuracy_metrics_count_hits():
    logits = np.array([[0.1, 2.0, 0.3], [3.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 2.0]], np.float32)
    labels = np.array([1, 0, 1, 2])
    m = K.metrics.SparseCategoricalAccuracy()
    m.update_state(labels, logits)
    assert float(m.result()) == pytest.approx(0.75)
    m.update_state(labels[:2], logits[:2], sample_weight=[0.0, 2.0])
    assert float(m.result()) == pytest.approx(5 / 6)
    m.reset_state()
    assert float(m.result()) == 0.0
    c = K.metrics.CategoricalAccuracy()
    c.update_state(np.eye(3)[labels], logits)
    assert float(c.result()) == pytest.approx(0.75)
    b = K.metrics.BinaryAccuracy(threshold=0.7)
    b.update_state([[1], [0], [1]], [[0.8], [0.6], [0.5]])
    assert float(b.result()) == pytest.approx(2 / 3)


def test_loss_classes_validate_arguments_and_shapes():
    with pytest.raises(ValueError, match="reduction"):
        K.losses.MeanSquaredError(reduction="avg")
    with pytest.raises(ValueError, match="same shape"):
        K.losses.CategoricalCrossentropy()(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="rank"):
        K.losses.SparseCategoricalCrossentropy()(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="loss identifier"):
        K.losses.get("nope")
    assert isinstance(K.losses.get("mse"), K.losses.MeanSquaredError)


def test_sparse_labels_with_a_trailing_axis_of_one():
    logits = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
    a = K.losses.SparseCategoricalCrossentropy(from_logits=True)([[1], [0]], logits)
    b = K.losses.SparseCategoricalCrossentropy(from_logits=True)([1, 0], logits)
    assert float(a) == pytest.approx(float(b))


def test_losses_are_differentiable():
    logits = tf.Variable(np.array([[1.0, 2.0, 0.5]], np.float32))
    with tf.GradientTape() as tape:
        loss = K.losses.SparseCategoricalCrossentropy(from_logits=True)([1], logits)
    g = tape.gradient(loss, logits).numpy()
    p = np.exp([1.0, 2.0, 0.5]) / np.exp([1.0, 2.0, 0.5]).sum()
    np.testing.assert_allclose(g, [p - [0, 1, 0]], rtol=1e-5)


def test_metrics_update_inside_tf_function():
    loss_metric = K.metrics.Mean(name="train_loss")
    acc = K.metrics.SparseCategoricalAccuracy()
    prec = K.metrics.Precision()

    @tf.function
    def step(labels, logits, loss):
        loss_metric(loss)
        acc(labels, logits)
        prec.update_state(tf.cast(labels > 0, tf.float32), tf.sigmoid(logits[:, 1]))

    logits = tf.constant([[0.1, 2.0], [3.0, 0.0], [0.0, 1.0]])
    step(tf.constant([1, 0, 0]), logits, tf.constant(2.0))
    step(tf.constant([1, 1, 1]), logits, tf.constant(4.0))
    assert float(loss_metric.result()) == pytest.approx(3.0)
    assert float(acc.result()) == pytest.approx(4 / 6)
    # predicted positive (sigmoid(logit) > 0.5) for samples 0 and 2 in both steps; 3 of those 4 are labelled 1
    assert float(prec.result()) == pytest.approx(3 / 4)
    assert len(acc.variables) == 2 and all(not v.trainable for v in acc.variables)
