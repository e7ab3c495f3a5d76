"""The 2-D convolution kernels' fast paths give the same bits as their general paths (ops/nn/conv.py)."""

import numpy as np
import pytest

from tapeflow.ops.nn import conv

rng = np.random.default_rng(0)


@pytest.mark.parametrize("hw, k, d, dtype", [
    ((14, 14), (3, 3), (1, 1), np.float32), ((5, 7), (3, 3), (1, 1), np.float32), ((6, 6), (2, 2), (1, 1), np.float32),
    ((6, 5), (4, 4), (1, 1), np.float64), ((7, 8), (3, 3), (2, 2), np.float32), ((2, 2), (3, 3), (1, 1), np.float32),
    ((9, 4), (5, 3), (1, 2), np.float64), ((3, 9), (1, 5), (1, 1), np.float32),
])
def test_backprop_input_flat_shift_path_matches_the_tap_adds(monkeypatch, hw, k, d, dtype):
    n, ci, co = 3, 4, 5
    w = rng.standard_normal(k + (ci, co)).astype(dtype)
    dy = rng.standard_normal((n,) + hw + (co,)).astype(dtype)
    dy[0, 0, -1, 0] = np.inf  # a non-finite dy reaches dx the same way
    attrs = dict(input_sizes=(n,) + hw + (ci,), strides=(1, 1), dilations=d, padding="SAME")
    _, pads = conv._conv_attrs_geom((n,) + hw + (ci,), w.shape, (1, 1), d, "SAME")
    assert conv._flat_shift_plan(k, (n,) + hw + (ci,), hw, (1, 1), d, pads) is not None
    got = conv._conv2d_backprop_input_kernel(w, dy, **attrs)
    monkeypatch.setattr(conv, "_flat_shift_plan", lambda *a: None)
    want = conv._conv2d_backprop_input_kernel(w, dy, **attrs)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == dtype


def test_flat_shift_plan_only_for_stride_one_same_grids():
    geom = ((3, 3), (2, 8, 8, 4), (8, 8), (1, 1), (1, 1), ((1, 1), (1, 1)))
    assert conv._flat_shift_plan(*geom) is not None
    assert conv._flat_shift_plan((3, 3), (2, 8, 8, 4), (4, 4), (2, 2), (1, 1), ((0, 1), (0, 1))) is None  # stride 2
    assert conv._flat_shift_plan((3, 3), (2, 8, 8, 4), (6, 6), (1, 1), (1, 1), ((0, 0), (0, 0))) is None  # VALID
    assert conv._flat_shift_plan((3, 3), (2, 1, 1, 4), (1, 1), (1, 1), (1, 1), ((1, 1), (1, 1))) is None  # 1x1 image
