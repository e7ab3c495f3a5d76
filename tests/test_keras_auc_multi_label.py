"""tf.keras.metrics.AUC with multi_label (one confusion matrix per label) and label_weights, Keras 3.15's numbers
(pinned from TF 2.21: after one update, then after a second, weighted one)."""

import warnings

import numpy as np
import pytest

import tapeflow as tf

Y_TRUE = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1], [1, 0, 0]], np.float32)
Y_PRED = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.4], [0.7, 0.55, 0.1], [0.2, 0.3, 0.95], [0.45, 0.6, 0.35]],
                  np.float32)
SW = np.array([1.0, 0.5, 2.0], np.float32)
CASES = [
    (dict(multi_label=True), 0.9444444179534912, 0.7037037014961243, (200, 3)),
    (dict(multi_label=True, num_labels=3), 0.9444444179534912, 0.7037037014961243, (200, 3)),
    (dict(multi_label=True, curve="PR"), 0.9324224591255188, 0.7856481671333313, (200, 3)),
    (dict(multi_label=True, label_weights=[0.2, 0.3, 0.5]), 0.949999988079071, 0.6500000357627869, (200, 3)),
    (dict(multi_label=True, curve="PR", label_weights=[1.0, 0.0, 2.0]), 1.0, 0.7834110260009766, (200, 3)),
    (dict(multi_label=True, thresholds=[0.25, 0.5, 0.75]), 0.9166666865348816, 0.6824074387550354, (5, 3)),
    (dict(multi_label=True, thresholds=[0.1, 0.3, 0.75], summation_method="minoring"), 0.8333333134651184,
     0.6018518805503845, (5, 3)),
    (dict(label_weights=[0.2, 0.3, 0.5]), 0.9396135210990906, 0.6748310327529907, (200,)),
    (dict(label_weights=[0.2, 0.3, 0.5], thresholds=[0.1, 0.3, 0.75]), 0.8904991745948792, 0.6862331032752991, (5,)),
    (dict(multi_label=True, num_thresholds=7, from_logits=True), 0.75, 0.7314814925193787, (7, 3)),
]


@pytest.mark.parametrize("kwargs, first, second, shape", CASES)
def test_auc_multi_label_and_label_weights_as_keras(kwargs, first, second, shape):
    m = tf.keras.metrics.AUC(**kwargs)
    m.update_state(Y_TRUE, Y_PRED)
    assert float(m.result()) == pytest.approx(first, rel=1e-6)
    m.update_state(Y_TRUE[:3], Y_PRED[:3][::-1], sample_weight=SW)
    assert float(m.result()) == pytest.approx(second, rel=1e-6)
    assert tuple(m.true_positives.shape) == shape


def test_auc_multi_label_errors_and_config():
    with pytest.raises(ValueError, match="`num_labels` is needed only when `multi_label` is True."):
        tf.keras.metrics.AUC(num_labels=3)
    with pytest.raises(ValueError, match="`y_pred` must have rank 2 when `multi_label=True`. Found rank 1"):
        tf.keras.metrics.AUC(multi_label=True).update_state(np.ones(3), np.ones(3))
    config = tf.keras.metrics.AUC(multi_label=True, num_labels=3, label_weights=[1, 2, 3]).get_config()
    assert config["multi_label"] is True and config["num_labels"] == 3
    np.testing.assert_array_equal(config["label_weights"].numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("kw, first, second", [
    ({}, 0.3331473, 0.3559561), ({"curve": "PR"}, 0.4225159, 0.4602173),
    ({"multi_label": True, "num_labels": 3}, 0.3370371, 0.3713241),
    ({"multi_label": True, "label_weights": [1.0, 2.0, 0.5]}, 0.3154401, 0.3409603),
    ({"summation_method": "minoring"}, 0.3314732, 0.3539848),
    ({"curve": "PR", "summation_method": "majoring", "num_thresholds": 50}, 0.4394736, 0.4704788),
])
def test_auc_result_inside_tf_function(kw, first, second):
    rng = np.random.default_rng(0)
    yt, yp = (rng.random((40, 3)) > 0.5).astype("float32"), rng.random((40, 3)).astype("float32")
    m = tf.keras.metrics.AUC(**kw)

    @tf.function
    def step(a, b):
        m.update_state(a, b)
        return m.result()

    out = step(yt[:20], yp[:20])
    assert out.shape == () and out.dtype == tf.float32
    assert round(float(out), 7) == first and round(float(step(yt[20:], yp[20:])), 7) == second  # TF 2.21's
    assert round(float(m.result()), 7) == second


def test_auc_in_a_custom_train_step_under_fit():
    class M(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                p = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=p)
            self.optimizer.apply(tape.gradient(loss, self.trainable_variables), self.trainable_variables)
            for mm in self.metrics:
                mm.update_state(loss) if mm.name == "loss" else mm.update_state(y, p)
            return {mm.name: mm.result() for mm in self.metrics}

    rng = np.random.default_rng(0)
    yt, yp = (rng.random((40, 3)) > 0.5).astype("float32"), rng.random((40, 3)).astype("float32")
    inp = tf.keras.Input((3,))
    model = M(inp, tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")(inp))
    model.compile("sgd", "binary_crossentropy", metrics=[tf.keras.metrics.AUC(name="auc")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled: no fallback to an eager step
        h = model.fit(yp, yt[:, :1], epochs=2, batch_size=8, verbose=0, shuffle=False)
    assert [round(v, 6) for v in h.history["auc"]] == [0.37625, 0.3775]
    assert [round(v, 6) for v in h.history["loss"]] == [1.035036, 1.024397]
