"""tf.image colour adjustments (AdjustSaturation/AdjustHue kernels, grayscale, gamma, standardization), the
stateless random ops (TF's Philox draws), and the crops, pads, flips and rotations; values pinned from TF 2.21
(rounded to 6 decimals there)."""

import numpy as np
import pytest

import tapeflow as tf

RNG = np.random.default_rng(0)
IMG = RNG.uniform(0, 1, (2, 3, 4, 3)).astype(np.float32)
U8 = (IMG * 255).astype(np.uint8)
BIG = np.arange(6 * 7 * 3).reshape(6, 7, 3).astype(np.float32)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b, np.float32), rtol=0, atol=2e-6)


def test_grayscale_saturation_hue_values():
    close(tf.image.rgb_to_grayscale(IMG[0])[:, :, 0],
          [[0.353424, 0.586384, 0.671511, 0.758711], [0.359174, 0.620916, 0.34093, 0.504584],
           [0.522839, 0.769737, 0.449475, 0.559403]])
    g8 = tf.image.rgb_to_grayscale(U8)
    assert g8.dtype == tf.uint8 and g8.shape == (2, 3, 4, 1)
    assert g8[0, :, :, 0].numpy().tolist() == [[89, 149, 171, 193], [91, 158, 86, 128], [132, 196, 114, 142]]
    close(tf.image.adjust_saturation(IMG[0], 3)[0], [[0.636962, 0.244544, 0.0], [0.0, 0.811436, 0.912756],
                                                    [0.360914, 0.729497, 0.171882], [0.935072, 0.815503, 0.0]])
    assert tf.image.adjust_saturation(U8[0], 0.4)[1].numpy().tolist() == [[218, 134, 205], [149, 220, 187],
                                                                         [94, 107, 67], [115, 171, 168]]
    close(tf.image.adjust_hue(IMG[0], 0.3)[0], [[0.040974, 0.636962, 0.150589], [0.832995, 0.016528, 0.912756],
                                               [0.543625, 0.64381, 0.729497], [0.002739, 0.935072, 0.629387]])
    assert tf.image.adjust_hue(U8[0], -0.45)[1].numpy().tolist() == [[8, 218, 103], [220, 44, 73], [68, 7, 107],
                                                                    [171, 67, 31]]
    assert tf.image.grayscale_to_rgb(tf.constant(U8[0, :, :, :1])).shape == (3, 4, 3)


def test_hsv_kernels_have_no_gradient_and_check_channels():
    x = tf.constant(IMG[0])
    for fn in (tf.image.adjust_saturation, tf.image.adjust_hue):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x, 0.3)
        with pytest.raises(LookupError, match="gradient registry has no entry for: Adjust"):
            tape.gradient(y, x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="input must have 3 channels but instead has 2"):
        tf.image.adjust_saturation(IMG[..., :2], 2.0)


def test_gamma_and_standardization():
    close(tf.image.adjust_gamma(IMG[0], 2.0, 1.5)[0, 0], [0.60858, 0.109177, 0.002518])
    assert tf.image.adjust_gamma(U8[0], 0.5)[0].numpy().tolist() == [[203, 131, 50], [32, 230, 243],
                                                                    [198, 218, 187], [246, 230, 0]]
    out = tf.image.per_image_standardization(U8[0])
    assert out.dtype == tf.float32
    close(out[0, 0], [0.379594, -0.837985, -1.589256])


def test_stateless_random_colour_ops_are_tfs_draws():
    close([tf.image.stateless_random_brightness(IMG[0], 0.95, seed=(i, 0))[0, 0] for i in range(3)],
          [[0.087891, -0.279284, -0.508097], [1.356089, 0.988914, 0.760101], [1.208822, 0.841647, 0.612834]])
    assert tf.image.stateless_random_brightness(U8[0], 0.5, seed=(1, 2))[0].numpy().tolist() == [
        [250, 156, 97], [91, 255, 255], [242, 255, 226], [255, 255, 87]]
    close([tf.image.stateless_random_contrast(IMG[0], 0.1, 0.9, seed=(i, 0))[0, 0] for i in range(3)],
          [[0.576935, 0.474796, 0.348562], [0.620772, 0.32508, 0.123934], [0.615682, 0.342465, 0.150018]])
    close(tf.image.stateless_random_saturation(IMG[0], 0.5, 1.5, (4, 2))[0, 0], [0.636962, 0.299474, 0.089162])
    close(tf.image.stateless_random_hue(IMG[0], 0.2, (4, 2))[0, 0], [0.636962, 0.154136, 0.040974])
    flips = tf.image.stateless_random_flip_left_right(U8[:, :, :, 0:1], (2, 3))
    assert flips[:, 0, :, 0].numpy().tolist() == [[162, 4, 154, 238], [227, 151, 91, 123]]
    assert tf.image.stateless_random_flip_up_down(U8[0, :, :, 0:1], (5, 3))[:, 0, 0].numpy().tolist() == [
        162, 218, 156]
    with pytest.raises(ValueError, match="max_delta must be non-negative."):
        tf.image.stateless_random_brightness(IMG, -1, (1, 1))
    with pytest.raises(ValueError, match="upper must be > lower."):
        tf.image.stateless_random_contrast(IMG, 0.5, 0.4, (1, 1))


