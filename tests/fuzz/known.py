"""Documented differences from TensorFlow that the fuzzer finds on purpose.

Each entry: (function glob, text in the mismatch message or reproducer, or a
predicate ``(case, msg) -> bool``, or "", reason). Every one is listed in the
README's "Known differences from TensorFlow". Cases that agree with TF once
their denormal inputs are flushed to zero are counted as documented by the
replay itself (tests/fuzz/replay.py: ``denormal_only``).
"""

import numpy as np


def _empty_output_gradient(case: dict, msg: str) -> bool:
    """TF's gradient of a pool/conv whose output is empty is uninitialized memory."""
    outs = case["tf"].get("out") or []
    return msg.startswith(("g1[", "g2[")) and any("t" in o and 0 in o["t"][1] for o in outs)


def _repro(case: dict) -> str:
    from tests.fuzz.harness import reproducer

    return reproducer(case)


def _float64_inf_input(case: dict, msg: str) -> bool:
    from tests.fuzz.harness import dec

    arrays = [dec(a) for a in case.get("args", []) if isinstance(a, dict) and "t" in a]
    return any(a.dtype == "float64" and np.isinf(a).any() for a in arrays)


def _f32_denormal_input(case: dict, msg: str) -> bool:
    from tests.fuzz.harness import dec

    arrays = [dec(a) for a in case.get("args", []) if isinstance(a, dict) and "t" in a]
    tiny = np.finfo(np.float32).tiny
    return any(a.dtype == "float32" and ((a != 0) & (np.abs(a) < tiny)).any() for a in arrays)


def _strided_f64_conv3d_nonfinite(case: dict, msg: str) -> bool:
    from tests.fuzz.harness import dec

    x = case["args"][0]
    strides = case["args"][2] if len(case["args"]) > 2 else 1
    if not (isinstance(x, dict) and "t" in x) or not msg.startswith(("g1[1]", "g2")):
        return False
    a = dec(x)
    return a.dtype == "float64" and not np.isfinite(a).all() and strides not in (1, [1, 1, 1, 1, 1])


def _nan_order(case: dict, msg: str) -> bool:
    return ("NaN pattern" in msg or "values" in msg) and "nan" in _repro(case)


_BAD_LOG = "TF's vectorized float32 log of a denormal is wrong (tf.math.log(1e-40) is -103.97, not -92.1)"

KNOWN: list = [
    ("math.log", _f32_denormal_input, _BAD_LOG),
    ("math.xlogy", _f32_denormal_input, _BAD_LOG),
    ("math.pow", _f32_denormal_input, _BAD_LOG),
    ("op.pow", _f32_denormal_input, _BAD_LOG),
    ("math.lbeta", _f32_denormal_input, _BAD_LOG),
    ("math.lgamma", _f32_denormal_input, _BAD_LOG),
    ("math.erf", _float64_inf_input, "TF 2.21's float64 erf(+-inf) is NaN (tapeflow: +-1)"),
    ("math.count_nonzero", "e-41", "denormals are kept (TF flushes them to zero)"),
    ("op.abs", "e-41", "denormals are kept (TF flushes them to zero)"),
    ("op.mod", "e-41", "denormals are kept (TF flushes them to zero)"),
    ("nn.conv[123]d", "out[0] shape [", "TF's oneDNN conv returns its input when the VALID output is empty"),
    ("nn.*", _empty_output_gradient, "TF's gradient of an empty pool/conv output is uninitialized memory"),
    ("nn.gelu", lambda case, msg: "values" in msg and "float64" in _repro(case),
     "TF's float64 gelu is accurate to ~1e-7 only; tapeflow's to float64 rounding"),
    ("nn.convolution", "g2 raised None () vs TF AttributeError", "TF's second order of a strided conv raises"),
    (
        "saturate_cast",
        lambda case, msg: "tf.int64)" in _repro(case) and "tf.float" in _repro(case),
        "TF clamps a float to float(2**63 - 1) == 2**63, which overflows to -2**63; tapeflow saturates",
    ),
    ("nn.conv3d", _strided_f64_conv3d_nonfinite, "TF's float64 conv3d filter gradient spreads NaN from skipped inputs"),
    ("nn.*", "vs TF AbortedError", "TF's oneDNN kernel fails (AbortedError) where tapeflow computes"),
    ("math.top_k", _nan_order, "NaN goes after every number (TF's order of NaN depends on k)"),
    ("sort", _nan_order, "NaN goes after every number (TF's order of NaN depends on k)"),
    ("nn.softmax", lambda case, msg: "NaN pattern" in msg and "float32" in _repro(case),
     "a float32 softmax row with NaN/+inf is NaN (as TF's float64; TF's float32 oneDNN kernel zeros the rest)"),
    ("nn.softmax_cross_entropy_with_logits", "g2[", "second derivatives w.r.t. the labels are correct here"),
    ("math.zeta", "tf.float16)", "TF has no float16 kernel; tapeflow computes"),
    ("math.polygamma", "tf.float16)", "TF has no float16 kernel; tapeflow computes"),
    ("math.nextafter", "tf.float16)", "TF has no float16 kernel; tapeflow computes"),
    (
        "nn.max_pool3d",
        "raised nothing () vs TF InvalidArgumentError (Value for attr 'T' of double",
        "TF has no float64 kernel",
    ),
    ("nn.moments", "g2[", "second derivatives of moments are correct here; TF's rule drops a term"),
    ("saturate_cast", "], tf.int64), ", "TF 2.21's saturate_cast of int64 gives wrong numbers (every value -2**63)"),
    ("saturate_cast", "inf], tf.float64), tf.int64", "TF 2.21 casts inf past int64's range (undefined behaviour)"),
]
