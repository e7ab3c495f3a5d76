"""F1/FBeta, R2, the IoU family and the correlation metrics of Keras 3.15, values pinned from real
TF 2.21 / Keras 3.15 (tests never import TF)."""

import numpy as np
import pytest

import tapeflow as tf

_MET = {
    "f1_None": [0.4999999, 0.4999999, 0.9999998],
    "fb_None": [1.0, 0.8695652, 1.0],
    "f1_micro": 0.59999996,
    "fb_micro": 0.95890403,
    "f1_macro": 0.66666657,
    "fb_macro": 0.95652175,
    "f1_weighted": 0.5999999,
    "fb_weighted": 0.96273291,
    "r2_None": [0.531068, 0.3494118],
    "r2_uniform_average": 0.44023994,
    "r2_variance_weighted_average": 0.45883048,
    "r2_adj": 0.91252333,
    "miou": 0.33333334,
    "miou_ign": 0.1875,
    "iou": 0.33333334,
    "biou": 0.41666669,
    "biou1": 0.49999994,
    "ohiou": 0.66666663,
    "ohmiou": 0.55555552,
    "pearson": [1.0, 1.0, 1.0, 1.0],
    "pearson0": [0.9782687, 0.9399502],
    "ccc": [0.7936506, 0.8982035, 0.9102902, 0.8181818],
    "pearson_m": 0.95910943,
    "ccc_m": 0.90964574,
}

M = tf.keras.metrics
YT = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]], np.float32)
YP = np.array([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.25, 0.25, 0.5], [0.9, 0.05, 0.05], [0.4, 0.55, 0.05]], np.float32)
SW = np.array([1.0, 0.5, 2.0, 0.0, 1.5], np.float32)
RT = np.array([[1.0, 2.0], [2.0, 0.5], [3.0, 1.5], [4.5, 3.0]], np.float32)
RP = np.array([[1.2, 1.7], [1.9, 0.9], [3.3, 1.0], [4.0, 2.5]], np.float32)


def _close(got, key):
    np.testing.assert_allclose(np.asarray(got), _MET[key], rtol=2e-6, atol=1e-7, err_msg=key)


@pytest.mark.parametrize("avg", [None, "micro", "macro", "weighted"])
def test_f_scores(avg):
    m = M.F1Score(average=avg)
    m.update_state(YT, YP)
    _close(m.result(), f"f1_{avg}")
    m = M.FBetaScore(average=avg, beta=2.0, threshold=0.3)
    m.update_state(YT, YP, sample_weight=SW)
    m.update_state(YT[:2], YP[:2])
    _close(m.result(), f"fb_{avg}")
    m.reset_state()
    m.update_state(YT, YP)
    assert np.all(np.isfinite(np.asarray(m.result())))


def test_f_score_configs_and_errors():
    assert M.F1Score(name="f1").get_config() == {"name": "f1", "dtype": "float32", "average": None,
                                                 "threshold": None}
    assert M.FBetaScore(beta=0.5, name="fb").get_config() == {"name": "fb", "dtype": "float32", "average": None,
                                                              "beta": 0.5, "threshold": None}
    with pytest.raises(ValueError, match="Invalid `beta` argument value. It should be a Python float"):
        M.FBetaScore(beta=2)
    with pytest.raises(ValueError, match="Invalid `average` argument value"):
        M.F1Score(average="samples")
    with pytest.raises(ValueError, match="FBetaScore expects 2D inputs"):
        M.F1Score().update_state(np.array([1.0, 0.0]), np.array([0.3, 0.1]))


@pytest.mark.parametrize("agg", [None, "uniform_average", "variance_weighted_average"])
def test_r2_score(agg):
    m = M.R2Score(class_aggregation=agg)
    m.update_state(RT, RP)
    m.update_state(RT[:2] + 1, RP[:2], sample_weight=np.array([1.0, 2.0]))
    _close(m.result(), f"r2_{agg}")


def test_r2_adjusted_config_and_rank_error():
    m = M.R2Score(num_regressors=1)
    m.update_state(RT[:, :1], RP[:, :1])
    _close(m.result(), "r2_adj")
    assert M.R2Score(name="r2").get_config() == {"name": "r2", "dtype": "float32",
                                                 "class_aggregation": "uniform_average", "num_regressors": 0}
    with pytest.raises(ValueError, match=r"R2Score expects 2D inputs with shape \(batch_size, output_dim\). Received "
                                         r"input shapes: y_pred.shape=\(4,\) and y_true.shape=\(4,\)."):
        M.R2Score().update_state(RT[:, 0], RP[:, 0])


