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
