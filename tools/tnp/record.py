"""Records the ``tf.experimental.numpy`` cases (tests/tnp_more_cases.py) under real TensorFlow 2.21, numpy
behavior on, into tests/fixtures/tnp_more.json, which tests/test_tnp_more.py replays without TF:

    /path/to/tf/bin/python tools/tnp/record.py
"""

import importlib.util
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    import tensorflow.experimental.numpy as tnp

    tnp.experimental_enable_numpy_behavior()
    spec = importlib.util.spec_from_file_location("cases", os.path.join(ROOT, "tests", "tnp_more_cases.py"))
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    with open(os.path.join(ROOT, "tests", "fixtures", "tnp_more.json"), "w") as f:
        json.dump({"tf_version": tf.__version__, "cases": cases.run(tf, tnp)}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
