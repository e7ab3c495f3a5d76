"""``tf.distribute.cluster_resolver`` and ``tf.train.ClusterSpec``: who is in the cluster, and which task this is.

Under ``mpirun`` the MPI world *is* the cluster: ``MultiWorkerMirroredStrategy`` has one worker per
process, rank order. A ``TF_CONFIG`` in the environment (TF's way of describing a cluster of gRPC
servers) is read as the description of that same cluster: its ``chief`` and ``worker`` tasks must be as
many as the processes, and rank ``r`` is the ``r``-th of them (the chief first). ``mpirun -x TF_CONFIG``
gives every process the same ``task`` entry, which then cannot say which process is which, so the rank
does; a ``task`` that differs between processes must be the rank's own (else ``ValueError``: launch so
that ``task.index`` follows ``OMPI_COMM_WORLD_RANK``, or drop ``task``). See ``resolve_mpi_cluster``.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

__all__ = [
    "ClusterSpec",
    "ClusterResolver",
    "TFConfigClusterResolver",
    "SimpleClusterResolver",
    "MPIClusterResolver",
    "resolve_mpi_cluster",
]

# The jobs that train under MultiWorkerMirroredStrategy, in TF's task order (the chief is worker 0).
_TRAINING_JOBS = ("chief", "worker")


class ClusterSpec:
    """``tf.train.ClusterSpec``: job name -> task addresses (a list, or a dict index -> address)."""

    def __init__(self, cluster: Any) -> None:
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if not isinstance(cluster, dict):
            raise TypeError(
                "`tf.train.ClusterSpec` must be constructed with a dictionary mapping job names to "
                f"lists or dictionaries of network addresses; got {type(cluster).__name__}."
            )
        self._spec: dict = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str):
                raise TypeError(f"Job name {job!r} must be a string.")
            if isinstance(tasks, dict):
                self._spec[job] = {int(i): str(a) for i, a in tasks.items()}
            elif isinstance(tasks, (list, tuple)):
                self._spec[job] = {i: str(a) for i, a in enumerate(tasks)}
            else:
                raise TypeError(
                    f"The tasks for job {job!r} must be a list or a dictionary from integers to "
                    f"strings; got {type(tasks).__name__}."
                )

    def as_dict(self) -> dict:
        """Each job's addresses: a list when its task indices are ``0..n-1``, else a dict (as TF)."""
        out: dict = {}
        for job, tasks in self._spec.items():
            idx = sorted(tasks)
            out[job] = [tasks[i] for i in idx] if idx == list(range(len(idx))) else dict(tasks)
        return out

    @property
    def jobs(self) -> list:
        return list(self._spec)

    def num_tasks(self, job_name: str) -> int:
        return len(self._tasks(job_name))

    def task_indices(self, job_name: str) -> list:
        return sorted(self._tasks(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._tasks(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index} in job {job_name!r}")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list:
        tasks = self._tasks(job_name)
        return [tasks.get(i) for i in range(max(tasks) + 1)] if tasks else []

    def _tasks(self, job_name: str) -> dict:
        if job_name not in self._spec:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        return self._spec[job_name]

    def __bool__(self) -> bool:
        return bool(self._spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClusterSpec) and self._spec == other._spec

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ClusterSpec({dict(sorted(self.as_dict().items()))!r})"


class ClusterResolver:
    """``tf.distribute.cluster_resolver.ClusterResolver``: the base of the resolvers."""

    task_type: str | None = None
    task_id: int | None = None
    rpc_layer: str | None = None
    environment: str | None = None

    def cluster_spec(self) -> ClusterSpec:  # pragma: no cover - abstract
        raise NotImplementedError

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            return ""
        address = self.cluster_spec().task_address(task_type, task_id)
        layer = rpc_layer or self.rpc_layer
        return f"{layer}://{address}" if layer else address

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict:
        """tapeflow computes on CPUs: no accelerators."""
        from collections import defaultdict

        return defaultdict(int)


class SimpleClusterResolver(ClusterResolver):
    """``tf.distribute.cluster_resolver.SimpleClusterResolver``: a given cluster and task."""

    def __init__(
        self,
        cluster_spec: Any,
        master: str = "",
        task_type: str | None = None,
        task_id: int | None = None,
        environment: str = "",
        num_accelerators: Any = None,
        rpc_layer: str | None = None,
    ) -> None:
        self._cluster_spec = ClusterSpec(cluster_spec)
        self._master = master
        self.task_type, self.task_id = task_type, task_id
        self.environment, self.rpc_layer = environment, rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        if task_type is not None and task_id is not None:
            return super().master(task_type, task_id, rpc_layer)
        return self._master


def _load_tf_config() -> dict:
    text = os.environ.get("TF_CONFIG")
    if not text:
        return {}
    try:
        config = json.loads(text)
    except ValueError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON ({e}): {text!r}") from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object with 'cluster' and 'task'; got {text!r}")
    return config


class TFConfigClusterResolver(ClusterResolver):
    """``tf.distribute.cluster_resolver.TFConfigClusterResolver``: the cluster and task in ``TF_CONFIG``
    (read when asked, as TF; None / an empty cluster without it)."""

    def __init__(
        self,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
        environment: str | None = None,
    ) -> None:
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._environment = rpc_layer, environment

    @property
    def task_type(self) -> str | None:  # type: ignore[override]
        if self._task_type is not None:
            return self._task_type
        task = _load_tf_config().get("task", {})
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, value: str | None) -> None:
        self._task_type = value

    @property
    def task_id(self) -> int | None:  # type: ignore[override]
        if self._task_id is not None:
            return self._task_id
        task = _load_tf_config().get("task", {})
        return int(task["index"]) if "index" in task else None

    @task_id.setter
    def task_id(self, value: int | None) -> None:
        self._task_id = value

    @property
    def rpc_layer(self) -> str | None:  # type: ignore[override]
        return self._rpc_layer if self._rpc_layer is not None else _load_tf_config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, value: str | None) -> None:
        self._rpc_layer = value

    @property
    def environment(self) -> str | None:  # type: ignore[override]
        return self._environment if self._environment is not None else _load_tf_config().get("environment")

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec(_load_tf_config().get("cluster", {}))


