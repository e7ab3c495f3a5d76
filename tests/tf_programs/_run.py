"""Run one tests/tf_programs/keras_*.py program under real TensorFlow or tapeflow and print its
results as JSON:  python _run.py keras_quickstart [tf|tapeflow]"""
import contextlib
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
name, which = sys.argv[1], sys.argv[2]
if which == "tf":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
else:
    import tapeflow as tf
prog = importlib.import_module(name)
with contextlib.redirect_stdout(sys.stderr):  # what the program prints is not part of its result
    result = prog.run(tf)
print(json.dumps(result, indent=1, sort_keys=True))
