"""``tf.image``: the image functions tapeflow has (see tapeflow/ops/image_ops.py); the others say so."""

from tapeflow.framework.errors import NotImplementedInTapeflowError
from tapeflow.ops.image_box_ops import (
    combined_non_max_suppression, crop_and_resize, draw_bounding_boxes, non_max_suppression,
    non_max_suppression_overlaps, non_max_suppression_padded, non_max_suppression_with_scores,
)
from tapeflow.ops.image_encode_ops import encode_jpeg, encode_png
from tapeflow.ops.image_extra_ops import extract_patches, resize_with_pad
from tapeflow.ops.image_hsv_ops import hsv_to_rgb, rgb_to_hsv
from tapeflow.ops.image_decode_ops import (
    decode_and_crop_jpeg, decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, extract_jpeg_shape,
)
from tapeflow.ops.io_ops import is_jpeg
from tapeflow.ops.image_ops import (
    adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation, central_crop,
    convert_image_dtype, crop_to_bounding_box, flip_left_right, flip_up_down, grayscale_to_rgb, pad_to_bounding_box,
    per_image_standardization, random_brightness, random_contrast, random_crop, random_flip_left_right,
    random_flip_up_down, random_hue, random_saturation, resize_with_crop_or_pad, rgb_to_grayscale, rot90,
    stateless_random_brightness, stateless_random_contrast, stateless_random_crop, stateless_random_flip_left_right,
    stateless_random_flip_up_down, stateless_random_hue, stateless_random_saturation, transpose,
    total_variation, image_gradients, sobel_edges, rgb_to_yuv, yuv_to_rgb, rgb_to_yiq, yiq_to_rgb, psnr, ssim,
    ssim_multiscale,
)
from tapeflow.ops.image_sample_ops import (
    extract_glimpse, sample_distorted_bounding_box, stateless_sample_distorted_bounding_box,
)
from tapeflow.ops.image_transform_ops import resize

__all__ = ["decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png", "adjust_brightness",
           "adjust_contrast", "adjust_gamma", "adjust_hue", "adjust_saturation", "central_crop", "convert_image_dtype",
           "crop_to_bounding_box", "flip_left_right", "flip_up_down", "grayscale_to_rgb", "pad_to_bounding_box",
           "per_image_standardization", "random_brightness", "random_contrast", "random_crop",
           "random_flip_left_right", "random_flip_up_down", "random_hue", "random_saturation", "resize",
           "resize_with_crop_or_pad", "rgb_to_grayscale", "rot90", "stateless_random_brightness",
           "stateless_random_contrast", "stateless_random_crop", "stateless_random_flip_left_right",
           "stateless_random_flip_up_down", "stateless_random_hue", "stateless_random_saturation", "transpose",
           "total_variation", "image_gradients", "sobel_edges", "rgb_to_yuv", "yuv_to_rgb", "rgb_to_yiq",
           "yiq_to_rgb", "psnr", "ssim", "ResizeMethod", "combined_non_max_suppression", "crop_and_resize",
           "non_max_suppression", "non_max_suppression_overlaps", "non_max_suppression_padded",
           "non_max_suppression_with_scores", "draw_bounding_boxes", "extract_patches", "resize_with_pad",
           "encode_jpeg", "encode_png", "hsv_to_rgb", "rgb_to_hsv", "sample_distorted_bounding_box",
           "stateless_sample_distorted_bounding_box", "extract_glimpse", "ssim_multiscale", "is_jpeg",
           "decode_and_crop_jpeg", "extract_jpeg_shape"]


class ResizeMethod:
    """``tf.image.ResizeMethod``: the ``method`` names of ``tf.image.resize`` (tapeflow resizes with
    ``BILINEAR`` and ``NEAREST_NEIGHBOR``)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedInTapeflowError(f"tf.image.{name} is not implemented in tapeflow")
