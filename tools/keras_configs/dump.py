"""``python dump.py keras|tapeflow OUT.json [--other OTHER.json] [--only REGEX]``: for every expression in
specs.py, ``get_config()``, ``serialize_keras_object`` as JSON, ``get_config()`` after rebuilding from that
JSON, whether ``from_config(get_config())`` gives the same config, and (``--other``) ``get_config()`` of the
other side's serialized object rebuilt here. Run with /opt/tfvenv/bin/python for ``keras`` and with tapeflow's
venv (PYTHONPATH=the checkout) for ``tapeflow``; tuples are written ``{"__tuple__": [...]}``."""

import argparse
import copy
import json
import os
import re
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def canon(v):
    if isinstance(v, dict):
        return {str(k): canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [canon(x) for x in v]
    if isinstance(v, tuple):
        return {"__tuple__": [canon(x) for x in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, np.generic):
        return {"__np__": str(v.dtype), "v": v.item()}
    if isinstance(v, np.ndarray):
        return {"__ndarray__": str(v.dtype), "v": v.tolist()}
    return {"__obj__": type(v).__module__ + "." + type(v).__name__, "repr": repr(v)[:200]}


def _error(e):
    return f"{type(e).__name__}: {e}"[:300]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("backend", choices=["keras", "tapeflow"])
    ap.add_argument("out")
    ap.add_argument("--other")
    ap.add_argument("--only")
    args = ap.parse_args()
    if args.backend == "keras":
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
        import keras as K  # noqa: N812
    else:
        import tapeflow as tf

        K = tf.keras
    from specs import SPECS, relu_fn

    clear, ser, deser = K.backend.clear_session, K.saving.serialize_keras_object, K.saving.deserialize_keras_object
    other = json.load(open(args.other)) if args.other else {}
    out = {}
    for label, expr in SPECS:
        if args.only and not re.search(args.only, label):
            continue
        rec = {}
        try:
            clear()
            obj = eval(expr, {"K": K, "relu_fn": relu_fn})
            rec["class"] = type(obj).__module__ + "." + type(obj).__qualname__
            cfg = obj.get_config()
            rec["config"] = canon(cfg)
            try:
                rec["serialized"] = json.loads(json.dumps(ser(obj)))
                clear()
                rec["json_config"] = canon(deser(copy.deepcopy(rec["serialized"])).get_config())
            except Exception as e:
                rec["serialize_error"] = _error(e)
            try:
                again = canon(type(obj).from_config(cfg).get_config())
                rec["roundtrip_equal"] = again == canon(cfg)
                if not rec["roundtrip_equal"]:
                    rec["roundtrip"] = again
            except Exception as e:
                rec["roundtrip_error"] = _error(e)
        except Exception as e:
            rec["error"] = _error(e)
        theirs = other.get(label, {}).get("serialized")
        if theirs is not None:
            try:
                clear()
                rec["cross_config"] = canon(deser(copy.deepcopy(theirs)).get_config())
            except Exception as e:
                rec["cross_error"] = _error(e)
        out[label] = rec
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
