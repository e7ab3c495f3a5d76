"""tapeflow: TensorFlow's eager autodiff, rebuilt on NumPy.

Use it as ``import tapeflow as tf``; TF2 code using ``tf.GradientTape``,
``tf.Variable`` and the ops below runs unchanged.
"""

from __future__ import annotations

import os as _os
import sys as _sys
import warnings as _warnings

# NumPy warns on log(0), x/0 ...; TF silently returns inf/nan. Silence only
# warnings raised from tapeflow's own kernels (no per-op cost).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"tapeflow(\.|$)")

from tapeflow.framework import errors  # noqa: E402
from tapeflow.framework import nest  # noqa: E402
from tapeflow.framework.context import executing_eagerly  # noqa: E402
from tapeflow.framework.dtypes import (  # noqa: E402
    DType, as_dtype, bool, complex64, complex128, double, float16, float32, float64, half, int8, int16, int32,
    int64, string, uint8, uint16, uint32, uint64,
)
from tapeflow.framework.indexed_slices import IndexedSlices  # noqa: E402
from tapeflow.framework.tensor import (  # noqa: E402
    Tensor, constant, convert_to_tensor, is_tensor, register_tensor_conversion_function,
)
from tapeflow.framework.tensor_shape import TensorShape  # noqa: E402
from tapeflow.framework.variables import (  # noqa: E402
    Variable, VariableAggregation, VariableSynchronization,
)
from tapeflow import ops as _ops  # noqa: E402, F401 - registers every op
from tapeflow.ops import threads as _threads  # noqa: E402

_threads.install()  # BLAS threads per kernel size and machine load
from tapeflow.eager.backprop import GradientTape, UnconnectedGradients  # noqa: E402
from tapeflow.ops.registry import NotDifferentiable, RegisterGradient, no_gradient  # noqa: E402
from tapeflow.ops.array_ops import (  # noqa: E402
    argmax, argmin, broadcast_to, concat, expand_dims, eye, fill, gather, identity, linspace, ones, ones_like,
    range_ as range, rank, reshape, shape, size_ as size, slice_ as slice, split, squeeze, stack, stop_gradient,
    strided_slice, tile, transpose, unstack, zeros, zeros_like,
)
from tapeflow.ops.math_ops import (  # noqa: E402
    abs, add, add_n, cast, ceil, clip_by_value, cos, cumprod, cumsum, divide, equal, exp, floor, floordiv,
    greater, greater_equal, less, less_equal, log, logical_and, logical_not, logical_or, matmul, maximum, minimum,
    multiply, negative, not_equal, pow, realdiv, reduce_all, reduce_any, reduce_logsumexp, reduce_max, reduce_mean,
    reduce_min, reduce_prod, reduce_sum, round, saturate_cast, sigmoid, sign, sin, sqrt, square, squared_difference,
    subtract, tan, tanh, truediv, where,
)
from tapeflow.ops.math_ops import complex  # noqa: E402, A004 - tf.complex(real, imag)
from tapeflow import linalg, math, nn  # noqa: E402
from tapeflow.framework import namespaces as _namespaces  # noqa: E402

# The layers below reach public names through these (tf.ragged / tf.sparse install their dispatching
# versions of tf.add, tf.math.*, tf.nn.* here when they load; debug mode wraps tf.constant).
for _name, _module in (("tapeflow", _sys.modules[__name__]), ("math", math), ("nn", nn)):
    _namespaces.register(_name, _module)
from tapeflow.module import Module, name_scope  # noqa: E402 - tf.Module (keras helper)
from tapeflow.eager.custom_gradient import custom_gradient, recompute_grad  # noqa: E402
# tf.function and graph mode (tapeflow/graph/)
from tapeflow.graph.function import TensorSpec, function, init_scope, print_ as print  # noqa: E402, A004
from tapeflow.graph.gradients import gradients, hessians  # noqa: E402
from tapeflow.graph.control_flow import (  # noqa: E402
    case, cond, foldl, foldr, map_fn, scan, switch_case, while_loop,
)
from tapeflow.graph.pfor import vectorized_map  # noqa: E402
from tapeflow.graph.tensor_array import TensorArray  # noqa: E402
from tapeflow.graph.functional_ops import numpy_function, py_function  # noqa: E402
from tapeflow.graph import tape_replay as _tape_replay  # noqa: E402, F401 - plugs compiled tape replay into GradientTape

