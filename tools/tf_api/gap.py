"""The names of TF's public namespaces that tapeflow lacks (absent, or a NotImplementedError stand-in).

    /opt/tfvenv/bin/python tools/tf_api/gap.py dump /tmp/tf_names.json       # TF 2.21's dir() of each namespace
    PYTHONPATH=. .venv/bin/python tools/tf_api/gap.py compare /tmp/tf_names.json
"""

import json
import sys

NAMESPACES = ["", "image", "nn", "math", "linalg", "strings", "random", "sparse", "io", "signal", "bitwise", "data",
              "debugging", "dtypes", "errors", "experimental", "audio", "autodiff", "config", "distribute", "lookup",
              "nest", "ragged", "saved_model", "sets", "summary", "test", "train", "types", "experimental.numpy",
              "data.experimental", "io.gfile", "random.experimental", "config.experimental",
              "distribute.experimental"]


def _module(root, path):
    obj = root
    for part in path.split(".") if path else []:
        obj = getattr(obj, part)
    return obj


def dump(path):
    import tensorflow as tf

    out = {}
    for ns in NAMESPACES:
        try:
            out[ns] = sorted(n for n in dir(_module(tf, ns)) if not n.startswith("_"))
        except AttributeError:
            out[ns] = None
    with open(path, "w") as f:
        json.dump(out, f)


def compare(path):
    import tapeflow as tf

    for ns, names in json.load(open(path)).items():
        if names is None:
            continue
        try:
            mod = _module(tf, ns)
        except Exception as e:  # noqa: BLE001 - a missing namespace is reported, whatever it raises
            print(f"tf.{ns}: the namespace is missing ({type(e).__name__})")
            continue
        absent, stand_in = [], []
        for name in names:
            try:
                getattr(mod, name)
            except NotImplementedError:
                stand_in.append(name)
            except Exception:  # noqa: BLE001
                absent.append(name)
        if absent or stand_in:
            print(f"tf.{ns}: {len(absent)} absent, {len(stand_in)} NotImplementedError, of {len(names)}")
            for label, group in (("absent", absent), ("NotImplementedError", stand_in)):
                if group:
                    print(f"  {label}: {' '.join(group)}")


if __name__ == "__main__":
    {"dump": dump, "compare": compare}[sys.argv[1]](sys.argv[2])
