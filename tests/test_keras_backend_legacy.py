"""The legacy ``tf.keras.backend`` functions (batch_dot, the crossentropies, conv/pool, resize, ctc, rnn, switch
...) give Keras 3.15's results: the cases of tests/keras_backend_cases.py against their values recorded from TF
2.21 (tools/keras_backend_legacy/record.py), errors included."""

import json
import os

import numpy as np
import pytest

import tapeflow as tf
from tests import keras_backend_cases

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras", "backend_legacy.json")
WANT = json.load(open(FIXTURE))["cases"]
GOT = {}


def _got() -> dict:
    if not GOT:
        GOT.update(keras_backend_cases.run(tf))
    return GOT


def _close(got, want, path=""):
    if isinstance(want, str) or isinstance(got, str):
        assert got == want, path
        return
    try:
        w = np.asarray(want, dtype=float)
    except ValueError:  # a ragged structure (a tuple of results): element by element
        assert isinstance(got, (list, tuple)) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"{path}[{i}]")
        return
    g = np.asarray(got, dtype=float)
    assert g.shape == w.shape, path
    np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6, err_msg=path)


@pytest.mark.parametrize("case", sorted(WANT))
def test_case_gives_kerass_result(case):
    _close(_got()[case], WANT[case], case)
