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
    with pytest.raises(NotImplementedError, match="tf.image.rgb_to_hsv is not implemented in tapeflow"):
        tf.image.rgb_to_hsv
