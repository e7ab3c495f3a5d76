"""``tf.image``: the image functions tapeflow has (see tapeflow/ops/image_ops.py); the others say so."""

from tapeflow.framework.errors import NotImplementedInTapeflowError
from tapeflow.ops.image_decode_ops import decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png
from tapeflow.ops.image_ops import (
    adjust_brightness, adjust_contrast, convert_image_dtype, flip_left_right, flip_up_down,
)
from tapeflow.ops.image_transform_ops import resize

__all__ = ["decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png", "adjust_brightness",
           "adjust_contrast", "convert_image_dtype", "flip_left_right", "flip_up_down", "resize"]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedInTapeflowError(f"tf.image.{name} is not implemented in tapeflow")
