"""``tf.compat.v1.train``: TF 1's name-based ``Saver`` and ``init_from_checkpoint``, the session-run hook
protocol's types (``SessionRunHook`` and its arguments, for code that defines hooks); TF 2's ``tf.train`` names
otherwise.

A ``Saver`` checkpoint stores each variable under its name (``scoped/c``), with no object graph, as TF 1's;
``tf.train.load_checkpoint`` lists those names, and ``tf.train.Checkpoint.restore`` of it matches variables
by name, as TF 2 restores a TF 1 checkpoint. (The bytes are tapeflow's checkpoint format, as all its
checkpoints.)
"""

from __future__ import annotations

import collections
import os
import time
from typing import Any

import numpy as np

from tapeflow.framework import errors
from tapeflow.framework.tensor import Tensor
from tapeflow.framework.variables import Variable
from tapeflow.graph.session import default_graph
from tapeflow.train import checkpoint

__all__ = ["Saver", "init_from_checkpoint", "SessionRunHook", "SessionRunArgs", "SessionRunContext",
           "SessionRunValues"]


def _name(v: Variable) -> str:
    return v.name.split(":")[0]


class Saver:
    """``tf.compat.v1.train.Saver(var_list)``: saves and restores variables by name (``var_list`` a list of
    variables, a dict name -> variable, or None for the TF 1 graph's variables). ``sess`` may be None."""

    def __init__(self, var_list: Any = None, reshape: bool = False, sharded: bool = False, max_to_keep: int = 5,
                 keep_checkpoint_every_n_hours: float = 10000.0, name: str | None = None, restore_sequentially:
                 bool = False, saver_def: Any = None, builder: Any = None, defer_build: bool = False,
                 allow_empty: bool = False, write_version: Any = None, pad_step_number: bool = False,
                 save_relative_paths: bool = False, filename: str | None = None) -> None:
        if var_list is None:
            g = default_graph()
            if g is None:
                raise RuntimeError("When eager execution is enabled, `var_list` must specify a list or dict of "
                                   "variables to save")
            var_list = list(g.variables)
        if isinstance(var_list, dict):
            self._vars = dict(var_list)
        else:
            self._vars = {}
            for v in var_list:
                if _name(v) in self._vars:
                    raise ValueError(f"At least two variables have the same name: {_name(v)}")
                self._vars[_name(v)] = v
        if not self._vars and not allow_empty:
            raise ValueError("No variables to save")

    def save(self, sess: Any, save_path: str, global_step: Any = None, latest_filename: str | None = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True, write_state: bool = True,
             strip_default_attrs: bool = False, save_debug_info: bool = False) -> str:
        """Writes the variables' values under their names; returns the checkpoint's path (``save_path``, with
        ``-global_step`` appended when given)."""
        path = os.fspath(save_path)
        if global_step is not None:
            path = f"{path}-{int(np.asarray(getattr(global_step, '_value', global_step)))}"
        arrays = {k: checkpoint._to_array(v, strings=True) for k, v in self._vars.items()}
        checkpoint._save_name_based(path, arrays)  # TF's V2 format, keyed by variable name
        if write_state:
            checkpoint._write_state(os.path.dirname(path) or ".", path, [path], [time.time()])
        return path

    def restore(self, sess: Any, save_path: str) -> None:
        """Assigns each variable the value stored under its name."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        reader = checkpoint.load_checkpoint(save_path)
        values = {}
        for key, var in self._vars.items():
            if not reader.has_tensor(key):
                raise errors.NotFoundError(
                    f"Restoring from checkpoint failed. This is most likely due to a Variable name or other graph "
                    f"key that is missing from the checkpoint. Please ensure that you have not altered the graph "
                    f"expected based on the checkpoint. Original error:\n\nKey {key} not found in checkpoint")
            arr = reader.get_tensor(key)
            checkpoint._check_compatible(key, var, arr)
            values[key] = arr
        for key, var in self._vars.items():  # all checked first: a failed restore changes nothing
            var._value = np.asarray(values[key], dtype=var._value.dtype)


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: dict) -> None:
    """Makes the variables' initializers load checkpoint values (TF 1): ``{"old_scope/": "new_scope/"}``
    maps a scope (``"/"`` is the root), ``{"name": "new/name"}`` or ``{"name": variable}`` one variable.
    Executing eagerly the values are assigned now."""
    reader = checkpoint.load_checkpoint(ckpt_dir_or_file)
    stored = list(reader.get_variable_to_shape_map())
    g = default_graph()
    by_name = {_name(v): v for v in (g.variables if g is not None else [])}
    pairs = []
    for src, dst in assignment_map.items():
        if isinstance(dst, Variable):
            pairs.append((src, dst))
        elif src.endswith("/") or src == "":
            prefix, into = ("" if src == "/" else src), ("" if dst == "/" else dst)
            pairs += [(k, by_name[into + k[len(prefix):]]) for k in stored
                      if k.startswith(prefix) and into + k[len(prefix):] in by_name]
        elif dst not in by_name:
            raise ValueError(f"Tensor {dst} is not found in {ckpt_dir_or_file} checkpoint")
        else:
            pairs.append((src, by_name[dst]))
    for key, var in pairs:
        if not reader.has_tensor(key):
            raise ValueError(f"Tensor {key} is not found in {ckpt_dir_or_file} checkpoint {stored}")
        arr = reader.get_tensor(key)
        checkpoint._check_compatible(key, var, arr)
        if g is not None:
            g.set_initial_value(var, Tensor(np.asarray(arr, dtype=var._value.dtype)))
        else:
            var._value = np.asarray(arr, dtype=var._value.dtype)


class SessionRunHook:
    """TF 1's hook into ``MonitoredSession.run()``: each method does nothing unless a subclass overrides it."""

    def begin(self) -> None:
        """Called once before the session is used."""

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called when the session has been created."""

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """Called before each ``run()``; may return ``SessionRunArgs`` to fetch more."""
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called after each ``run()``."""

    def end(self, session: Any) -> None:
        """Called at the end of the session."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook's ``before_run`` adds to a ``run()`` call."""

    def __new__(cls, fetches: Any, feed_dict: Any = None, options: Any = None) -> SessionRunArgs:
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The ``run()`` call a hook sees: its arguments, its session, and a stop request."""

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        self._original_args, self._session, self._stop_requested = original_args, session, False

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self) -> Any:
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """What ``run()`` gave back for a hook's ``SessionRunArgs``."""


def __getattr__(name: str) -> Any:
    import tapeflow.train

    return getattr(tapeflow.train, name)
