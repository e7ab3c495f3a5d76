"""Records real TensorFlow's answers to the cases of tests/tf_cases/<module>.py into
tests/fixtures/tf_api/<module>.json (tests/test_tf_cases.py replays them on tapeflow).

    /opt/tfvenv/bin/python tools/tf_api/record.py image_boxes

A case is ``name: fn(tf) -> value``; the fixture keeps each value (nested lists of arrays as
``{"value": list, "dtype": name}``) or the exception's type and message (TF's node prefix and trailing
``name:`` removed)."""

import importlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)


def encode(v):
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    if hasattr(v, "numpy"):
        a = v.numpy()
        return {"value": a.tolist() if a.dtype.kind != "S" and a.dtype != object else
                [x.decode("latin-1") for x in a.reshape(-1)], "dtype": v.dtype.name, "shape": list(a.shape)}
    return {"python": repr(v)}


def clean(message):
    message = re.sub(r"^\{\{function_node [^}]*\}\} ", "", message)
    return re.sub(r" name: ?\S*$", "", message.strip())


def main(module):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    cases = importlib.import_module(f"tests.tf_cases.{module}").CASES
    out = {}
    for name, fn in cases.items():
        try:
            out[name] = {"result": encode(fn(tf))}
        except Exception as e:  # noqa: BLE001 - the fixture records TF's exception
            out[name] = {"error": type(e).__name__, "message": clean(str(e))}
    path = os.path.join(ROOT, "tests", "fixtures", "tf_api", f"{module}.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
    main(sys.argv[1])
