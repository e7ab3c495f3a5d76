"""``tf.config``: the parts that make sense for a NumPy (CPU) backend."""

from __future__ import annotations

import collections

from tapeflow.framework import context as _context

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")


def run_functions_eagerly(run_eagerly: bool) -> None:
    """As ``tf.config.run_functions_eagerly``: ``tf.function``s run their
    Python code eagerly on every call (for debugging), without tracing."""
    _context.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    return _context.run_functions_eagerly


def list_physical_devices(device_type: str | None = None) -> list:
    """tapeflow computes with NumPy on the CPU: one CPU device, no GPUs."""
    if device_type is None or device_type.upper() == "CPU":
        return [_CPU]
    return []


def list_logical_devices(device_type: str | None = None) -> list:
    if device_type is None or device_type.upper() == "CPU":
        return [LogicalDevice("/device:CPU:0", "CPU")]
    return []


def get_visible_devices(device_type: str | None = None) -> list:
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type: str | None = None) -> None:
    """Accepted for compatibility; only the CPU exists, so nothing changes."""
    devices = devices if isinstance(devices, (list, tuple)) else [devices]
    for d in devices:
        if getattr(d, "device_type", "CPU") != "CPU":
            raise ValueError(f"Cannot set visible devices to {d}: tapeflow only has the CPU.")


class experimental:  # noqa: N801 - TF's namespace name
    @staticmethod
    def set_memory_growth(device, enable: bool) -> None:
        """A no-op: there is no accelerator memory to manage."""

    @staticmethod
    def enable_op_determinism() -> None:
        """A no-op: tapeflow's kernels are deterministic."""


class threading:  # noqa: N801 - TF's namespace name
    """Threads of one op's kernel (NumPy's BLAS, see tapeflow.ops.threads:
    by default chosen per kernel size and machine load). Unlike TF, the intra-op
    count may be changed at any time. Ops run one at a time, so the inter-op
    count is recorded only."""

    _intra = 0
    _inter = 0

    @staticmethod
    def set_intra_op_parallelism_threads(num_threads: int) -> None:
        from tapeflow.ops import threads

        threading._intra = int(num_threads)
        threads.set_intra_op_threads(threading._intra)

    @staticmethod
    def get_intra_op_parallelism_threads() -> int:
        return threading._intra

    @staticmethod
    def set_inter_op_parallelism_threads(num_threads: int) -> None:
        threading._inter = int(num_threads)

    @staticmethod
    def get_inter_op_parallelism_threads() -> int:
        return threading._inter
