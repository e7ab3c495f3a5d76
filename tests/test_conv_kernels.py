"""The 2-D convolution kernels' fast paths give the same bits as their general paths (ops/nn/conv.py), and
the Winograd path the direct convolution's values."""

import numpy as np
import pytest

from tapeflow.ops.nn import _winograd as winograd
from tapeflow.ops.nn import conv
from tests import test_op_gradients as gradient_check

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


# -- Winograd F(2x2, 3x3) (ops/nn/_winograd.py) --

@pytest.fixture
def winograd_always(monkeypatch):
    """Every 3x3 stride-1 convolution as Winograd, however small, in chunks of one image."""
    monkeypatch.setattr(winograd, "MIN_WORK", 0)
    monkeypatch.setattr(winograd, "CHANNEL_RATIO", 0)
    monkeypatch.setattr(winograd, "_CHUNK_BYTES", 1)


def _direct(x, w, pads):
    """The float64 correlation, tap by tap."""
    n, h, wd, _ = x.shape
    (pt, pb), (pl, pr) = pads
    xp = np.zeros((n, h + pt + pb, wd + pl + pr, x.shape[3]))
    xp[:, pt:pt + h, pl:pl + wd] = x
    oh, ow = xp.shape[1] - 2, xp.shape[2] - 2
    return sum(xp[:, i:i + oh, j:j + ow] @ w[i, j].astype(np.float64) for i in range(3) for j in range(3))


@pytest.mark.parametrize("hw, padding", [((6, 6), "SAME"), ((5, 7), "SAME"), ((7, 4), "VALID"),
                                         ((5, 6), ((2, 1), (0, 2))), ((3, 3), ((2, 2), (1, 0)))])
def test_winograd_matches_the_direct_convolution_and_its_gradients(winograd_always, hw, padding):
    n, ci, co = 3, 4, 5
    x = rng.standard_normal((n,) + hw + (ci,))
    w = rng.standard_normal((3, 3, ci, co))
    out_hw, pads = conv._conv_attrs_geom(x.shape, w.shape, (1, 1), (1, 1), padding)
    dy = rng.standard_normal((n,) + out_hw + (co,))
    geo = dict(strides=(1, 1), dilations=(1, 1), padding=padding)
    y = conv._conv2d_kernel(x, w, **geo)
    np.testing.assert_allclose(y, _direct(x, w, pads), rtol=1e-12, atol=1e-12)
    # dx: the adjoint, <conv(x, w), dy> = <x, dx>; dw from the im2col path
    dx = conv._conv2d_backprop_input_kernel(w, dy, input_sizes=x.shape, **geo)
    e = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e[i] = 1
        dx_i = np.sum(_direct(e, w, pads) * dy)
        assert abs(dx[i] - dx_i) < 1e-12 * (1 + abs(dx_i))
        e[i] = 0
    dw = conv._conv2d_backprop_filter_kernel(x, dy, filter_sizes=w.shape, **geo)
    winograd.MIN_WORK = float("inf")
    np.testing.assert_allclose(dw, conv._conv2d_backprop_filter_kernel(x, dy, filter_sizes=w.shape, **geo),
                               rtol=1e-12, atol=1e-12)


def test_winograd_float32_error_is_that_of_a_short_sum():
    # the Fashion-MNIST CNN's second layer: 32 images, 14x14x32 -> 64, where the cost model picks Winograd
    x = rng.standard_normal((32, 14, 14, 32)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 32, 64)) * 0.1).astype(np.float32)
    dy = rng.standard_normal((32, 14, 14, 64)).astype(np.float32)
    assert winograd.applies((3, 3), (1, 1), (1, 1), 32, 64, 9.0 * dy.size * 32)
    geo = dict(strides=(1, 1), dilations=(1, 1), padding="SAME")
    ref = [conv._conv2d_kernel(x.astype(np.float64), w.astype(np.float64), **geo),
           conv._conv2d_backprop_input_kernel(w.astype(np.float64), dy.astype(np.float64), input_sizes=x.shape,
                                              **geo),
           conv._conv2d_backprop_filter_kernel(x.astype(np.float64), dy.astype(np.float64), filter_sizes=w.shape,
                                               **geo)]
    got = [conv._conv2d_kernel(x, w, **geo), conv._conv2d_backprop_input_kernel(w, dy, input_sizes=x.shape, **geo),
           conv._conv2d_backprop_filter_kernel(x, dy, filter_sizes=w.shape, **geo)]
    for g, r in zip(got, ref):
        assert g.dtype == np.float32
        assert np.abs(g - r).max() / np.abs(r).max() < 2e-6  # measured 3e-7 / 3e-7 / 7e-7


