"""``tf.data.Options``: a dataset's options, set with ``Dataset.with_options`` and merged down the pipeline.

Only ``experimental_distribute.auto_shard_policy`` changes what tapeflow does (how
``MultiWorkerMirroredStrategy`` splits a dataset across processes: ``AutoShardPolicy``); the others are
TF's performance knobs (threads, fusions, autotuning), accepted, validated and kept, with nothing to
tune in tapeflow's in-process pipeline.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = [
    "AutoShardPolicy",
    "ExternalStatePolicy",
    "Options",
    "DistributeOptions",
    "OptimizationOptions",
    "ThreadingOptions",
    "AutotuneOptions",
    "ServiceOptions",
    "merge_options",
]


class AutoShardPolicy(enum.IntEnum):
    """How a dataset is split across the workers of a multi-worker strategy.

    ``AUTO``: by file if the dataset reads files (tapeflow: by data, see ``input_lib``), else by data;
    ``FILE``: each worker reads its share of the files; ``DATA``: each worker takes its share of every
    batch; ``OFF``: every worker gets the whole dataset; ``HINT``: as the dataset's ``shard`` placeholders."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    WARN = 0
    IGNORE = 1
    FAIL = 2


class _Group:
    """A set of typed options, each None (unset) or a value of its type; unknown names are TF's AttributeError."""

    _schema: dict = {}
    _title = "Options"

    def __init__(self) -> None:
        for name, (_, default) in self._schema.items():
            object.__setattr__(
                self,
                name,
                default()
                if callable(default) and isinstance(default, type) and issubclass(default, _Group)
                else default,
            )

    def __setattr__(self, name: str, value: Any) -> None:
        spec = self._schema.get(name)
        if spec is None:
            raise AttributeError(f"Cannot set the property {name} on {self._title}.")
        kind = spec[0]
        if isinstance(kind, type) and issubclass(kind, _Group):
            if not isinstance(value, kind):
                raise TypeError(f'Property "{name}" must be of type {kind}, got: {value!r} (type: {type(value)})')
        elif value is not None and not (isinstance(value, kind) and not (kind is int and isinstance(value, bool))):
            raise TypeError(f'Property "{name}" must be of type {kind}, got: {value!r} (type: {type(value)})')
        object.__setattr__(self, name, value)

    def _merge(self, other: _Group) -> None:
        """Takes ``other``'s set (not None) values over this one's."""
        for name in self._schema:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, _Group):
                mine._merge(theirs)
            elif theirs is not None and (name != "auto_shard_policy" or theirs != AutoShardPolicy.AUTO):
                object.__setattr__(self, name, theirs)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self._schema)

    __hash__ = None  # type: ignore[assignment]


class DistributeOptions(_Group):
    _title = "DistributeOptions"
    _schema = {"auto_shard_policy": (AutoShardPolicy, AutoShardPolicy.AUTO), "num_devices": (int, None)}

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "auto_shard_policy" and value is None:
            raise TypeError(f'Property "{name}" must be of type {AutoShardPolicy}, got: None (type: {type(None)})')
        super().__setattr__(name, value)


class OptimizationOptions(_Group):
    _title = "OptimizationOptions"
    _schema = {
        name: (bool, None)
        for name in (
            "apply_default_optimizations",
            "filter_fusion",
            "filter_parallelization",
            "inject_prefetch",
            "map_and_batch_fusion",
            "map_and_filter_fusion",
            "map_fusion",
            "map_parallelization",
            "noop_elimination",
            "parallel_batch",
            "seq_interleave_prefetch",
            "shuffle_and_repeat_fusion",
        )
    }


class ThreadingOptions(_Group):
    _title = "ThreadingOptions"
    _schema = {"max_intra_op_parallelism": (int, None), "private_threadpool_size": (int, None)}


class AutotuneOptions(_Group):
    _title = "AutotuneOptions"
    _schema = {
        "autotune_algorithm": (object, None),
        "cpu_budget": (int, None),
        "enabled": (bool, None),
        "initial_parallelism": (int, None),
        "min_parallelism": (int, None),
        "ram_budget": (int, None),
    }


class ServiceOptions(_Group):
    _title = "ServiceOptions"
    _schema = {"pinned": (bool, None)}


class Options(_Group):
    """``tf.data.Options()``: every option unset (None), ``experimental_distribute.auto_shard_policy`` AUTO."""

    _title = "Options"
    _schema = {
        "autotune": (AutotuneOptions, AutotuneOptions),
        "dataset_name": (str, None),
        "deterministic": (bool, None),
        "experimental_deterministic": (bool, None),
        "experimental_distribute": (DistributeOptions, DistributeOptions),
        "experimental_external_state_policy": (ExternalStatePolicy, None),
        "experimental_optimization": (OptimizationOptions, OptimizationOptions),
        "experimental_service": (ServiceOptions, ServiceOptions),
        "experimental_slack": (bool, None),
        "experimental_symbolic_checkpoint": (bool, None),
        "experimental_warm_start": (bool, None),
        "framework_type": (list, None),
        "threading": (ThreadingOptions, ThreadingOptions),
    }

    @property
    def experimental_threading(self) -> ThreadingOptions:
        """The deprecated name of ``threading``."""
        return self.threading

    def merge(self, options: Options) -> Options:
        """A new ``Options``: this one's values, overridden by ``options``' set ones."""
        return merge_options(self, options)


def merge_options(*options: Options) -> Options:
    """One ``Options`` from several, later ones' set values taking precedence (TF's merge)."""
    out = Options()
    for o in options:
        if o is not None:
            if not isinstance(o, Options):
                raise TypeError(f"Argument `options` must be an instance of `tf.data.Options`; got {type(o)}.")
            out._merge(o)
    return out
