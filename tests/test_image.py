"""tf.image: adjust_contrast (no gradient registered, as TF), adjust_brightness, convert_image_dtype, flips;
values pinned from TF 2.21."""

import numpy as np
import pytest

import tapeflow as tf


def test_adjust_contrast_values_and_no_gradient():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 24
    out = tf.image.adjust_contrast(x, 2.0).numpy()
    np.testing.assert_array_equal(out[0, 0], np.float32([-0.4166666865348816, -0.3750000298023224,
                                                         -0.3333333134651184, -0.2916666865348816]))
    np.testing.assert_array_equal(out[1, 2], np.float32([1.25, 1.2916666269302368, 1.3333333730697632, 1.375]))
    xi = (np.arange(24).reshape(1, 2, 3, 4) * 10).astype(np.uint8)
    oi = tf.image.adjust_contrast(xi, 1.7)
    assert oi.dtype == tf.uint8
    assert oi.numpy().tolist() == [[[[0, 0, 0, 0], [0, 8, 18, 28], [66, 76, 86, 96]],
                                    [[134, 144, 154, 164], [202, 212, 222, 232], [255, 255, 255, 255]]]]
    image, delta = tf.Variable([[[0.5, 0.0, 0.0]]]), tf.Variable(0.1)
    with tf.GradientTape() as tape:
        new_image = tf.image.adjust_contrast(image, delta)
    with pytest.raises(LookupError, match="^gradient registry has no entry for: AdjustContrastv2$"):
        tape.gradient(new_image, [image, delta])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"input must be at least 3-D, got shape\[2,2\]"):
        tf.image.adjust_contrast(tf.zeros([2, 2]), 1.0)


def test_brightness_convert_dtype_flips():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 24
    xi = (np.arange(24).reshape(1, 2, 3, 4) * 10).astype(np.uint8)
    assert tf.image.adjust_brightness(xi, 0.1).numpy()[0, 0, 0].tolist() == [25, 35, 45, 55]
    np.testing.assert_array_equal(tf.image.convert_image_dtype(xi, tf.float32).numpy().ravel()[:3],
                                  np.float32([0.0, 0.03921568766236305, 0.0784313753247261]))
    assert tf.image.convert_image_dtype(x, tf.uint8).numpy().ravel()[:6].tolist() == [0, 10, 21, 31, 42, 53]
    assert tf.image.convert_image_dtype(xi, tf.int32).numpy().ravel()[:3].tolist() == [0, 83886080, 167772160]
    assert tf.image.convert_image_dtype(tf.constant([70000, 5]), tf.uint8).numpy().tolist() == [0, 0]
    np.testing.assert_array_equal(tf.image.flip_left_right(x), x[:, ::-1])
    np.testing.assert_array_equal(tf.image.flip_up_down(x), x[::-1])
    delta = tf.Variable(0.1)
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.image.adjust_brightness(tf.constant(x), delta) * tf.image.flip_left_right(x))
    assert t.gradient(y, delta).numpy() == 11.5
    with pytest.raises(ValueError, match=r"'image' \(shape \(2, 2\)\) must be at least three-dimensional"):
        tf.image.flip_left_right(tf.zeros([2, 2]))
    with pytest.raises(NotImplementedError, match="tf.image.generate_bounding_box_proposals is not implemented"):
        tf.image.generate_bounding_box_proposals


# -- total_variation, image_gradients, sobel_edges, psnr, ssim, YUV/YIQ (TF 2.21's values pinned) -----------------


def _pair():
    r = np.random.RandomState(0)
    a = r.rand(2, 16, 14, 3).astype("float32")
    b = np.clip(a + 0.1 * r.randn(*a.shape), 0, 1).astype("float32")
    return tf.constant(a), tf.constant(b)


def test_image_variation_edges_and_quality_as_tf():
    a, b = _pair()
    np.testing.assert_allclose(tf.image.total_variation(a).numpy(), [432.37222, 432.57092], rtol=1e-6)
    assert tf.image.total_variation(a[0]).shape == ()
    dy, dx = tf.image.image_gradients(a)
    assert dy.shape == dx.shape == (2, 16, 14, 3) and not np.any(dy.numpy()[:, -1]) and not np.any(dx.numpy()[:, :, -1])
    np.testing.assert_allclose([float(tf.reduce_sum(dy)), float(tf.reduce_sum(dx * dx))], [3.663966, 224.80138],
                               rtol=1e-5)
    s = tf.image.sobel_edges(a)
    assert s.shape == (2, 16, 14, 3, 2)
    np.testing.assert_allclose([float(tf.reduce_sum(s[..., 0] ** 2)), float(tf.reduce_sum(s[..., 1] ** 2))],
                               [1308.2036, 1313.2046], rtol=1e-6)
    np.testing.assert_allclose(tf.image.psnr(a, b, 1.0).numpy(), [20.650442, 20.658684], rtol=1e-6)
    a8, b8 = tf.cast(a * 255, tf.uint8), tf.cast(b * 255, tf.uint8)
    np.testing.assert_allclose(tf.image.psnr(a8, b8, 255).numpy(), [20.644804, 20.654348], rtol=1e-6)
    np.testing.assert_allclose(tf.image.ssim(a, b, 1.0).numpy(), [0.954092, 0.950013], rtol=1e-5)
    np.testing.assert_allclose(tf.image.ssim(a, b, 1.0, filter_size=5).numpy(), [0.948458, 0.949236], rtol=1e-5)
    np.testing.assert_allclose(tf.image.ssim(a8, b8, 255).numpy(), [0.954007, 0.949935], rtol=1e-5)
    assert tf.image.ssim(a, b, 1.0, return_index_map=True).shape == (2, 6, 4)
    for fn, want in ((tf.image.rgb_to_yuv, [0.652626, -0.024538, -0.091073]),
                     (tf.image.yuv_to_rgb, [1.235893, -0.083408, 2.002122]),
                     (tf.image.rgb_to_yiq, [0.652626, -0.063016, -0.070202]),
                     (tf.image.yiq_to_rgb, [1.606735, -0.035838, 0.784532])):
        np.testing.assert_allclose(fn(a).numpy()[0, 0, 0], want, rtol=1e-5, atol=1e-6, err_msg=fn.__name__)


def test_image_quality_gradients_and_errors():
    a, b = _pair()
    x = tf.Variable(a)
    with tf.GradientTape() as tape:
        loss = (tf.reduce_sum(tf.image.total_variation(x)) + tf.reduce_sum(tf.image.ssim(x, b, 1.0))
                + tf.reduce_sum(tf.image.sobel_edges(x) ** 2))
    g = tape.gradient(loss, x)
    np.testing.assert_allclose(float(tf.reduce_sum(g * g)), 511458.56, rtol=1e-5)  # TF 2.21
    with pytest.raises(ValueError, match="'images' must be either 3 or 4-dimensional."):
        tf.image.total_variation(a[0, 0])
    with pytest.raises(ValueError, match=r"image_gradients expects a 4D tensor \[batch_size, h, w, d\], not"):
        tf.image.image_gradients(a[0])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.psnr(a, b[:, :8], 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.ssim(a[:, :8], b[:, :8], 1.0)
