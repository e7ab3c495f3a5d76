"""Writes tests/fixtures/keras/configs_keras315.json from the two dumps.

    cd tools/keras_configs
    /opt/tfvenv/bin/python dump.py keras /tmp/k.json
    PYTHONPATH=../.. ../../.venv/bin/python dump.py tapeflow /tmp/t.json --other /tmp/k.json
    /opt/tfvenv/bin/python dump.py keras /tmp/k.json --other /tmp/t.json   # Keras reads tapeflow's too
    python compare.py /tmp/k.json /tmp/t.json                              # what still differs
    python make_fixture.py /tmp/k.json /tmp/t.json ../../tests/fixtures/keras/configs_keras315.json

An expression is pinned when tapeflow's config and JSON equal Keras's and ``from_config`` round-trips; the
fixture keeps Keras's values (tests/test_keras_configs.py reads it)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from specs import SPECS  # noqa: E402


def plain(v):  # the JSON form: tuples as lists
    if isinstance(v, dict):
        if set(v) == {"__tuple__"}:
            return [plain(x) for x in v["__tuple__"]]
        return {a: plain(b) for a, b in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def main(keras_json, tapeflow_json, path):
    k, t = json.load(open(keras_json)), json.load(open(tapeflow_json))
    out = {}
    for label, expr in SPECS:
        kr, tr = k.get(label, {}), t.get(label, {})
        if "config" not in kr or "config" not in tr or kr["config"] != tr["config"]:
            continue
        if kr.get("serialized") != tr.get("serialized") or not tr.get("roundtrip_equal"):
            continue
        if "relu_fn" in expr:  # a function of this module: not loadable elsewhere
            continue
        ser = kr["serialized"]
        assert ser["config"] == plain(kr["config"]), label
        entry = {"expr": expr, "config": kr["config"], "serialized": {a: b for a, b in ser.items() if a != "config"}}
        if kr.get("json_config") != kr["config"]:
            entry["loaded_config"] = kr["json_config"]  # Keras's get_config() after a JSON round trip
        out[label] = entry
    with open(path, "w") as f:
        body = ",\n".join(f"{json.dumps(a)}: {json.dumps(b, separators=(',', ':'))}" for a, b in out.items())
        f.write("{\n" + body + "\n}\n")
    print(len(out), "specs written")


if __name__ == "__main__":
    main(*sys.argv[1:4])
