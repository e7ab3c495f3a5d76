"""Records the legacy ``tf.keras.backend`` cases (tests/keras_backend_cases.py) under real TensorFlow 2.21 into
tests/fixtures/keras/backend_legacy.json, which tests/test_keras_backend_legacy.py replays without TF:

    /path/to/tf/bin/python tools/keras_backend_legacy/record.py
"""

import importlib.util
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    spec = importlib.util.spec_from_file_location("cases", os.path.join(ROOT, "tests", "keras_backend_cases.py"))
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    out = {"tf_version": tf.__version__, "keras_version": tf.keras.__version__, "cases": cases.run(tf)}
    with open(os.path.join(ROOT, "tests", "fixtures", "keras", "backend_legacy.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