class MPIClusterResolver(ClusterResolver):
    """The cluster of an MPI job as ``MultiWorkerMirroredStrategy`` sees it (see ``resolve_mpi_cluster``).
    With no MPI (one process) and no ``TF_CONFIG``, ``task_type``/``task_id`` are None and the cluster is
    empty, as TF's ``TFConfigClusterResolver`` with no TF_CONFIG."""

    def __init__(self, comm: Any, task_type: str | None, task_id: int | None, spec: dict | None) -> None:
        self._comm = comm
        self.task_type, self.task_id = task_type, task_id
        self._spec = spec  # None: the hosts of the MPI processes, gathered when first asked

    def cluster_spec(self) -> ClusterSpec:
        if self._spec is None:
            if not self._comm.is_mpi:
                return ClusterSpec({})
            # a collective: every rank asks at the same point (TF's tutorials call it right after the strategy)
            hosts = self._comm.allgather_object(socket.gethostname())
            self._spec = {"worker": [f"{h}:{r}" for r, h in enumerate(hosts)]}
        return ClusterSpec(self._spec)


def _training_tasks(cluster: dict, source: str) -> list:
    """``[(task_type, task_id), ...]`` of the cluster's training tasks, in TF's order (chief, then workers)."""
    others = sorted(set(cluster) - set(_TRAINING_JOBS) - {"evaluator"})
    if others:
        raise NotImplementedError(
            f"MultiWorkerMirroredStrategy: {source} names the job(s) {others} (ParameterServerStrategy's "
            "'ps' tasks?); tapeflow's multi-worker training has only 'chief' and 'worker' tasks, one per MPI "
            "process. Drop those jobs from the cluster."
        )
    spec = ClusterSpec(cluster)
    if "chief" in cluster and spec.num_tasks("chief") > 1:
        raise ValueError(f"{source}: there must be at most one 'chief' task; got {spec.num_tasks('chief')}.")
    return [(job, i) for job in _TRAINING_JOBS if job in cluster for i in spec.task_indices(job)]


