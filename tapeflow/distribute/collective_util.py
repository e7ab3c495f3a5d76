"""Collective communication options (TF's ``collective_util``): ``CommunicationImplementation`` and
``CommunicationOptions``, exported as ``tf.distribute.experimental``'s.

They are hints in TF; here every collective is one MPI call, so ``bytes_per_pack`` and ``implementation``
(RING/NCCL/AUTO) choose nothing. ``timeout_seconds`` is kept with the strategy.
"""

from __future__ import annotations

import copy
import enum
from typing import Any

__all__ = ["CommunicationImplementation", "CollectiveCommunication", "CommunicationOptions"]


class CommunicationImplementation(enum.Enum):
    """Cross-device communication implementation (a hint): ``AUTO``, ``RING`` or ``NCCL``."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


CollectiveCommunication = CommunicationImplementation


class CommunicationOptions:
    """``tf.distribute.experimental.CommunicationOptions(bytes_per_pack=0, timeout_seconds=None,
    implementation=AUTO)``, validated as TF."""

    def __init__(
        self,
        bytes_per_pack: int = 0,
        timeout_seconds: float | None = None,
        implementation: Any = CommunicationImplementation.AUTO,
    ) -> None:
        if bytes_per_pack < 0:
            raise ValueError(f"Argument `bytes_per_pack` must be >=0, Received {bytes_per_pack}.")
        if isinstance(implementation, str):
            implementation = CommunicationImplementation(implementation.upper())
        if not isinstance(implementation, CommunicationImplementation):
            raise ValueError(
                "Argument `implementation` must be instance of "
                "`tf.distribute.experimental.CommunicationImplementation`."
            )
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation

    def merge(self, options: CommunicationOptions | None) -> CommunicationOptions:
        """A copy with ``options``' non-default values taking precedence."""
        merged = copy.deepcopy(self)
        if options is None:
            return merged
        if options.bytes_per_pack != 0:
            merged.bytes_per_pack = options.bytes_per_pack
        if options.timeout_seconds is not None:
            merged.timeout_seconds = options.timeout_seconds
        if options.implementation != CommunicationImplementation.AUTO:
            merged.implementation = options.implementation
        return merged

    def __str__(self) -> str:
        return (
            f"Options(bytes_per_pack={self.bytes_per_pack},timeout_seconds={self.timeout_seconds}, "
            f"implementation={self.implementation})"
        )
