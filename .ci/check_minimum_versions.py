"""Fails unless .ci/minimum-versions.txt pins exactly the lower bounds of pyproject.toml's core and test
dependencies, and the installed versions are those."""

import os
import re
import sys
from importlib.metadata import version

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
text = open(os.path.join(root, "pyproject.toml"), encoding="utf-8").read()
declared = {}
for block in (r"^dependencies = \[(.*?)\]", r"^test = \[(.*?)\]"):
    body = re.search(block, text, re.S | re.M).group(1)
    declared.update(re.findall(r'"([A-Za-z0-9_.-]+)>=([^",;]+)"', body))
pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", open(os.path.join(root, ".ci", "minimum-versions.txt")).read(),
                       re.M))


def norm(v: str | None) -> tuple:
    parts = [int(p) for p in (v or "-1").split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


bad = [f"{k}: declared >={v}, pinned {pins.get(k)}" for k, v in declared.items() if norm(pins.get(k)) != norm(v)]
bad += [f"{k}: pinned but not declared" for k in pins if k not in declared]
bad += [f"{k}: installed {version(k)}, pinned {v}" for k, v in pins.items() if norm(version(k)) != norm(v)]
if bad:
    sys.exit("minimum versions out of sync:\n  " + "\n  ".join(bad))
print(f"minimum versions: {', '.join(f'{k}=={v}' for k, v in pins.items())}")
