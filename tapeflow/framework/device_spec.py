"""``tf.DeviceSpec``: a device name (``/job:worker/replica:0/task:1/device:GPU:0``) as its parts, as TF parses,
merges and prints it. tapeflow runs every op on the CPU; a DeviceSpec is accepted wherever a device name is."""

from __future__ import annotations

from typing import Any

__all__ = ["DeviceSpec"]


def _int_or_none(v: Any) -> int | None:
    return None if v is None else int(v)


def _type_or_none(v: Any) -> str | None:
    if v is None:
        return None
    v = str(v)
    return v.upper() if v.lower() in ("cpu", "gpu") else v


class DeviceSpec:
    """``tf.DeviceSpec(job=None, replica=None, task=None, device_type=None, device_index=None)``: an immutable
    (partial) device specification; ``to_string()`` gives TF's device name, ``from_string`` parses one.

    >>> tf.DeviceSpec(job="worker", task=1, device_type="gpu", device_index=0).to_string()
    '/job:worker/task:1/device:GPU:0'
    """

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index", "_as_string", "_hash")

    def __init__(self, job: str | None = None, replica: int | None = None, task: int | None = None,
                 device_type: str | None = None, device_index: int | None = None) -> None:
        self._job = None if job is None else str(job)
        self._replica = _int_or_none(replica)
        self._task = _int_or_none(task)
        self._device_type = _type_or_none(device_type)
        self._device_index = _int_or_none(device_index)
        self._as_string = self._components_to_string()
        self._hash = hash(self._as_string)

    def _components_to_string(self) -> str:
        out = ""
        if self._job is not None:
            out += f"/job:{self._job}"
        if self._replica is not None:
            out += f"/replica:{self._replica}"
        if self._task is not None:
            out += f"/task:{self._task}"
        if self._device_type is not None:
            index = "*" if self._device_index is None else str(self._device_index)
            out += f"/device:{self._device_type}:{index}"
        return out

    job = property(lambda self: self._job)
    replica = property(lambda self: self._replica)
    task = property(lambda self: self._task)
    device_type = property(lambda self: self._device_type)
    device_index = property(lambda self: self._device_index)

    def to_string(self) -> str:
        """TF's device name: ``/job:<job>/replica:<replica>/task:<task>/device:<type>:<index>`` (parts that are
        None left out; an unset index is ``*``)."""
        return self._as_string

    @classmethod
    def from_string(cls, spec: str) -> DeviceSpec:
        """Parses a device name (``/job:ps/task:0/device:GPU:1``, the legacy ``/gpu:0``, or ``GPU:0``)."""
        return cls(*cls._string_to_components(spec))

    @staticmethod
    def _string_to_components(spec: Any) -> tuple:
        if isinstance(spec, DeviceSpec):
            return spec._job, spec._replica, spec._task, spec._device_type, spec._device_index
        job = replica = task = device_type = device_index = None
        for part in (str(spec or "")).split("/"):
            ly = part.split(":")
            n = len(ly)
            if not part:
                continue
            name = ly[0].lower()
            if n == 2 and name == "job":
                job = ly[1]
            elif n == 2 and name == "replica":
                replica = ly[1]
            elif n == 2 and name == "task":
                task = ly[1]
            elif n in (1, 2) and name in ("cpu", "gpu") or (n == 2 and ly[0].isupper()):
                device_type = ly[0].upper() if name in ("cpu", "gpu") else ly[0]  # legacy /gpu:0, or GPU:0
                device_index = None if n == 1 or ly[1] == "*" else int(ly[1])
            elif n == 3 and name == "device":
                device_type = ly[1]
                device_index = None if ly[2] == "*" else int(ly[2])
            elif n and ly[0]:
                raise ValueError(f"Unknown attribute '{ly[0]}' is encountered while parsing the device spec: "
                                 f"'{spec}'.")
        return job, replica, task, device_type, device_index

    def replace(self, **kwargs: Any) -> DeviceSpec:
        """A copy with the given fields (``job``, ``replica``, ``task``, ``device_type``, ``device_index``)
        replaced."""
        fields = {"job": self._job, "replica": self._replica, "task": self._task, "device_type": self._device_type,
                  "device_index": self._device_index}
        fields.update(kwargs)
        return DeviceSpec(**fields)

    def make_merged_spec(self, dev: Any) -> DeviceSpec:
        """A copy with the fields ``dev`` (a DeviceSpec or device name) sets overriding this one's."""
        job, replica, task, device_type, device_index = self._string_to_components(dev)
        return DeviceSpec(job if job is not None else self._job, replica if replica is not None else self._replica,
                          task if task is not None else self._task,
                          device_type if device_type is not None else self._device_type,
                          device_index if device_index is not None else self._device_index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceSpec) and self._as_string == other._as_string

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return (f"<DeviceSpec(job={self._job}, replica={self._replica}, task={self._task}, "
                f"device_type={self._device_type}, device_index={self._device_index})>")

    __str__ = __repr__
