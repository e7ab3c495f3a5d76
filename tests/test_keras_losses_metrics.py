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
    assert K.losses.get("mse") is K.losses.mean_squared_error  # Keras 3: a function name gives the function


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


# Keras 3.15's confusion-matrix metrics (update_confusion_matrix_variables) and Mean's reduce_to_samplewise_values:
# labels and predictions squeezed or expanded to one rank, sample_weight expanded, then broadcast (an error where
# Keras's broadcast_to is one); evenly spaced thresholds take Keras's bucketed path. Two updates each: weighted, then
# not. Values from TensorFlow 2.21.0 / Keras 3.15.1 on the same data.
def _sample_weight_data() -> tuple[dict, dict]:
    rng = np.random.default_rng(3)
    p1 = rng.random((8, 1)).astype("f4")
    p1[0, 0], p1[1, 0] = 0.5, 0.3  # on thresholds
    y1 = (rng.random((8, 1)) > 0.4).astype("f4")
    p3 = rng.random((8, 3)).astype("f4")
    p3[2, 1], p3[3, 2] = 1.0, 0.0
    y3 = (rng.random((8, 3)) > 0.5).astype("f4")
    sw1, sw3 = rng.random(8).astype("f4"), rng.random((8, 3)).astype("f4")
    logits = (rng.normal(size=(8, 1)) * 2).astype("f4")
    data = {"2d": (y1, p1), "ytrue1d": (y1[:, 0], p1), "ypred1d": (y1, p1[:, 0]), "1d": (y1[:, 0], p1[:, 0]),
            "logits": (y1[:, 0], logits), "multi": (y3, p3)}
    sws = {"none": None, "sw1d": sw1, "sw2d": sw1[:, None], "scalar": np.float32(0.7),
           "list": [float(v) for v in sw1], "sw3": sw3, "sw3x1": sw3[..., None]}
    return data, sws


_DATA, _SW = _sample_weight_data()
SAMPLE_WEIGHT_CASES = {
    ("AUC()", "ytrue1d", "sw1d"): 0.24311891198158264,
    ("AUC(num_thresholds=11)", "ytrue1d", "scalar"): 0.3333333432674408,
    ("AUC(curve='PR')", "ytrue1d", "sw2d"): 0.627559244632721,
    ("AUC(thresholds=[0.2, 0.5, 0.7])", "ytrue1d", "sw1d"): 0.14404158294200897,
    ("AUC(thresholds=[0.25, 0.5, 0.75])", "ypred1d", "sw1d"): 0.14404158294200897,
    ("AUC(from_logits=True)", "logits", "sw1d"): 1.0,
    ("Precision()", "ytrue1d", "sw1d"): 0.38709619641304016,
    ("Recall()", "ytrue1d", "list"): 0.11398570984601974,
    ("Precision()", "1d", "sw1d"): 0.38709619641304016,
    ("Precision(thresholds=[0.0, 0.5, 1.0])", "ytrue1d", "sw1d"): [0.7703859806060791, 0.38709619641304016, 0.0],
    ("Recall(thresholds=[0.1, 0.3, 0.8])", "2d", "sw1d"): [0.8084592819213867, 0.6163138151168823, 0.0],
    ("Precision(thresholds=[i / 10 for i in range(11)])", "1d", "sw1d"):
        [0.770386, 0.730639, 0.6740352, 0.7734943, 0.7734943, 0.3870962, 0.0, 0.0, 0.0, 0.0, 0.0],
    ("TruePositives()", "ytrue1d", "sw1d"): 1.1689872741699219,
    ("TrueNegatives(thresholds=[0.0, 0.5, 1.0])", "ypred1d", "sw2d"): [0.0, 1.2057750225067139, 3.056676149368286],
    ("FalseNegatives()", "2d", "scalar"): 8.5,
    ("FalsePositives()", "ytrue1d", "none"): 2.0,
    ("SensitivityAtSpecificity(0.5, num_thresholds=11)", "ytrue1d", "sw1d"): 0.0,
    ("SpecificityAtSensitivity(0.5)", "ytrue1d", "sw1d"): 0.394472599029541,
    ("PrecisionAtRecall(0.5)", "2d", "sw2d"): 0.773494303226471,
    ("RecallAtPrecision(0.5)", "ytrue1d", "none"): 1.0,
    ("Precision(class_id=1)", "multi", "sw1d"): 0.5042600631713867,
    ("Recall(top_k=1)", "multi", "sw3"): 0.18687866628170013,
    ("Precision(top_k=2)", "multi", "sw1d"): 0.5871957540512085,
    ("Precision(top_k=2, class_id=1)", "multi", "sw2d"): 0.4555692672729492,
    ("Recall(thresholds=[0.3, 0.6], class_id=0)", "multi", "sw1d"): [0.18732336163520813, 0.18732336163520813],
    ("Precision(top_k=2, thresholds=[0.2, 0.6])", "multi", "scalar"): [0.5625, 0.6363635659217834],
    ("SensitivityAtSpecificity(0.4, class_id=1)", "multi", "sw1d"): 1.0,
    ("AUC()", "multi", "sw1d"): 0.4976824223995209,
    ("TruePositives(thresholds=[0.3, 0.6])", "multi", "sw3"): [11.422600746154785, 10.208913803100586],
    ("BinaryAccuracy()", "ytrue1d", "sw1d"): 0.17838943004608154,
    ("BinaryAccuracy()", "multi", "sw3"): 0.49630025029182434,
    ("MeanSquaredError()", "ypred1d", "sw1d"): 0.4463816285133362,
    ("MeanAbsoluteError()", "ytrue1d", "sw2d"): 0.6375014781951904,
    ("RootMeanSquaredError()", "ytrue1d", "sw1d"): 0.6681180000305176,
    ("Accuracy()", "ytrue1d", "sw1d"): 0.0,
    ("AUC()", "1d", "sw2d"): "InvalidArgumentError",
    ("Precision(class_id=1)", "multi", "sw3"): "InvalidArgumentError",
    ("Recall(class_id=2)", "multi", "sw3x1"): "InvalidArgumentError",
    ("MeanSquaredError()", "multi", "sw3x1"): "InvalidArgumentError",
}


