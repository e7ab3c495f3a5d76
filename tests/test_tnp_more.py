"""The rest of tf.experimental.numpy (angle ... vstack): values and dtypes of 127 cases recorded from TF 2.21 with
numpy behavior on (tools/tnp/record.py); tapeflow differs only where TF's own code fails (a scalar pad width),
plus one last-bit float32 arctanh. Gradients and tracing where the functions are composed of differentiable ops."""

import json
import os

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.experimental.numpy as tnp
from tapeflow.experimental.numpy import _core
from tests import tnp_more_cases

WANT = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "tnp_more.json")))["cases"]
DIFFERENT = {"pad": "TF's tnp.pad fails on a scalar width", "arctanh": "float32 atanh differs in the last bit"}
GOT: dict = {}


@pytest.fixture
def numpy_behavior():
    tnp.experimental_enable_numpy_behavior()
    yield
    _core._disable_numpy_behavior()  # the switch is global (as TF's): undone for the other tests


def _same(got, want, path):
    if isinstance(want, str) or isinstance(got, str):
        assert got == want, path
        return
    if isinstance(want, list) and len(want) == 2 and isinstance(want[0], str):
        assert got[0] == want[0], f"{path}: dtype"
        if want[0] == "str":
            assert got[1] == want[1], path
            return
        np.testing.assert_allclose(np.asarray(got[1], dtype=float), np.asarray(want[1], dtype=float), rtol=1e-12,
                                   equal_nan=True, err_msg=path)
        assert np.shape(got[1]) == np.shape(want[1]), path
        return
    assert isinstance(got, (list, tuple)) and len(got) == len(want), path
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g, w, f"{path}[{k}]")


@pytest.mark.parametrize("case", sorted(set(WANT) - set(DIFFERENT)))
def test_tnp_case_as_tf(case, numpy_behavior):
    if not GOT:
        GOT.update(tnp_more_cases.run(tf, tnp))
    _same(GOT[case], WANT[case], case)


def test_the_known_differences(numpy_behavior):
    assert tnp.pad(np.array([4, 5, 6]), 2, "constant").numpy().tolist() == [0, 0, 4, 5, 6, 0, 0]
    np.testing.assert_allclose(tnp.arctanh(np.array([0.1, -0.5], np.float32)), [0.10033534467220306,
                                                                                 -0.5493061542510986], rtol=1e-6)


def test_gradients_and_tracing():
    x = tf.constant([-8.0, 0.5, 27.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tnp.cbrt(x) + tnp.hypot(x, 2.0) + tnp.logaddexp(x, 1.0) + tnp.sort(x) * tnp.arange(3.0))
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g, np.abs(x.numpy()) ** (-2 / 3) / 3 + x.numpy() / np.hypot(x.numpy(), 2.0)
                               + 1 / (1 + np.exp(1 - x.numpy())) + [0.0, 1.0, 2.0], rtol=1e-9)
    f = tf.function(lambda a, i: (tnp.take_along_axis(a, i, 1), tnp.gcd(i, 6), tnp.flip(tnp.triu(a), 0)))
    a = np.arange(6.0).reshape(2, 3)
    i = np.array([[2], [0]], np.int64)
    t, g2, fl = f(tf.constant(a), tf.constant(i))
    assert t.numpy().tolist() == [[2.0], [3.0]] and g2.numpy().tolist() == [[2], [6]]
    assert fl.numpy().tolist() == [[0.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