def test_stateless_random_crop_eager_and_traced():
    crops = [tf.image.stateless_random_crop(BIG, size=[3, 4, 3], seed=(i, 0))[:, :, 0].numpy().tolist()
             for i in range(3)]
    assert [c[0] for c in crops] == [[69.0, 72.0, 75.0, 78.0], [51.0, 54.0, 57.0, 60.0], [3.0, 6.0, 9.0, 12.0]]
    f = tf.function(lambda x, s: tf.image.stateless_random_crop(x, size=[3, 4, 3], seed=s))
    assert f(BIG, tf.constant([1, 0]))[:, :, 0].numpy().tolist() == crops[1]
    spec = f.get_concrete_function(tf.TensorSpec([None, None, 3]), tf.TensorSpec([2], tf.int32))
    assert spec.structured_outputs.shape == (3, 4, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need value.shape >= size"):
        tf.image.stateless_random_crop(BIG, [7, 4, 3], (1, 1))
    assert tf.image.random_crop(BIG, [2, 2, 3], seed=3).shape == (2, 2, 3)


def test_crops_pads_rotations():
    assert tf.image.central_crop(U8[0], 0.5).shape == (3, 2, 3)
    assert tf.image.central_crop(U8, 0.3).shape == (2, 1, 2, 3)
    assert tf.image.central_crop(np.zeros((7, 9, 1)), 0.6).shape == (5, 7, 1)
    with pytest.raises(ValueError, match=r"central_fraction must be within \(0, 1\]"):
        tf.image.central_crop(U8[0], 0.0)
    assert tf.image.rot90(U8[0, :, :, 0:1])[:, :, 0].numpy().tolist() == [[238, 31, 183], [154, 76, 175],
                                                                          [4, 44, 250], [162, 218, 156]]
    assert tf.image.rot90(U8[:, :, :, :1], k=3)[0, :, :, 0].numpy().tolist() == [
        [156, 218, 162], [250, 44, 4], [175, 76, 154], [183, 31, 238]]
    assert tf.image.rot90(U8[0], k=-2).shape == (3, 4, 3)
    assert tf.image.transpose(U8).shape == (2, 4, 3, 3)
    with pytest.raises(ValueError, match="must be at least three-dimensional"):
        tf.image.rot90(U8[0, 0])
    assert tf.image.resize_with_crop_or_pad(BIG, 4, 9)[:, :, 0].numpy().tolist() == [
        [0.0, 21.0, 24.0, 27.0, 30.0, 33.0, 36.0, 39.0, 0.0], [0.0, 42.0, 45.0, 48.0, 51.0, 54.0, 57.0, 60.0, 0.0],
        [0.0, 63.0, 66.0, 69.0, 72.0, 75.0, 78.0, 81.0, 0.0], [0.0, 84.0, 87.0, 90.0, 93.0, 96.0, 99.0, 102.0, 0.0]]
    assert tf.image.crop_to_bounding_box(BIG, 1, 2, 3, 2)[:, :, 0].numpy().tolist() == [[27.0, 30.0], [48.0, 51.0],
                                                                                        [69.0, 72.0]]
    assert tf.image.pad_to_bounding_box(BIG[:2, :2], 1, 1, 4, 3)[:, :, 0].numpy().tolist() == [
        [0.0, 0.0, 0.0], [0.0, 0.0, 3.0], [0.0, 21.0, 24.0], [0.0, 0.0, 0.0]]
    with pytest.raises(ValueError, match=r"height must be >= target \+ offset."):
        tf.image.crop_to_bounding_box(BIG, 4, 0, 3, 2)
    assert (tf.image.ResizeMethod.NEAREST_NEIGHBOR, tf.image.ResizeMethod.BILINEAR) == ("nearest", "bilinear")


def test_resize_with_crop_or_pad_of_unknown_size_in_a_graph():
    f = tf.function(lambda x: tf.image.resize_with_crop_or_pad(x, 4, 9),
                    input_signature=[tf.TensorSpec([None, None, 3])])
    assert f(BIG).numpy().tolist() == tf.image.resize_with_crop_or_pad(BIG, 4, 9).numpy().tolist()
