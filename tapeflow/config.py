"""``tf.config``: the parts that make sense for a NumPy (CPU) backend."""

from __future__ import annotations

import collections

from tapeflow.framework import context as _context

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])


class LogicalDeviceConfiguration(collections.namedtuple(
        "LogicalDeviceConfiguration", ["memory_limit", "experimental_priority", "experimental_device_ordinal"])):
    """One logical (virtual) device of a physical one, as ``tf.config.LogicalDeviceConfiguration``."""

    def __new__(cls, memory_limit: int | None = None, experimental_priority: int | None = None,
                experimental_device_ordinal: int | None = None) -> LogicalDeviceConfiguration:
        return super().__new__(cls, memory_limit, experimental_priority, experimental_device_ordinal)


_LOGICAL_CPUS: list | None = None  # the CPU's logical device configurations, once set

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
    """The logical CPUs: one, or as many as ``set_logical_device_configuration`` made."""
    if device_type is None or device_type.upper() == "CPU":
        return [LogicalDevice(f"/device:CPU:{i}", "CPU") for i in range(len(_LOGICAL_CPUS or [None]))]
    return []


def set_logical_device_configuration(device, logical_devices: list | None) -> None:
    """Splits the CPU into ``len(logical_devices)`` logical CPUs (``/device:CPU:0``, ``/device:CPU:1``, ...),
    e.g. for a ``MirroredStrategy`` with several replicas in one process, as TF. They share the one
    NumPy backend: replicas take turns, they do not compute in parallel."""
    global _LOGICAL_CPUS
    if getattr(device, "device_type", "CPU") != "CPU":
        raise ValueError(f"Unrecognized device: {device!r} (tapeflow only has the CPU)")
    if logical_devices is None:
        _LOGICAL_CPUS = None
        return
    configs = list(logical_devices)
    for c in configs:
        if not isinstance(c, LogicalDeviceConfiguration):
            raise TypeError(f"logical_devices must be a list of tf.config.LogicalDeviceConfiguration, got {c!r}")
    _LOGICAL_CPUS = configs or None


def get_logical_device_configuration(device) -> list | None:
    """The logical device configurations set for ``device`` (None if none were)."""
    return None if _LOGICAL_CPUS is None else list(_LOGICAL_CPUS)


def get_visible_devices(device_type: str | None = None) -> list:
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type: str | None = None) -> None:
    """Accepted for compatibility; only the CPU exists, so nothing changes."""
    devices = devices if isinstance(devices, (list, tuple)) else [devices]
    for d in devices:
        if getattr(d, "device_type", "CPU") != "CPU":
            raise ValueError(f"Cannot set visible devices to {d}: tapeflow only has the CPU.")


from tapeflow.framework.missing import NotBuilt as _NotBuilt  # noqa: E402


class experimental:  # noqa: N801 - TF's namespace name
    @staticmethod
    def set_memory_growth(device, enable: bool) -> None:
        """A no-op: there is no accelerator memory to manage."""

    @staticmethod
    def enable_op_determinism() -> None:
        """A no-op: tapeflow's kernels are deterministic."""

    VirtualDeviceConfiguration = LogicalDeviceConfiguration
    ClusterDeviceFilters = _NotBuilt("tf.config.experimental.ClusterDeviceFilters")
    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)
    get_visible_devices = staticmethod(get_visible_devices)
    set_visible_devices = staticmethod(set_visible_devices)
    _tf32 = [True]
    _policy = ["silent"]
    _synchronous = [True]

    @staticmethod
    def get_memory_growth(device) -> bool:
        """TF's ``KeyError``: memory growth is a GPU setting, and tapeflow has only the CPU."""
        raise KeyError(device)

    @staticmethod
    def get_memory_info(device) -> dict:
        """TF's answer for the CPU: ``{'current': 0, 'peak': 0}`` (no accelerator memory is tracked)."""
        return {"current": 0, "peak": 0}

    @staticmethod
    def get_memory_usage(device) -> int:
        return 0

    @staticmethod
    def reset_memory_stats(device) -> None:
        """A no-op, as TF's for the CPU."""

    @staticmethod
    def get_device_details(device) -> dict:
        return {}

    @staticmethod
    def enable_tensor_float_32_execution(enabled: bool) -> None:
        """Kept as a flag (TensorFloat-32 is an NVIDIA GPU mode: tapeflow's float32 matmuls are full float32)."""
        experimental._tf32[0] = bool(enabled)

    @staticmethod
    def tensor_float_32_execution_enabled() -> bool:
        return experimental._tf32[0]

    @staticmethod
    def get_device_policy() -> str:
        return experimental._policy[0]

    @staticmethod
    def set_device_policy(device_policy: str | None) -> None:
        if device_policy not in (None, "silent", "silent_for_int32", "warn", "explicit"):
            raise ValueError(f"Not a valid device policy: {device_policy!r}")
        experimental._policy[0] = "silent" if device_policy is None else device_policy

    @staticmethod
    def get_synchronous_execution() -> bool:
        return experimental._synchronous[0]

    @staticmethod
    def set_synchronous_execution(enable: bool) -> None:
        """Kept as a flag: tapeflow's eager ops always run synchronously."""
        experimental._synchronous[0] = bool(enable)

    @staticmethod
    def enable_mlir_bridge() -> None:
        """A no-op: tapeflow has no MLIR bridge."""

    @staticmethod
    def disable_mlir_bridge() -> None:
        """A no-op: tapeflow has no MLIR bridge."""
    set_virtual_device_configuration = staticmethod(set_logical_device_configuration)
    get_virtual_device_configuration = staticmethod(get_logical_device_configuration)