def resolve_mpi_cluster(comm: Any, resolver: Any = None) -> MPIClusterResolver:
    """This process's task in the MPI job, agreeing with ``TF_CONFIG`` (or a given resolver) if there is one.

    Every process calls it at the same point (it may gather each process's task, a collective).
    ``ValueError`` when the described cluster has another number of training tasks than there are
    processes, or when processes are given different tasks that are not their ranks'."""
    source = "the cluster resolver" if resolver is not None else "TF_CONFIG"
    if resolver is not None:
        cluster = resolver.cluster_spec().as_dict()
        task = {"type": resolver.task_type, "index": resolver.task_id}
    else:
        config = _load_tf_config()
        cluster, task = config.get("cluster") or {}, config.get("task") or {}
    if not isinstance(cluster, dict) or not isinstance(task, dict):
        raise ValueError(f"{source}: 'cluster' and 'task' must be JSON objects; got {cluster!r} and {task!r}.")
    if not cluster:
        if comm.is_mpi:
            return MPIClusterResolver(comm, "worker", comm.rank, None)
        return MPIClusterResolver(comm, None, None, {})
    tasks = _training_tasks(cluster, source)
    if task.get("type") == "evaluator":
        raise NotImplementedError(
            f"MultiWorkerMirroredStrategy: {source} makes this process the 'evaluator' task (TF's side-car "
            "evaluation); tapeflow runs every MPI process as a training worker. Evaluate in a separate job."
        )
    if not comm.is_mpi and len(tasks) > 1:
        raise NotImplementedError(
            f"MultiWorkerMirroredStrategy: {source} describes a cluster of {len(tasks)} gRPC workers, which is "
            "not implemented in tapeflow; tapeflow's multi-worker training runs on MPI: launch the program once "
            f"with `mpirun -n {len(tasks)} python train.py` (the same TF_CONFIG for all, or none; across hosts: "
            "`mpirun --hostfile hosts ...`)."
        )
    if len(tasks) != comm.size:
        raise ValueError(
            f"MultiWorkerMirroredStrategy: {source} describes a cluster of {len(tasks)} training task(s) "
            f"({', '.join(f'{t}:{i}' for t, i in tasks)}) but mpirun started {comm.size} processes. tapeflow's "
            f"workers are the MPI processes: launch `mpirun -n {len(tasks)} python ...`, or make TF_CONFIG's "
            f"'chief' and 'worker' lists {comm.size} long (or unset TF_CONFIG)."
        )
    mine = (task.get("type"), None if task.get("index") is None else int(task["index"]))
    everyone = comm.allgather_object(mine) if comm.is_mpi else [mine]
    if any(t != everyone[0] for t in everyone) or comm.size == 1:
        # the processes were told apart (one TF_CONFIG each): each must be told its rank's task
        for rank, (given, expected) in enumerate(zip(everyone, tasks)):
            if given[0] is not None and given != expected:
                raise ValueError(
                    f"MultiWorkerMirroredStrategy: {source} makes MPI process {rank} the task "
                    f"{given[0]}:{given[1]}, but under mpirun process {rank} is the cluster's task "
                    f"{expected[0]}:{expected[1]} (the chief first, then the workers in order). Set each "
                    "process's task.index from its rank (OMPI_COMM_WORLD_RANK), or give every process the same "
                    "TF_CONFIG and let the ranks decide."
                )
    task_type, task_id = tasks[comm.rank]
    return MPIClusterResolver(comm, task_type, task_id, ClusterSpec(cluster).as_dict())
