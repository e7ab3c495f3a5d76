"""``tf.compat.v1.saved_model``: TF 2's ``save``/``load`` (``load_v2``), the tag and signature constants and the
file-name constants; the TF 1 session APIs (``load(sess, ...)``, ``Builder``, ``simple_save``, signature-def
builders) raise ``NotImplementedError``."""

from __future__ import annotations

import types
from typing import Any

from tapeflow import saved_model as _v2
from tapeflow.framework.errors import NotImplementedInTapeflowError

__all__ = ["save", "load_v2", "contains_saved_model", "SaveOptions", "tag_constants", "signature_constants",
           "constants"]

save = _v2.save
load_v2 = _v2.load
contains_saved_model = _v2.contains_saved_model
SaveOptions = _v2.SaveOptions

_TAGS = ("SERVING", "TRAINING", "GPU", "TPU")
_SIGNATURES = ("DEFAULT_SERVING_SIGNATURE_DEF_KEY", "CLASSIFY_INPUTS", "CLASSIFY_METHOD_NAME",
               "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "PREDICT_INPUTS", "PREDICT_METHOD_NAME",
               "PREDICT_OUTPUTS", "REGRESS_INPUTS", "REGRESS_METHOD_NAME", "REGRESS_OUTPUTS")
_FILES = ("ASSETS_DIRECTORY", "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB", "SAVED_MODEL_FILENAME_PB",
          "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME")

tag_constants = types.SimpleNamespace(**{n: getattr(_v2, n) for n in _TAGS})
signature_constants = types.SimpleNamespace(**{n: getattr(_v2, n) for n in _SIGNATURES})
constants = types.SimpleNamespace(**{n: getattr(_v2, n) for n in _FILES}, LEGACY_INIT_OP_KEY="legacy_init_op",
                                  MAIN_OP_KEY="saved_model_main_op")
LEGACY_INIT_OP_KEY, MAIN_OP_KEY = "legacy_init_op", "saved_model_main_op"
globals().update({n: getattr(_v2, n) for n in _TAGS + _SIGNATURES + _FILES})

_TF1 = ("load", "Builder", "builder", "simple_save", "loader", "main_op", "main_op_with_restore",
        "build_signature_def", "build_tensor_info", "classification_signature_def", "predict_signature_def",
        "regression_signature_def", "is_valid_signature", "get_tensor_from_tensor_info", "signature_def_utils",
        "utils", "maybe_saved_model_directory", "experimental", "Asset")


def __getattr__(name: str) -> Any:
    if name in _TF1:
        raise NotImplementedInTapeflowError(
            f"tf.compat.v1.saved_model.{name} (TF 1 sessions' SavedModels) is not implemented in tapeflow; use "
            "tf.saved_model.save / tf.saved_model.load")
    raise AttributeError(f"module 'tensorflow.compat.v1.saved_model' has no attribute '{name}'")