class threading:  # noqa: N801 - TF's namespace name
    """Threads of one op's kernel (NumPy's BLAS, see tapeflow.ops.threads:
    by default chosen per kernel size and machine load), and whether a compiled
    function may run a heavy op beside the rest of its ops (inter-op: 1 runs
    them one at a time; by default on when there are two or more CPUs). Unlike
    TF, both counts may be changed at any time."""

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
        from tapeflow.ops import threads

        threading._inter = int(num_threads)
        threads.set_inter_op_threads(threading._inter)

    @staticmethod
    def get_inter_op_parallelism_threads() -> int:
        return threading._inter


def set_soft_device_placement(enabled: bool) -> None:
    """As TF: with soft placement (the default), an op for an absent device (``tf.device("/GPU:0")`` here,
    where only the CPU exists) runs on the CPU; without it, such a ``tf.device`` scope raises
    ``InvalidArgumentError`` (tapeflow raises on entering the scope, TF at its first op)."""
    _context.soft_device_placement = bool(enabled)


def get_soft_device_placement() -> bool:
    return True if _context.soft_device_placement is None else _context.soft_device_placement


# Grappler's options, in the order TF's get_experimental_options lists them; the two plain booleans are always listed
_TOGGLES = ("layout_optimizer", "constant_folding", "shape_optimization", "remapping", "arithmetic_optimization",
            "dependency_optimization", "loop_optimization", "function_optimization", "debug_stripper",
            "disable_model_pruning", "scoped_allocator_optimization", "pin_to_host_optimization",
            "implementation_selector", "auto_mixed_precision", "use_plugin_optimizers", "disable_meta_optimizer",
            "auto_mixed_precision_onednn_bfloat16", "auto_mixed_precision_mkl")
_BOOLS = ("disable_model_pruning", "disable_meta_optimizer")


class optimizer:  # noqa: N801 - TF's namespace name
    """``tf.config.optimizer``: TF's graph-optimizer (Grappler) settings. tapeflow's graph compiler has its own
    fixed passes (constant folding, CSE, dead-code elimination); of Grappler's options it honours
    ``debug_stripper`` (``tf.function`` graphs compiled while it is on drop ``tf.print``, ``tf.debugging.Assert``
    and the ``assert_*`` checks, and ``check_numerics`` passes its input through, as TF's). The others are kept
    and listed as TF does; the JIT setting is kept too (tapeflow has no XLA)."""

    _jit: bool | None = None

    @staticmethod
    def get_experimental_options() -> dict:
        opts = _context.optimizer_options
        out = {}
        for name in _TOGGLES:
            if name in _BOOLS:
                out[name] = bool(opts.get(name, False))
            elif opts.get(name) is not None:
                out[name] = bool(opts[name])
        if opts.get("min_graph_nodes"):
            out["min_graph_nodes"] = opts["min_graph_nodes"]
        return out

    @staticmethod
    def set_experimental_options(options: dict) -> None:
        """Updates the options (names not given keep their values; unknown names are ignored, as TF)."""
        _context.optimizer_options.update(options)

    @staticmethod
    def get_jit() -> str:
        return "autoclustering" if optimizer._jit else ""

    @staticmethod
    def set_jit(enabled: bool | str) -> None:
        optimizer._jit = bool(enabled)


def experimental_run_functions_eagerly(run_eagerly: bool) -> None:
    """Deprecated alias of :func:`run_functions_eagerly` (TF 2.21 logs "Use tf.config.run_functions_eagerly
    instead of the experimental version.")."""
    import logging

    logging.getLogger("tensorflow").warning("From %s: experimental_run_functions_eagerly (from "
                                            "tensorflow.python.eager.polymorphic_function.polymorphic_function) is "
                                            "deprecated and will be removed in a future version.\nInstructions for "
                                            "updating:\nUse `tf.config.run_functions_eagerly` instead of the "
                                            "experimental version.", __name__)
    run_functions_eagerly(run_eagerly)


def experimental_functions_run_eagerly() -> bool:
    """Deprecated alias of :func:`functions_run_eagerly`."""
    return functions_run_eagerly()


def experimental_connect_to_cluster(*args, **kwargs) -> None:
    """Remote (TF server) clusters are not implemented in tapeflow: multi-process training runs on MPI."""
    from tapeflow.framework.errors import NotImplementedInTapeflowError

    raise NotImplementedInTapeflowError("tf.config.experimental_connect_to_cluster is not implemented in tapeflow "
                                        "(tf.distribute.MultiWorkerMirroredStrategy runs on MPI)")


def experimental_connect_to_host(*args, **kwargs) -> None:
    """See :func:`experimental_connect_to_cluster`."""
    from tapeflow.framework.errors import NotImplementedInTapeflowError

    raise NotImplementedInTapeflowError("tf.config.experimental_connect_to_host is not implemented in tapeflow")
