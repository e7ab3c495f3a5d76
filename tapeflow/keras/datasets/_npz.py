"""Reading Keras's dataset files without unpickling arbitrary objects: ``.npz`` archives whose ragged
sequences are object arrays (imdb, reuters) and CIFAR's pickled batches. Only NumPy's array
reconstruction may be looked up (as Keras 3.15's ``npz_utils``); anything else is refused."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np

_ALLOWED = frozenset({("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
                      ("numpy._core.multiarray", "_reconstruct")})


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _ALLOWED:
            if module == "numpy.core.multiarray":  # NumPy 2's name for it (no deprecation warning)
                module = "numpy._core.multiarray"
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"Refusing to deserialize `{module}.{name}` while loading a Keras dataset. "
                                     "The file may be corrupted or malicious.")


def _read_member(fp: io.BytesIO) -> np.ndarray:
    try:
        return np.lib.format.read_array(fp, allow_pickle=False)
    except ValueError:  # an object array: its payload is a pickle
        fp.seek(0)
        version = np.lib.format.read_magic(fp)
        if version[0] == 1:
            np.lib.format.read_array_header_1_0(fp)
        elif version[0] in (2, 3):
            np.lib.format.read_array_header_2_0(fp)
        else:
            raise ValueError(f"Unsupported `.npy` file version: {version}.") from None
        return RestrictedUnpickler(fp).load()


def load_npz(path: str) -> dict:
    """``{member name: array}`` of an ``.npz`` file (object arrays allowed, arbitrary pickles not)."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            if member.endswith(".npy"):
                with archive.open(member) as raw:
                    arrays[member[:-4]] = _read_member(io.BytesIO(raw.read()))
    return arrays


def load_cifar_batch(fpath: str, label_key: str = "labels") -> tuple[np.ndarray, list]:
    """A CIFAR batch's images as (n, 3, 32, 32) uint8 and its labels (Python 2 pickles of byte-string keys)."""
    with open(fpath, "rb") as f:
        d = RestrictedUnpickler(f, encoding="bytes").load()
    d = {k.decode("utf8") if isinstance(k, bytes) else k: v for k, v in d.items()}
    data = d["data"]
    return data.reshape(data.shape[0], 3, 32, 32), d[label_key]