# tf.linalg norms and clipping at the top level (linalg/random helper).
from tapeflow.ops.linalg_ops import (  # noqa: E402
    clip_by_average_norm, clip_by_global_norm, clip_by_norm, norm,
)

# tf.math extras and array/indexing ops at the top level (mathx helper).
from tapeflow.ops.special_ops import (  # noqa: E402
    acos, acosh, argsort, asin, asinh, atan, atan2, atanh, cosh, sinh, sort,
)
from tapeflow.ops.indexing_ops import (  # noqa: E402
    boolean_mask, einsum, gather_nd, meshgrid, one_hot, pad, repeat, reverse, roll, scatter_nd, sequence_mask,
    tensor_scatter_nd_add, tensor_scatter_nd_max, tensor_scatter_nd_min, tensor_scatter_nd_sub,
    tensor_scatter_nd_update, tensordot, unique,
)

newaxis = None


class device:  # noqa: N801 - TF's name
    """``with tf.device("/GPU:0"):`` — any device string; tapeflow places everything on the CPU (TF's soft
    placement; after ``tf.config.set_soft_device_placement(False)`` a GPU or TPU scope raises TF's
    ``InvalidArgumentError``, on entering the scope where TF raises at its first op)."""

    def __init__(self, device_name: str | None) -> None:
        if hasattr(device_name, "to_string") and hasattr(device_name, "device_type"):  # a tf.DeviceSpec
            device_name = device_name.to_string()
        if device_name is not None and not isinstance(device_name, str):
            raise TypeError(f"tf.device expects a device string, got {type(device_name).__name__}")
        self.device_name = device_name

    def __enter__(self) -> None:
        import re

        from tapeflow.framework import context

        m = re.search(r"([A-Za-z_]+):(\d+)$", self.device_name or "")
        if context.soft_device_placement is False and m and m.group(1).upper() in ("GPU", "TPU"):
            from tapeflow.framework.errors import InvalidArgumentError

            raise InvalidArgumentError(None, None, "Could not satisfy device specification "
                                       f"'/job:localhost/replica:0/task:0/device:{m.group(1).upper()}:{m.group(2)}'. "
                                       "enable_soft_placement=0. Supported device types [CPU]. All available "
                                       "devices [/job:localhost/replica:0/task:0/device:CPU:0].")
        return None

    def __exit__(self, *exc: object) -> None:
        return None

# TF programs branch on ``tf.__version__``: it is the TF API version tapeflow implements (as TF, equal to
# tf.version.VERSION); tapeflow's own release is tf.version.TAPEFLOW_VERSION.
from tapeflow.version import VERSION as __version__  # noqa: E402, N811

