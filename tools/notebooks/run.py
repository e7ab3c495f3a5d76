"""Run a Jupyter notebook's code cells in order, under real TensorFlow or under tapeflow, and write what each
cell printed as JSON (a developer tool, not part of the tests).

    python tools/notebooks/run.py NOTEBOOK.ipynb --backend {tensorflow,tapeflow} --out cells.json [--seed 0]

- One namespace for all cells, like a kernel. Lines starting with ``!`` or ``%`` are dropped; a cell starting
  with ``%%writefile NAME`` writes its body to NAME, as IPython.
- Under ``--backend tapeflow`` the modules ``tensorflow``/``tensorflow.*`` resolve to ``tapeflow``/``tapeflow.*``
  and ``keras``/``keras.*`` to ``tapeflow.keras``/``tapeflow.keras.*`` (nothing else is changed).
- Downloads and packages absent here are replaced by the local stand-ins of ``standins.py`` in both backends.
- Long trainings are capped by the literal source substitutions in ``SUBSTITUTIONS`` (same for both backends).
- Per cell: stdout, the repr of the last expression (unless the cell ends with ``;``), the exception class and
  message if it raised, and the seconds it took. Seeds: ``random``, NumPy and ``tf.random.set_seed`` get ``--seed``.

``compare.py`` compares two such files; ``suite.py`` runs the whole list of notebooks and prints the table.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.abc
import importlib.util
import json
import linecache
import logging
import os
import random
import signal
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))

# Literal (old, new) source replacements per notebook, applied to every code cell in both backends.
SUBSTITUTIONS: dict[str, list[tuple[str, str]]] = {
    "classification": [("epochs=10", "epochs=2")],
    "regression": [("epochs=100", "epochs=10")],
    "overfit_and_underfit": [("max_epochs=10000", "max_epochs=3")],
    "save_and_load": [("epochs=10,", "epochs=2,"), ("epochs=50,", "epochs=5,"), ("epochs=5)", "epochs=1)")],
    "autoencoder": [("epochs=10,", "epochs=1,"), ("epochs=20,", "epochs=3,"),
                    ("(x_train, _), (x_test, _) = fashion_mnist.load_data()",
                     "(x_train, _), (x_test, _) = fashion_mnist.load_data()\nx_train = x_train[:6000]")],
    "dcgan": [("EPOCHS = 50", "EPOCHS = 1"),
              ("BUFFER_SIZE = 60000", "BUFFER_SIZE = 60000\ntrain_images = train_images[:1024]")],
    "cvae": [("epochs = 10", "epochs = 1"),
             ("train_size = 60000", "train_size = 2048\ntrain_images = train_images[:2048]"),
             ("test_size = 10000", "test_size = 1024\ntest_images = test_images[:1024]")],
    "mixed_precision": [("epochs=5,", "epochs=1,"), ("for epoch in range(5):", "for epoch in range(1):"),
                        ("x_test = x_test.reshape(10000, 784).astype('float32') / 255",
                         "x_test = x_test.reshape(10000, 784).astype('float32') / 255\n"
                         "x_train, y_train, x_test, y_test = x_train[:8192], y_train[:8192], x_test[:1024], "
                         "y_test[:1024]")],
    "basic_training_loops": [],
    "custom_training": [("EPOCHS = 10", "EPOCHS = 1"),
                        ("(train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data()",
                         "(train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data()\n"
                         "train_images, train_labels = train_images[:4096], train_labels[:4096]")],
    "keras": [("EPOCHS = 12", "EPOCHS = 1"),
              ("model.fit(train_dataset, epochs=EPOCHS, callbacks=callbacks)",
               "model.fit(train_dataset.take(100), epochs=EPOCHS, callbacks=callbacks)")],
    "custom_training_walkthrough": [("num_epochs = 201", "num_epochs = 51")],
    "mlp_core": [("epochs=10)", "epochs=1)")],
    "logistic_regression_core": [],
    "quickstart_core": [],
    "distribution": [("epochs = 3", "epochs = 1")],
    # img11: the image tutorials (the stand-in datasets are small; CIFAR-10's has the real 50000 + 10000 images)
    "cnn": [("epochs=10,", "epochs=2,"),
            ("train_images, test_images = train_images / 255.0, test_images / 255.0",
             "train_images, train_labels = train_images[:5000], train_labels[:5000]\n"
             "test_images, test_labels = test_images[:1000], test_labels[:1000]\n"
             "train_images, test_images = train_images / 255.0, test_images / 255.0")],
    "image_classification": [("epochs=10", "epochs=2"), ("epochs = 15", "epochs = 2")],
    "data_augmentation": [("epochs=5", "epochs=2")],
    "imbalanced_data": [("EPOCHS = 100", "EPOCHS = 2"), ("epochs=20,", "epochs=2,")],  # img11: 182k rows per epoch
    "time_series": [("MAX_EPOCHS = 20", "MAX_EPOCHS = 1")],  # img11: 12 fits over 50k hourly windows
    "pix2pix": [("steps=40000)", "steps=10)")],
    "transfer_learning": [("initial_epochs = 10", "initial_epochs = 2"),  # nb11: MobileNetV2 at 160x160
                          ("fine_tune_epochs = 10", "fine_tune_epochs = 2")],
    "distribute_save_and_load": [  # nb11: 2560 + 640 of the 60000 + 10000 images; files in the work folder
        ("mnist_train, mnist_test = datasets['train'], datasets['test']",
         "mnist_train, mnist_test = datasets['train'].take(2560), datasets['test'].take(640)"),
        ("'/tmp/keras_save.keras'", "'keras_save.keras'"), ("'/tmp/tf_save'", "'tf_save'")],
    "advanced": [("EPOCHS = 5", "EPOCHS = 2")],  # lead: quickstart/advanced
    "numpy": [("epochs=10)", "epochs=2)")],  # lead: load_data/numpy
    "pandas_dataframe": [("epochs=15", "epochs=3")],  # lead: load_data/pandas_dataframe
    "segmentation": [("EPOCHS = 20", "EPOCHS = 3")],  # lead: images/segmentation (128 stand-in pets)
    "style_transfer": [("max_dim = 512", "max_dim = 128"), ("epochs = 10", "epochs = 2"),  # lead: VGG19 on CPU
                       ("steps_per_epoch = 100", "steps_per_epoch = 5")],
    # nb11: deepdream's InceptionV3 gradient ascent on CPU: a 150-px image, a few steps per call and octave
    "deepdream": [("max_dim=500", "max_dim=150"), ("steps=100, step_size=0.01)", "steps=3, step_size=0.01)"),
                  ("steps=50, step_size=0.01)", "steps=2, step_size=0.01)"),
                  ("steps_per_octave=100,", "steps_per_octave=2,")],
    "actor_critic": [("max_episodes = 10000", "max_episodes = 20")],  # nb11: stand-in gym CartPole-v1
    "integrated_gradients": [("m_steps=240", "m_steps=48")],  # nb11: MobileNetV2 input gradients on CPU
    "cyclegan": [("EPOCHS = 10", "EPOCHS = 1"), ("test_horses.take(5)", "test_horses.take(1)")],  # nb11: 2 steps
    "fault_tolerance": [  # nb11: the custom loop's full-batch steps on 4096 of the 60000 images
        ("logits = model(x_train, training=True)\n      loss_value = loss_fn(y_train, logits)",
         "logits = model(x_train[:4096], training=True)\n      loss_value = loss_fn(y_train[:4096], logits)")],
    # text11: the tensorflow/text tutorials. Two were written for Keras 2 and fail at once under Keras 3 (in TF and
    # tapeflow alike): Model.__init__ takes no positional argument, RNN.get_initial_state takes the batch size, and
    # get_file(untar=True) of "aclImdb_v1.tar.gz" extracts into aclImdb_v1_extracted/; the substitutions below
    # repair that so the rest of them runs.
    "text_generation": [("EPOCHS = 20", "EPOCHS = 1"), ("EPOCHS = 10", "EPOCHS = 1"),
                        ("super().__init__(self)", "super().__init__()"),
                        ("self.gru.get_initial_state(x)", "self.gru.get_initial_state(tf.shape(x)[0])")],
    "text_classification_rnn": [("epochs=10,", "epochs=2,")],  # 1280 stand-in reviews
    "word_embeddings": [("epochs=15,", "epochs=3,"), (
        "dataset_dir = os.path.join(os.path.dirname(dataset), 'aclImdb')",
        "shutil.rmtree('aclImdb', ignore_errors=True)\nos.rename(os.path.join(dataset, 'aclImdb'), 'aclImdb')\n"
        "dataset_dir = os.path.join(os.path.dirname(dataset), 'aclImdb')")],
    "word2vec": [("epochs=20,", "epochs=3,")],
    "nmt_with_attention": [  # Keras 2 again: spa-eng.zip extracts into spa-eng_extracted/, get_initial_state
        ("pathlib.Path(path_to_zip).parent/'spa-eng/spa.txt'", "pathlib.Path(path_to_zip)/'spa-eng/spa.txt'"),
        ("epochs=100,", "epochs=2,"), ("steps_per_epoch = 100,", "steps_per_epoch = 10,"),
        ("validation_steps = 20,", "validation_steps = 5,"), ("steps=20,", "steps=5,"),
        ("max_length=500,", "max_length=50,"),
        ("self.rnn.get_initial_state(embedded)[0]", "self.rnn.get_initial_state(tf.shape(embedded)[0])[0]")],
    "warmstart_embedding_matrix": [("epochs=15,", "epochs=3,"), (
        'dataset_dir = os.path.join(os.path.dirname(dataset), "aclImdb")',
        'shutil.rmtree("aclImdb", ignore_errors=True)\nos.rename(os.path.join(dataset, "aclImdb"), "aclImdb")\n'
        'dataset_dir = os.path.join(os.path.dirname(dataset), "aclImdb")')],
}


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``tensorflow[.x]`` -> ``tapeflow[.x]``, ``keras[.x]`` -> ``tapeflow.keras[.x]`` (submodule or attribute)."""

    PREFIXES = {"tensorflow": "tapeflow", "keras": "tapeflow.keras"}

    def find_spec(self, fullname, path=None, target=None):
        head = fullname.split(".")[0]
        if head in self.PREFIXES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        head, _, rest = spec.name.partition(".")
        target = self.PREFIXES[head] + ("." + rest if rest else "")
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError:
            obj = importlib.import_module(self.PREFIXES[head])
            for part in rest.split("."):
                obj = getattr(obj, part)
            return obj

    def exec_module(self, module):
        pass


