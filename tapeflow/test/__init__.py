"""``tf.test``: the gradient checker and a TestCase with TF's assertions."""

from typing import Any

from tapeflow.test.gradient_checker import compute_gradient, max_error  # noqa: F401
from tapeflow.test.test_case import TestCase, main  # noqa: F401


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: Any = None) -> bool:
    """``tf.test.is_gpu_available`` (deprecated in TF): False, tapeflow computes on the CPU."""
    return False


def gpu_device_name() -> str:
    """``tf.test.gpu_device_name``: ``""``, there is no GPU."""
    return ""


def is_built_with_cuda() -> bool:
    return False


def is_built_with_gpu_support() -> bool:
    return False


def is_built_with_rocm() -> bool:
    return False


def is_built_with_xla() -> bool:
    """False (TF's own build says True): tapeflow has no XLA; ``jit_compile=True`` runs its own compiler."""
    return False


def is_cpu_target_available(target: str) -> bool:
    """False: tapeflow has no XLA CPU targets (TF's build answers for ``x86``/``aarch64``)."""
    return False


_NOT_BUILT = frozenset({"Benchmark", "benchmark_config", "create_local_cluster", "disable_with_predicate",
                        "with_eager_op_as_function", "assert_equal_graph_def", "experimental"})


def __getattr__(name: str):
    if name in _NOT_BUILT:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.test.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.test' has no attribute '{name}'")
