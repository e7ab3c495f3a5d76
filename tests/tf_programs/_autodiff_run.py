"""Run a tests/tf_programs/autodiff_*.py program (written as `import tensorflow as tf`) under real
TensorFlow or under tapeflow (aliased as `tensorflow`):  python _autodiff_run.py PROG.py [tf|tapeflow]"""
import os
import runpy
import sys

path, which = sys.argv[1], sys.argv[2]
if which == "tf":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow  # noqa: F401
else:
    import tapeflow

    sys.modules["tensorflow"] = tapeflow
runpy.run_path(path, run_name="__main__")