def _install_backend(backend: str):
    if backend == "tapeflow":
        sys.meta_path.insert(0, _AliasFinder())
    import tensorflow as tf  # noqa: F401 - real or aliased
    if backend == "tensorflow":
        import keras  # noqa: F401 - so the stand-ins patch both keras entry points
    return tf


class _Captured:
    text = ""


@contextlib.contextmanager
def _capture():
    """File descriptors 1 and 2 (so C++ writes, e.g. TF's tf.print, are caught too); sys.stdout/stderr keep
    their objects (loggers hold on to them) and write through the redirected descriptors."""
    caught = []
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        stream.flush()
        tmp = tempfile.TemporaryFile()
        saved = os.dup(fd)
        os.dup2(tmp.fileno(), fd)
        caught.append((fd, stream, tmp, saved, _Captured()))
    try:
        yield caught[0][4], caught[1][4]
    finally:
        for fd, stream, tmp, saved, box in caught:
            stream.flush()
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            box.text = tmp.read().decode("utf-8", "replace")
            tmp.close()


class _LogRecorder(logging.Handler):
    """Log records and Python warnings, kept apart from the cell's text (TF and tapeflow format them differently)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname}: {record.getMessage()}")


def _record_logs() -> _LogRecorder:
    rec = _LogRecorder()
    for name in ("tensorflow", "tapeflow", "absl", "keras", "py.warnings"):
        lg = logging.getLogger(name)
        lg.handlers = [rec]
        lg.propagate = False
    logging.captureWarnings(True)
    import warnings
    warnings.simplefilter("always")
    return rec


class CellTimeoutError(Exception):
    pass


def _on_alarm(signum, frame):
    raise CellTimeoutError("cell ran past its time limit")


def _split_last(src: str):
    tree = ast.parse(src)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not src.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)
    return tree, last


def run_notebook(path: str, backend: str, seed: int = 0, cell_timeout: int = 600) -> list[dict]:
    name = os.path.splitext(os.path.basename(path))[0]
    with open(path) as f:
        cells = ["".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    subs = SUBSTITUTIONS.get(name, [])
    used = set()
    tf = _install_backend(backend)
    sys.path.insert(0, HERE)
    import standins
    standins.install(tf)
    random.seed(seed)
    import numpy as np
    np.random.seed(seed)
    tf.random.set_seed(seed)
    logs = _record_logs()
    ns: dict = {"__name__": "__main__"}
    signal.signal(signal.SIGALRM, _on_alarm)
    results = []
    for src in cells:
        for i, (old, new) in enumerate(subs):
            if old in src:
                src = src.replace(old, new)
                used.add(i)
        code = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("!", "%")))
        if src.startswith("%%writefile "):  # nb12: IPython's cell magic writes the cell's body to the file
            head, _, body = src.partition("\n")
            name = head.split(None, 1)[1].strip()
            code = f"with open({name!r}, 'w') as _f:\n    _f.write({body!r})\nprint(\"Writing {name}\")\n"
        error = None
        logs.lines = []
        start = time.time()
        signal.alarm(cell_timeout)
        try:
            tree, last = _split_last(code)
            # As IPython: the cell's source is in linecache under its own name, so inspect.getsource (and so
            # AutoGraph, in TF and tapeflow alike) can read the functions the cell defines.
            fname = f"<cell-{len(results)}>"
            linecache.cache[fname] = (len(code), None, code.splitlines(True), fname)
            with _capture() as (out, err):
                # dont_inherit: the cells must not get this file's `from __future__ import annotations` (as in
                # IPython, their annotations are evaluated; tf.ExtensionType rejects string annotations)
                exec(compile(tree, fname, "exec", dont_inherit=True), ns)
                if last is not None:
                    value = eval(compile(last, fname, "eval", dont_inherit=True), ns)
                    if value is not None:
                        print(repr(value))
        except BaseException as e:  # noqa: BLE001 - a notebook cell may raise anything, KeyboardInterrupt aside
            if isinstance(e, KeyboardInterrupt):
                raise
            tb = traceback.extract_tb(e.__traceback__)
            error = {"type": type(e).__name__, "message": str(e)[:2000],
                     "where": [f"{fr.filename}:{fr.lineno}" for fr in tb[-4:]]}
        finally:
            signal.alarm(0)
        results.append({"src": src, "stdout": out.text, "stderr": err.text[-4000:], "error": error,
                        "logs": logs.lines[-50:], "seconds": round(time.time() - start, 3)})
    unused = [subs[i][0] for i in range(len(subs)) if i not in used]
    if unused:
        results.append({"src": "# substitutions not applied", "stdout": "", "stderr": repr(unused), "error": None,
                        "seconds": 0, "meta": True})
    return results


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebook")
    p.add_argument("--backend", choices=("tensorflow", "tapeflow"), required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cell-timeout", type=int, default=600)
    p.add_argument("--workdir", default=None, help="directory the cells run in (files they write land there)")
    a = p.parse_args(argv)
    nb, out = os.path.abspath(a.notebook), os.path.abspath(a.out)
    if a.workdir:
        os.makedirs(a.workdir, exist_ok=True)
        os.chdir(a.workdir)
    results = run_notebook(nb, a.backend, a.seed, a.cell_timeout)
    with open(out, "w") as f:
        json.dump({"notebook": nb, "backend": a.backend, "seed": a.seed, "cells": results}, f, indent=1)


if __name__ == "__main__":
    main()
