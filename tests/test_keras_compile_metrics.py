"""``model.metrics`` as Keras 3.15 lists it: the loss tracker, then one ``CompileMetrics`` holding what
``compile(metrics=..., weighted_metrics=...)`` made (TF's time_series tutorial reads ``model.metrics[1].metrics``)."""

from __future__ import annotations

import numpy as np

import tapeflow as tf

K = tf.keras


def _model():
    return K.Sequential([K.Input((3,)), K.layers.Dense(2, kernel_initializer="ones")])


def test_compiled_metrics_sit_in_one_compile_metrics():
    model = _model()
    assert model.metrics == []
    model.compile(optimizer=K.optimizers.SGD(0.0), loss="mse", metrics=["mae", K.metrics.MeanSquaredError()],
                  weighted_metrics=["mse"])
    assert repr(model.metrics) == "[<Mean name=loss>, <CompileMetrics name=compile_metrics>]"
    assert model.metrics_names == ["loss", "compile_metrics"]
    holder = model.metrics[1]
    assert holder.metrics == [] and holder.variables == []  # built by the first batch, as Keras
    x, y = np.ones((4, 3), "float32"), np.zeros((4, 2), "float32")
    logs = model.fit(x, y, verbose=0).history
    assert repr(holder.metrics) == ("[<MeanAbsoluteError name=mae>, <MeanSquaredError name=mean_squared_error>, "
                                    "<MeanSquaredError name=mse>]")
    assert [v.name for v in holder.variables] == ["total", "count"] * 3
    assert sorted(logs) == ["loss", "mae", "mean_squared_error", "mse"]
    result = model.get_metrics_result()
    assert sorted(result) == ["loss", "mae", "mean_squared_error", "mse"]
    assert sorted(holder.result()) == ["mae", "mean_squared_error", "mse"]
    # evaluate resets and reports every metric inside the holder, in compile order
    assert np.allclose(model.evaluate(x, y, verbose=0), [9.0, 3.0, 9.0, 9.0])
    model.reset_metrics()
    assert float(holder.metrics[0].result()) == 0.0


def test_no_compile_metrics_without_metrics():
    model = _model()
    model.compile(loss="mse")
    model.fit(np.ones((4, 3), "float32"), np.zeros((4, 2), "float32"), verbose=0)
    assert repr(model.metrics) == "[<Mean name=loss>]"


def test_a_shared_metric_keeps_its_state_until_the_new_models_first_batch():
    # Keras's CompileMetrics.reset_state does nothing before it is built: METRICS shared by make_model() in TF's
    # imbalanced_data tutorial carry the previous evaluation into the next fit's first epoch (TF 2.21's numbers)
    shared = [K.metrics.MeanAbsoluteError(name="mae"), K.metrics.TruePositives(name="tp")]

    def make():
        model = K.Sequential([K.Input((2,)), K.layers.Dense(1, kernel_initializer="ones", activation="sigmoid")])
        model.compile(optimizer=K.optimizers.SGD(0.0), loss="binary_crossentropy", metrics=shared)
        return model

    x = np.array([[1.0, 2.0], [-1.0, 0.0], [0.5, 0.5], [-2.0, 1.0]], "float32")
    y = np.array([1.0, 0.0, 1.0, 1.0], "float32")
    np.testing.assert_allclose(make().evaluate(x, y, verbose=0), [0.4970931, 0.3290918, 2.0], rtol=1e-6)
    history = make().fit(x[:2], y[:2], epochs=2, verbose=0).history
    np.testing.assert_allclose(history["mae"], [0.2721224, 0.1581836], rtol=1e-6)
    assert history["tp"] == [3.0, 1.0]