def test_iou_family():
    lt, lp = np.array([0, 1, 2, 2, 1, 0, 3]), np.array([0, 2, 2, 1, 1, 0, 0])
    m = M.MeanIoU(num_classes=4)
    m.update_state(lt, lp)
    _close(m.result(), "miou")
    m = M.MeanIoU(num_classes=4, ignore_class=0)
    m.update_state(lt, lp, sample_weight=np.array([1, 2, 1, 1, 3, 1, 1]))
    _close(m.result(), "miou_ign")
    m = M.IoU(num_classes=4, target_class_ids=[1, 2])
    m.update_state(lt, lp)
    _close(m.result(), "iou")
    bt, bp = np.array([0, 1, 1, 0, 1]), np.array([0.2, 0.5, 0.3, 0.6, 0.9])
    m = M.BinaryIoU(target_class_ids=[0, 1], threshold=0.4)
    m.update_state(bt, bp)
    _close(m.result(), "biou")
    m = M.BinaryIoU(target_class_ids=[1])
    m.update_state(bt, bp)
    _close(m.result(), "biou1")
    m = M.OneHotIoU(num_classes=3, target_class_ids=[0, 2])
    m.update_state(YT, YP)
    _close(m.result(), "ohiou")
    m = M.OneHotMeanIoU(num_classes=3)
    m.update_state(YT, YP)
    _close(m.result(), "ohmiou")
    m.reset_state()
    assert float(m.result()) == 0.0
    assert M.MeanIoU(num_classes=3, name="miou").get_config() == {"num_classes": 3, "name": "miou", "dtype": "int64",
                                                     "ignore_class": None, "sparse_y_true": True,
                                                     "sparse_y_pred": True, "axis": -1}
    assert M.BinaryIoU(name="b").get_config() == {"target_class_ids": [0, 1], "threshold": 0.5, "name": "b",
                                                  "dtype": "int64"}
    assert M.BinaryIoU().name.startswith("binary_io_u") and M.OneHotMeanIoU(3).name.startswith("one_hot_mean_io_u")
    with pytest.raises(ValueError, match=r"Target class id 3 is out of range, which is \[0, 3\)."):
        M.IoU(num_classes=3, target_class_ids=[3])


def test_correlations():
    _close(M.pearson_correlation(RT, RP), "pearson")
    _close(M.pearson_correlation(RT, RP, axis=0), "pearson0")
    _close(M.concordance_correlation(RT, RP), "ccc")
    m = M.PearsonCorrelation()
    m.update_state(RT.T, RP.T)
    _close(m.result(), "pearson_m")
    m = M.ConcordanceCorrelation()
    m.update_state(RT.T, RP.T)
    _close(m.result(), "ccc_m")
    assert M.PearsonCorrelation(name="pc").get_config() == {"name": "pc", "dtype": "float32", "axis": -1}


def test_scores_in_compile_and_tf_function():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(3, activation="softmax")])
    model.compile(loss="categorical_crossentropy", metrics=[M.F1Score(average="macro", name="f1_score"),
                                                               M.OneHotMeanIoU(3, name="one_hot_mean_io_u")])
    logs = model.evaluate(YT, YP, verbose=0, return_dict=True)
    assert set(logs) >= {"loss", "f1_score", "one_hot_mean_io_u"}
    m = M.R2Score()

    @tf.function
    def step(a, b):
        m.update_state(a, b)

    m.update_state(RT, RP)  # builds the state eagerly
    step(tf.constant(RT[:2] + 1), tf.constant(RP[:2]))
    assert np.isfinite(float(m.result()))


_AT = {
    "SensitivityAtSpecificity_200": 1.0,
    "SensitivityAtSpecificity_7": 0.775375485420227,
    "SensitivityAtSpecificity_1": 0.775375485420227,
    "SpecificityAtSensitivity_200": 0.8138098120689392,
    "SpecificityAtSensitivity_7": 0.5627464056015015,
    "SpecificityAtSensitivity_1": 0.0,
    "PrecisionAtRecall_200": 0.8084666728973389,
    "PrecisionAtRecall_7": 0.7802680730819702,
    "PrecisionAtRecall_1": 0.7802680730819702,
    "RecallAtPrecision_200": 0.8244974613189697,
    "RecallAtPrecision_7": 0.775375485420227,
    "RecallAtPrecision_1": 0.775375485420227,
    "cls": 0.3333333432674408,
}


@pytest.mark.parametrize("cls,value", [("SensitivityAtSpecificity", 0.6), ("SpecificityAtSensitivity", 0.8),
                                       ("PrecisionAtRecall", 0.7), ("RecallAtPrecision", 0.75)])
def test_rate_at_rate_metrics(cls, value):
    rng = np.random.RandomState(3)
    yt = rng.randint(0, 2, 40).astype(np.float32)
    yp = np.clip(0.35 * yt + rng.rand(40) * 0.7, 0, 1).astype(np.float32)
    sw = rng.rand(40).astype(np.float32)
    for nt in (200, 7, 1):
        m = getattr(M, cls)(value, num_thresholds=nt, name="m")
        m.update_state(yt, yp)
        m.update_state(yt[:10], yp[:10], sample_weight=sw[:10])
        assert float(m.result()) == pytest.approx(_AT[f"{cls}_{nt}"], rel=1e-6, abs=1e-7)
    key = {"SensitivityAtSpecificity": "specificity", "SpecificityAtSensitivity": "sensitivity",
           "PrecisionAtRecall": "recall", "RecallAtPrecision": "precision"}[cls]
    assert getattr(M, cls)(value, name="m").get_config() == {"name": "m", "dtype": "float32", "class_id": None,
                                                              "num_thresholds": 200, key: value}


def test_rate_at_rate_class_id_and_errors():
    rng = np.random.RandomState(3)
    rng.randint(0, 2, 40), rng.rand(40), rng.rand(40)  # the draws of the test above, as in the Keras run
    yt2 = np.eye(3)[rng.randint(0, 3, 12)].astype(np.float32)
    yp2 = rng.rand(12, 3).astype(np.float32)
    m = M.PrecisionAtRecall(0.5, class_id=2, name="m")
    m.update_state(yt2, yp2)
    assert float(m.result()) == pytest.approx(0.3333333432674408, rel=1e-6)
    with pytest.raises(ValueError, match=r"Argument `precision` must be in the range \[0, 1\]. Received: "
                                         r"precision=1.5"):
        M.RecallAtPrecision(1.5)
