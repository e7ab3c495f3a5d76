"""``tf.distribute.experimental``: communication options and the deprecated strategy aliases."""

from __future__ import annotations

from typing import Any

from tapeflow.distribute.collective_util import (
    CollectiveCommunication,
    CommunicationImplementation,
    CommunicationOptions,
)
from tapeflow.distribute.input_lib import ValueContext
from tapeflow.distribute.strategies import MultiWorkerMirroredStrategy as _Strategy
from tapeflow.distribute.strategies import Strategy as _OneReplica
from tapeflow.distribute.strategies import _canonical_cpu, _Extended
from tapeflow.framework.missing import module_getattr as _module_getattr

__all__ = [
    "CentralStorageStrategy",
    "CommunicationImplementation",
    "CollectiveCommunication",
    "CommunicationOptions",
    "MultiWorkerMirroredStrategy",
    "ValueContext",
]


class MultiWorkerMirroredStrategy(_Strategy):
    """The deprecated ``tf.distribute.experimental.MultiWorkerMirroredStrategy(communication, cluster_resolver)``:
    ``tf.distribute.MultiWorkerMirroredStrategy`` with ``CommunicationOptions(implementation=communication)``."""

    def __init__(self, communication: Any = CommunicationImplementation.AUTO, cluster_resolver: Any = None) -> None:
        super().__init__(cluster_resolver, CommunicationOptions(implementation=communication))


class _CentralStorageExtended(_Extended):
    @property
    def worker_devices(self) -> list:
        return list(self._strategy._compute_devices)

    @property
    def parameter_devices(self) -> tuple:
        return (self._strategy._parameter_device,)


class CentralStorageStrategy(_OneReplica):
    """``tf.distribute.experimental.CentralStorageStrategy``: variables on one device, computation on the compute
    devices. On a CPU-only machine (TF's default: the one CPU for both) it has one replica, as TF's."""

    def __init__(self, compute_devices: Any = None, parameter_device: Any = None) -> None:
        super().__init__()
        devices = [_canonical_cpu(d) for d in (compute_devices or ["/cpu:0"])]
        if len(devices) > 1:
            raise NotImplementedError("CentralStorageStrategy over several compute devices is not implemented in "
                                      "tapeflow; use tf.distribute.MirroredStrategy(devices) for several replicas.")
        self._parameter_device = _canonical_cpu(parameter_device or "/cpu:0")
        self._compute_devices = devices
        self.extended = _CentralStorageExtended(self)

    def __repr__(self) -> str:
        return f"<tapeflow.distribute.experimental.CentralStorageStrategy object at {id(self):#x}>"


__getattr__ = _module_getattr(
    "tf.distribute.experimental",
    frozenset(
        (
            "ParameterServerStrategy TPUStrategy PreemptionCheckpointHandler PreemptionWatcher "
            "TerminationConfig CollectiveHints coordinator partitioners rpc"
        ).split()
    ),
)