def test_winograd_leaves_non_finite_inputs_to_the_direct_product(winograd_always):
    x = rng.standard_normal((2, 6, 6, 3)).astype(np.float32)
    x[0, 2, 3, 1] = np.inf
    x[1, 0, 0, 0] = np.nan
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    dy = rng.standard_normal((2, 6, 6, 4)).astype(np.float32)
    dy[1, 5, 5, 2] = -np.inf
    geo = dict(strides=(1, 1), dilations=(1, 1), padding="SAME")
    got = [conv._conv2d_kernel(x, w, **geo), conv._conv2d_backprop_input_kernel(w, dy, input_sizes=x.shape, **geo),
           conv._conv2d_backprop_filter_kernel(x, dy, filter_sizes=w.shape, **geo)]
    winograd.MIN_WORK = float("inf")
    want = [conv._conv2d_kernel(x, w, **geo), conv._conv2d_backprop_input_kernel(w, dy, input_sizes=x.shape, **geo),
            conv._conv2d_backprop_filter_kernel(x, dy, filter_sizes=w.shape, **geo)]
    for g, r in zip(got, want):
        np.testing.assert_array_equal(g, r)
    # (Winograd itself would have spread the inf and NaN over their tiles, and says so)
    assert not winograd.conv(x, winograd.filter_transform(w), (6, 6), ((1, 1), (1, 1)), np.float32)[1]


@pytest.mark.parametrize("spec", [s for s in gradient_check.SPECS if s.op.startswith("Conv2D")], ids=lambda s: s.id)
def test_winograd_passes_the_conv_ops_gradient_checks(winograd_always, spec):
    gradient_check.test_gradient(spec)  # (first and second order, as the registry-wide check)


def test_the_filter_gradient_takes_the_forwards_input_transform_once_with_the_same_bits(winograd_always):
    x = rng.standard_normal((3, 6, 5, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 5)).astype(np.float32)
    dy = rng.standard_normal((3, 6, 5, 5)).astype(np.float32)
    geo = dict(strides=(1, 1), dilations=(1, 1), padding="SAME")
    fresh = conv._conv2d_backprop_filter_kernel(x, dy, filter_sizes=w.shape, **geo)
    winograd._KEPT.clear()
    conv._conv2d_kernel(x, w, **geo)
    assert len(winograd._KEPT) == 1 and winograd._KEPT[0][0] is x
    x_copy = x.copy()
    conv._conv2d_kernel(x_copy, w, **geo)  # an equal array is another input: no sharing
    np.testing.assert_array_equal(conv._conv2d_backprop_filter_kernel(x, dy, filter_sizes=w.shape, **geo), fresh)
    assert [e[0] is x_copy or e[0] is dy for e in winograd._KEPT] == [True, True]  # x's was taken, dy's kept
    winograd._KEPT.clear()
    conv._conv2d_bias_relu_pool_kernel(x, w, np.zeros(5, np.float32), padding="SAME", strides=(1, 1),
                                       dilations=(1, 1), pool_ksize=(2, 2), pool_strides=(2, 2), pool_padding="VALID")
    assert not winograd._KEPT  # a forward-only graph's conv keeps nothing


@pytest.mark.parametrize("first", ["input", "filter"])
def test_the_two_gradients_share_the_output_gradients_transform_with_the_same_bits(winograd_always, first):
    x = rng.standard_normal((3, 7, 6, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 5)).astype(np.float32)
    dy = rng.standard_normal((3, 7, 6, 5)).astype(np.float32)
    geo = dict(strides=(1, 1), dilations=(1, 1), padding="SAME")

    def grads(order):
        out = {}
        for g in order:
            out[g] = (conv._conv2d_backprop_input_kernel(w, dy, input_sizes=x.shape, **geo) if g == "input" else
                      conv._conv2d_backprop_filter_kernel(x, dy, filter_sizes=w.shape, **geo))
        return out

    winograd._KEPT.clear()
    alone = {**grads(["input"]), **(winograd._KEPT.clear() or grads(["filter"]))}
    winograd._KEPT.clear()
    shared = grads([first, "filter" if first == "input" else "input"])
    assert not winograd._KEPT  # the second took what the first kept
    for g in alone:
        np.testing.assert_array_equal(shared[g], alone[g])


def test_input_gradient_of_an_output_larger_than_its_input():
    # explicit padding of 3 rows in all: a 9-row output of an 8-row input (TF: dx of the input's shape)
    x = rng.standard_normal((2, 8, 8, 4))
    w = rng.standard_normal((3, 3, 4, 5))
    pads = ((2, 1), (0, 2))
    dy = rng.standard_normal((2, 9, 8, 5))
    dx = conv._conv2d_backprop_input_kernel(w, dy, input_sizes=x.shape, strides=(1, 1), dilations=(1, 1),
                                            padding=pads)
    e = np.zeros_like(x)
    for i in [(0, 0, 0, 0), (1, 7, 7, 3), (0, 3, 5, 1), (1, 0, 7, 2)]:
        e[i] = 1
        assert abs(dx[i] - np.sum(_direct(e, w, pads) * dy)) < 1e-12
        e[i] = 0
