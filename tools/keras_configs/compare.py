"""compare.py keras.json tapeflow.json [-v]: per spec, the get_config differences."""

import json
import sys

k = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
verbose = "-v" in sys.argv
flt = [a for a in sys.argv[3:] if not a.startswith("-")]
match = total = 0


def short(v):
    s = json.dumps(v)
    return s if len(s) < 160 else s[:157] + "..."


for label in k:
    if flt and not any(f in label for f in flt):
        continue
    kr, tr = k[label], t.get(label, {})
    if "error" in kr:
        print(f"{label}: KERAS ERROR {kr['error'][:100]}")
        continue
    total += 1
    probs = []
    if "error" in tr:
        probs.append(f"TAPEFLOW ERROR {tr['error'][:200]}")
    else:
        kc, tc = kr["config"], tr["config"]
        for key in kc:
            if key not in tc:
                probs.append(f"missing {key}={short(kc[key])}")
            elif kc[key] != tc[key]:
                probs.append(f"differs {key}: keras={short(kc[key])} tf={short(tc[key])}")
        for key in tc:
            if key not in kc:
                probs.append(f"extra {key}={short(tc[key])}")
        if list(kc) != list(tc) and not probs and verbose:
            probs.append(f"(order differs: {list(kc)} vs {list(tc)})")
        ks, ts = kr.get("serialized"), tr.get("serialized")
        if ks != ts and not probs:
            if (
                isinstance(ks, dict)
                and isinstance(ts, dict)
                and isinstance(ks.get("config"), dict)
                and isinstance(ts.get("config"), dict)
            ):
                d = [x for x in set(ks) | set(ts) if x != "config" and ks.get(x) != ts.get(x)]
                d += [
                    f"config.{x}: {short(ks['config'].get(x))} vs {short(ts['config'].get(x))}"
                    for x in set(ks["config"]) | set(ts["config"])
                    if ks["config"].get(x) != ts["config"].get(x)
                ]
                probs.append(f"serialized differs: {d}")
            else:
                probs.append(f"serialized differs: {short(ks)} vs {short(ts)}")
        if not tr.get("roundtrip_equal", False):
            probs.append(f"roundtrip: {tr.get('roundtrip_error', 'not equal')[:150]}")
        if "cross_error" in tr:
            probs.append(f"tapeflow loads keras's: {tr['cross_error'][:150]}")
        elif "cross_config" in tr and tr["cross_config"] != kr.get("json_config", kc):
            cc = tr["cross_config"]
            kc = kr.get("json_config", kc)
            probs.append(
                "tapeflow-loaded keras obj: "
                + "; ".join(
                    f"{x}: {short(kc.get(x))} -> {short(cc.get(x))}"
                    for x in set(kc) | set(cc)
                    if kc.get(x) != cc.get(x)
                )
            )
        if "cross_error" in kr:
            probs.append(f"keras loads tapeflow's: {kr['cross_error'][:150]}")
        elif "cross_config" in kr and kr["cross_config"] != kr.get("json_config", kc):
            cc = kr["cross_config"]
            kc = kr.get("json_config", kc)
            probs.append(
                "keras-loaded tapeflow obj: "
                + "; ".join(
                    f"{x}: {short(kc.get(x))} -> {short(cc.get(x))}"
                    for x in set(kc) | set(cc)
                    if kc.get(x) != cc.get(x)
                )
            )
    if not probs:
        match += 1
        if verbose:
            print(f"{label}: OK")
    else:
        print(f"{label}:")
        [print("    " + p) for p in probs]
print(f"match {match}/{total}")