@pytest.mark.parametrize("case", list(SAMPLE_WEIGHT_CASES), ids=lambda c: "-".join(c))
def test_metrics_broadcast_sample_weight_as_keras(case):
    expr, data, sw = case
    m = eval("K.metrics." + expr)
    y_true, y_pred = _DATA[data]
    want = SAMPLE_WEIGHT_CASES[case]
    if want == "InvalidArgumentError":
        with pytest.raises(tf.errors.InvalidArgumentError):
            m.update_state(y_true, y_pred, sample_weight=_SW[sw])
        return
    if _SW[sw] is not None:
        m.update_state(y_true, y_pred, sample_weight=_SW[sw])
    else:
        m.update_state(y_true, y_pred)
    m.update_state(y_true, y_pred)
    np.testing.assert_allclose(m.result().numpy(), want, rtol=2e-6, atol=1e-7)


def test_confusion_metrics_in_fit_with_a_1d_sample_weight_on_a_batch_by_1_output():
    # labels (48,), output (48, 1), sample_weight (48,): compile(metrics=...) unweighted, weighted_metrics weighted
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 4)).astype("float32")
    y = (rng.random(48) > 0.5).astype("float32")
    sw = rng.random(48).astype("float32")
    M = K.metrics
    model = K.Sequential([K.Input((4,)), K.layers.Dense(1, activation="sigmoid", bias_initializer="zeros",
                          kernel_initializer=K.initializers.Constant(np.array([[0.3], [-0.2], [0.5], [0.1]], "f4")))])
    model.compile(K.optimizers.SGD(0.1), "binary_crossentropy",
                  metrics=[M.AUC(name="auc"), M.Precision(name="p"), M.Recall(name="r"), "accuracy"],
                  weighted_metrics=[M.AUC(name="wauc"), M.Precision(name="wp"), M.Recall(name="wr"),
                                    M.TruePositives(name="wtp"), M.BinaryAccuracy(name="wacc"),
                                    M.AUC(curve="PR", name="wpr")])
    history = model.fit(x, y, sample_weight=sw, batch_size=24, epochs=2, verbose=0, shuffle=False).history
    ev = model.evaluate(x, y, sample_weight=sw, batch_size=16, verbose=0, return_dict=True)
    want_fit = {"accuracy": [0.4791667, 0.4791667], "auc": [0.4904348, 0.4947826], "loss": [0.4333562, 0.4308207],
                "p": [0.5, 0.5], "r": [0.4, 0.4], "wacc": [0.5265362, 0.5265362], "wauc": [0.5145596, 0.5195593],
                "wp": [0.5090774, 0.5090774], "wpr": [0.4917728, 0.4944367], "wr": [0.4702337, 0.4702337],
                "wtp": [6.3395891, 6.3395891]}
    want_eval = {"accuracy": 0.4583333, "auc": 0.4973913, "loss": 0.4286523, "p": 0.4761905, "r": 0.4,
                 "wacc": 0.5149084, "wauc": 0.5236779, "wp": 0.4961083, "wpr": 0.4967684, "wr": 0.4702337,
                 "wtp": 6.3395891}
    assert sorted(history) == sorted(want_fit) and sorted(ev) == sorted(want_eval)
    for k in want_fit:
        np.testing.assert_allclose(history[k], want_fit[k], rtol=2e-6, err_msg=k)
        np.testing.assert_allclose(ev[k], want_eval[k], rtol=2e-6, err_msg=k)


def test_a_metric_of_several_thresholds_logs_its_array_as_keras():
    # Keras keeps Recall(thresholds=[0.3, 0.6])'s array in history and evaluate's dict (values from TF 2.21)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 3)).astype("f4"), (rng.random(16) > 0.5).astype("f4")
    model = K.Sequential([K.Input((3,)), K.layers.Dense(1, activation="sigmoid", bias_initializer="zeros",
                          kernel_initializer=K.initializers.Constant(np.array([[0.5], [-0.3], [0.2]], "f4")))])
    model.compile(K.optimizers.SGD(0.5), "binary_crossentropy",
                  metrics=[K.metrics.Recall(thresholds=[0.3, 0.6], name="r")])
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history
    ev = model.evaluate(x, y, verbose=0, return_dict=True)
    assert isinstance(history["r"][0], np.ndarray) and isinstance(history["loss"][0], float)
    np.testing.assert_allclose(history["r"], [[0.8, 0.0], [1.0, 0.0]], rtol=1e-6)
    np.testing.assert_allclose(history["loss"], [0.8186811, 0.7137168], rtol=1e-6)
    np.testing.assert_allclose(ev["r"], [1.0, 0.0])
    np.testing.assert_allclose(ev["loss"], 0.6599997, rtol=1e-6)
