"""Replays the cases of tests/tf_cases/ on tapeflow against real TF's answers, recorded by
tools/tf_api/record.py in tests/fixtures/tf_api/<module>.json: the same values and dtypes (float32 to a few
ulps), or the same exception type with TF's message inside tapeflow's."""

import importlib
import json
import os
import pkgutil

import numpy as np
import pytest

import tapeflow as tf
import tests.tf_cases

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "tf_api")


def _cases():
    out = []
    for mod in pkgutil.iter_modules(tests.tf_cases.__path__):
        module = importlib.import_module(f"tests.tf_cases.{mod.name}")
        cases, tolerance = module.CASES, getattr(module, "TOLERANCE", {"rtol": 2e-6, "atol": 2e-6})
        with open(os.path.join(FIXTURES, f"{mod.name}.json")) as f:
            expected = json.load(f)
        assert set(expected) == set(cases), f"re-record {mod.name}: tools/tf_api/record.py {mod.name}"
        out.extend(pytest.param(cases[name], expected[name], tolerance, id=f"{mod.name}-{name}")
                   for name in sorted(cases))
    return out


def _compare(got, want, tolerance, where="result"):
    if isinstance(want, list):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{where}: {got!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, tolerance, f"{where}[{i}]")
        return
    if "python" in want:
        assert repr(got) == want["python"], where
        return
    assert got.dtype.name == want["dtype"], f"{where}: dtype {got.dtype.name}, TF's {want['dtype']}"
    assert list(got.shape) == want["shape"], f"{where}: shape {list(got.shape)}, TF's {want['shape']}"
    value = got.numpy()
    expected = np.array(want["value"]).reshape(value.shape) if value.dtype.kind not in "SO" else None
    if value.dtype.kind in "SO":
        assert [x.decode("latin-1") for x in value.reshape(-1)] == want["value"], where
    elif value.dtype.kind == "f":
        np.testing.assert_allclose(value, expected.astype(value.dtype), err_msg=where, **tolerance)
    else:
        np.testing.assert_array_equal(value, expected.astype(value.dtype), err_msg=where)


@pytest.mark.parametrize("fn,expected,tolerance", _cases())
def test_tf_case(fn, expected, tolerance):
    if "error" in expected:
        with pytest.raises(Exception) as info:
            fn(tf)
        assert type(info.value).__name__ == expected["error"], f"{type(info.value).__name__}: {info.value}"
        assert expected["message"].split("\n")[0] in str(info.value)
        return
    _compare(fn(tf), expected["result"], tolerance)
