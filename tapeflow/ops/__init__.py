"""The op layer: every op's kernel, shape rule and gradient (see registry.py).

Every ``*_ops.py`` module in this package is an op family, and ``nn/`` holds
the ``tf.nn`` families; all are imported here, so the registry is complete as
soon as ``tapeflow.ops`` is imported.
"""

import importlib as _importlib
import pkgutil as _pkgutil

from tapeflow.ops import array_ops, math_ops, tensor_operators  # noqa: F401 - core families first

for _m in sorted(_pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if (_m.name.endswith("_ops") or _m.name == "nn") and _m.name not in ("array_ops", "math_ops"):
        _importlib.import_module(f"{__name__}.{_m.name}")
