"""tf.keras.callbacks.RemoteMonitor as Keras 3.15 (``requests`` replaced by a recording stand-in: no network)."""

import numpy as np
import pytest

import tapeflow as tf


def test_remote_monitor_posts_epoch_logs_as_keras(monkeypatch):
    import json
    import sys
    import types

    posts = []

    class RequestException(Exception):
        pass

    def post(url, data=None, json=None, headers=None):
        posts.append((url, data, json, headers))
        if url.startswith("http://down"):
            raise RequestException("refused")

    fake = types.SimpleNamespace(post=post, exceptions=types.SimpleNamespace(RequestException=RequestException))
    monkeypatch.setitem(sys.modules, "requests", fake)
    m = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    m.compile("sgd", "mse")
    x = np.ones((4, 1), "float32")
    m.fit(x, x, epochs=2, verbose=0, callbacks=[tf.keras.callbacks.RemoteMonitor()])
    assert [p[0] for p in posts] == ["http://localhost:9000/publish/epoch/end/"] * 2
    first = json.loads(posts[0][1]["data"])
    assert list(first) == ["epoch", "loss"] and first["epoch"] == 0 and first["loss"] == 1.0
    posts.clear()
    m.fit(x, x, epochs=1, verbose=0, callbacks=[tf.keras.callbacks.RemoteMonitor(
        root="http://h", path="/p", send_as_json=True, headers={"k": "v"})])
    assert posts[0][0] == "http://h/p" and posts[0][2]["epoch"] == 0 and posts[0][3] == {"k": "v"}
    with pytest.warns(UserWarning, match="Could not reach RemoteMonitor root server at http://down"):
        m.fit(x, x, epochs=1, verbose=0, callbacks=[tf.keras.callbacks.RemoteMonitor(root="http://down")])
    monkeypatch.setitem(sys.modules, "requests", None)
    with pytest.raises(ImportError, match="RemoteMonitor requires the `requests` library."):
        m.fit(x, x, epochs=1, verbose=0, callbacks=[tf.keras.callbacks.RemoteMonitor()])