_LAZY = {
    "keras": "tapeflow.keras",
    "optimizers": "tapeflow.keras.optimizers",
    "losses": "tapeflow.keras.losses",
    "metrics": "tapeflow.keras.metrics",
    "random": "tapeflow.random",
    "test": "tapeflow.test",
    "debugging": "tapeflow.debugging",
    "feature_column": "tapeflow.feature_column",
    "autodiff": "tapeflow.autodiff",
    "train": "tapeflow.train",
    "data": "tapeflow.data",
    "distribute": "tapeflow.distribute",
    "config": "tapeflow.config",
    "autograph": "tapeflow.graph.autograph",
    "initializers": "tapeflow.keras.initializers",  # TF 2.21: tf.initializers is keras.initializers
    "datasets": "tapeflow.datasets",
    "summary": "tapeflow.summary",
    "saved_model": "tapeflow.saved_model",
    "ragged": "tapeflow.ops.ragged",
    "sparse": "tapeflow.ops.sparse",
    "compat": "tapeflow.compat",
    "dtypes": "tapeflow.dtypes",
    "version": "tapeflow.version",
    "image": "tapeflow.image",
    "strings": "tapeflow.strings",
    "lookup": "tapeflow.lookup",
    "bitwise": "tapeflow.bitwise",
    "io": "tapeflow.io",
    "types": "tapeflow.types",
    "experimental": "tapeflow.experimental",
    "signal": "tapeflow.signal",
    "audio": "tapeflow.audio",
}
# Composite tensor types, loaded with their namespace on first use (which also
# gives tf.add, tf.concat ... their ragged/sparse versions).
_LAZY_NAMES = {
    "RaggedTensor": ("tapeflow.ops.ragged", "RaggedTensor"),
    "RaggedTensorSpec": ("tapeflow.ops.ragged", "RaggedTensorSpec"),
    "SparseTensor": ("tapeflow.ops.sparse", "SparseTensor"),
    "SparseTensorSpec": ("tapeflow.ops.sparse", "SparseTensorSpec"),
    "TypeSpec": ("tapeflow.framework.composite_tensor", "TypeSpec"),
    "Graph": ("tapeflow.graph.session", "Graph"),  # TF 1 graph mode (tf.compat.v1.Session runs it)
    "make_tensor_proto": ("tapeflow.framework.tensor_proto", "make_tensor_proto"),  # protobuf messages
    "make_ndarray": ("tapeflow.framework.tensor_proto", "make_ndarray"),
    "searchsorted": ("tapeflow.ops.array_extras", "searchsorted"),
    "bitcast": ("tapeflow.ops.array_extras", "bitcast"),
    "guarantee_const": ("tapeflow.ops.array_extras", "guarantee_const"),
    "parallel_stack": ("tapeflow.ops.array_extras", "parallel_stack"),
    "grad_pass_through": ("tapeflow.eager.custom_gradient", "grad_pass_through"),
    "type_spec_from_value": ("tapeflow.framework.composite_tensor", "type_spec_from_value"),
    "Operation": ("tapeflow.graph.graph", "Operation"),
    "CriticalSection": ("tapeflow.ops.critical_section_ops", "CriticalSection"),
    "variable_creator_scope": ("tapeflow.framework.variables", "variable_creator_scope"),
    "unique_with_counts": ("tapeflow.ops.array_extras", "unique_with_counts"),
    "unravel_index": ("tapeflow.ops.array_extras", "unravel_index"),
    "reverse_sequence": ("tapeflow.ops.array_extras", "reverse_sequence"),
    "dynamic_partition": ("tapeflow.ops.array_extras", "dynamic_partition"),
    "dynamic_stitch": ("tapeflow.ops.array_extras", "dynamic_stitch"),
    "histogram_fixed_width": ("tapeflow.ops.array_extras", "histogram_fixed_width"),
    "histogram_fixed_width_bins": ("tapeflow.ops.array_extras", "histogram_fixed_width_bins"),
    "truncatediv": ("tapeflow.ops.array_extras", "truncatediv"),
    "truncatemod": ("tapeflow.ops.array_extras", "truncatemod"),
    "ensure_shape": ("tapeflow.ops.array_extras", "ensure_shape"),
    "identity_n": ("tapeflow.ops.array_extras", "identity_n"),
    "broadcast_static_shape": ("tapeflow.ops.array_extras", "broadcast_static_shape"),
    "broadcast_dynamic_shape": ("tapeflow.ops.array_extras", "broadcast_dynamic_shape"),
    "get_static_value": ("tapeflow.graph.control_deps", "get_static_value"),
    "timestamp": ("tapeflow.ops.array_extras", "timestamp"),
    "Assert": ("tapeflow.ops.check_ops", "Assert"),  # TF 2's top-level names for tf.debugging's checks
    "assert_equal": ("tapeflow.ops.check_ops", "assert_equal"),
    "assert_greater": ("tapeflow.ops.check_ops", "assert_greater"),
    "assert_less": ("tapeflow.ops.check_ops", "assert_less"),
    "assert_rank": ("tapeflow.ops.check_ops", "assert_rank"),
    "as_string": ("tapeflow.ops.string_ops", "as_string"),
    "scalar_mul": ("tapeflow.ops.math_ops", "scalar_mul"),
    "shape_n": ("tapeflow.ops.shape_ops", "shape_n"),
    "control_dependencies": ("tapeflow.graph.control_deps", "control_dependencies"),
    "group": ("tapeflow.graph.control_deps", "group"),
    "no_op": ("tapeflow.graph.control_deps", "no_op"),
    "tuple": ("tapeflow.graph.control_deps", "tuple_"),
    "inside_function": ("tapeflow.graph.control_deps", "inside_function"),
    "is_symbolic_tensor": ("tapeflow.graph.control_deps", "is_symbolic_tensor"),
    "get_current_name_scope": ("tapeflow.graph.control_deps", "get_current_name_scope"),
    "get_logger": ("tapeflow.graph.control_deps", "get_logger"),
    "AggregationMethod": ("tapeflow.graph.control_deps", "AggregationMethod"),
    "space_to_batch": ("tapeflow.ops.batch_space_ops", "space_to_batch"),
    "space_to_batch_nd": ("tapeflow.ops.batch_space_ops", "space_to_batch_nd"),
    "batch_to_space": ("tapeflow.ops.batch_space_ops", "batch_to_space"),
    "edit_distance": ("tapeflow.ops.edit_distance_ops", "edit_distance"),
    "fingerprint": ("tapeflow.ops.fingerprint_ops", "fingerprint"),
    "DeviceSpec": ("tapeflow.framework.device_spec", "DeviceSpec"),
}


