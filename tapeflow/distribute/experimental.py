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
from tapeflow.framework.missing import module_getattr as _module_getattr

__all__ = [
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


__getattr__ = _module_getattr(
    "tf.distribute.experimental",
    frozenset(
        (
            "CentralStorageStrategy ParameterServerStrategy TPUStrategy PreemptionCheckpointHandler PreemptionWatcher "
            "TerminationConfig CollectiveHints coordinator partitioners rpc"
        ).split()
    ),
)