# TensorFlow namespaces and names tapeflow does not implement: looking one up
# says so (NotImplementedError) and is still an AttributeError for hasattr().
_UNSUPPORTED = frozenset({
    "lite",
    "raw_ops", "xla", "tpu", "queue",
    "quantization", "sets", "Session", "dtensor", "mlir",
    "profiler", "sysconfig",
    # TF's top-level names tapeflow does not build (README: known differences)
    "IndexedSlicesSpec", "NoneTensorSpec", "OptionalSpec", "TensorArraySpec", "approx_top_k", "bfloat16",
    "check_pinned", "conv", "conv2d_backprop_filter_v2", "conv2d_backprop_input_v2", "eig", "eigvals",
    "extract_volume_patches", "fftnd", "graph_util", "ifftnd", "import_graph_def", "irfftnd", "load_library",
    "load_op_library", "matrix_square_root", "nondifferentiable_batch_function", "qint16", "qint32", "qint8",
    "quint16", "quint8", "ragged_fill_empty_rows", "ragged_fill_empty_rows_grad", "random_index_shuffle",
    "required_space_to_batch_paddings", "resource", "rfftnd", "security", "tools", "variant",
})
_INITIALIZERS = {
    "zeros_initializer": "Zeros", "ones_initializer": "Ones", "constant_initializer": "Constant",
    "random_normal_initializer": "RandomNormal", "random_uniform_initializer": "RandomUniform",
}


def __getattr__(name: str):
    # Heavier namespaces load on first use, so `import tapeflow` stays fast.
    mod = _LAZY.get(name)
    if mod is None and name in _LAZY_NAMES:
        import importlib

        mod_name, attr = _LAZY_NAMES[name]
        value = getattr(importlib.import_module(mod_name), attr)
        globals()[name] = value
        return value
    if mod is None:
        if name in _INITIALIZERS:
            from tapeflow import initializers

            value = getattr(initializers, _INITIALIZERS[name])
            globals()[name] = value
            return value
        if name in _UNSUPPORTED:
            raise errors.NotImplementedInTapeflowError(f"tf.{name} is not implemented in tapeflow")
        if name == "estimator":  # TF 2.16 removed it: TF 2.21 raises this AttributeError too
            raise AttributeError("module 'tensorflow' has no attribute 'estimator' (TensorFlow 2.16 removed "
                                 "tf.estimator; use tf.keras)")
        raise AttributeError(f"module 'tapeflow' has no attribute '{name}'")
    import importlib

    value = importlib.import_module(mod)
    globals()[name] = value
    return value


# TAPEFLOW_DEBUG=1 starts in tf.debugging's debug mode (source lines, op log).
if _os.environ.get("TAPEFLOW_DEBUG", "").strip().lower() not in ("", "0", "false", "no", "off"):
    __getattr__("debugging")
