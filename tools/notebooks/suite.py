"""Run the TF docs notebooks under TensorFlow (seeds 0 and 1) and tapeflow, then print the per-notebook table.

    python tools/notebooks/suite.py run --backend tapeflow --python .venv/bin/python [--docs DIR] [--out OUT] [NAME ...]
    python tools/notebooks/suite.py run --backend tensorflow --python /path/to/tf/python --seed 1 ...
    python tools/notebooks/suite.py table [--out OUT] [-v]

``--docs`` is a checkout of github.com/tensorflow/docs, or its bare git directory (read with ``git show``);
names starting ``text:`` (``text:tutorials/word2vec``) are github.com/tensorflow/text's ``docs/`` notebooks, read from
``--text-docs`` the same way; names starting ``prog:`` (``prog:custom_loop``) are the small programs in ``programs/``
written in the style of TF tutorials (``\"\"\"`` blocks split them into cells, as ``kerasio.py``).
Each notebook runs in its own process and scratch directory; results go to OUT/NAME.{tf,tf1,tp}.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOKS = [
    "guide/autodiff", "guide/advanced_autodiff", "guide/function", "guide/intro_to_graphs",
    "guide/intro_to_modules", "guide/variable", "guide/tensor", "guide/basic_training_loops",
    "guide/core/distribution", "guide/core/logistic_regression_core", "guide/core/matrix_core",
    "guide/core/mlp_core", "guide/core/optimizers_core", "guide/core/quickstart_core",
    "tutorials/keras/classification", "tutorials/keras/regression", "tutorials/keras/overfit_and_underfit",
    "tutorials/keras/save_and_load", "tutorials/customization/basics", "tutorials/customization/custom_layers",
    "tutorials/customization/custom_training_walkthrough", "tutorials/generative/dcgan", "tutorials/generative/cvae",
    "tutorials/generative/autoencoder", "guide/mixed_precision", "tutorials/distribute/keras",
    "tutorials/distribute/custom_training", "tutorials/keras/text_classification",
    "tutorials/structured_data/preprocessing_layers", "tutorials/load_data/text",
    # tried as unseen programs (2026-12-02): the checkpoint and slicing guides, the beginner quickstart
    "guide/checkpoint", "guide/tensor_slicing", "tutorials/quickstart/beginner",
    "tutorials/images/cnn",  # img11: CIFAR-10 convnet (stand-in data)
    "tutorials/images/classification",  # img11: flower_photos, image_dataset_from_directory, augmentation layers
    "tutorials/images/data_augmentation",  # img11: tf_flowers via tfds, Keras preprocessing layers, tf.image ops
    "tutorials/generative/pix2pix",  # img11: facades U-Net GAN, 10 training steps
    "tutorials/structured_data/imbalanced_data",  # img11: credit-card fraud (stand-in CSV), class weights, resampling
    "tutorials/structured_data/time_series",  # img11: Jena climate (stand-in CSV), windows, Dense/Conv/LSTM models
    "guide/extension_type",  # ext12: tf.ExtensionType, TypeSpec, dispatch decorators
    "guide/effective_tf2",  # ext12: TF2 idioms (tf.function, Keras fit, tf.data)
    "guide/tf_numpy_type_promotion",  # ext12: tnp numpy behavior and TF's type-promotion lattice
    "tutorials/quickstart/advanced",  # lead 2026-12-03: subclassed model, GradientTape loop, metrics
    "tutorials/load_data/numpy",  # lead 2026-12-03: from_tensor_slices of an .npz
    "tutorials/load_data/pandas_dataframe",  # lead 2026-12-03: DataFrames into Keras and tf.data
    "guide/basics",  # lead 2026-12-03: TF basics tour
    "tutorials/audio/simple_audio",  # sig11: mini_speech_commands (stand-in WAVs), tf.signal.stft, tf.audio
    "tutorials/images/transfer_learning",  # nb11: MobileNetV2 (stand-in weight file by real Keras), cats vs dogs
    "tutorials/load_data/images",  # nb11: flower_photos and tf_flowers again, tf.data from files, a small CNN
    "tutorials/distribute/save_and_load",  # nb11: MirroredStrategy, .keras and SavedModel round trips
    "tutorials/generative/adversarial_fgsm",  # lead 2026-12-03: MobileNetV2 with its top, input gradients (FGSM)
    "tutorials/images/segmentation",  # lead 2026-12-03: MobileNetV2 U-Net on stand-in pets, per-pixel weights
    "tutorials/generative/style_transfer",  # lead 2026-12-03: VGG19 features, gradients w.r.t. an image variable
    "tutorials/load_data/csv",  # lead 2026-12-03: pandas, make_csv_dataset (gzip), CsvDataset, decode_csv, fonts
    "tutorials/distribute/input",  # dist16c: distributed input (experimental_distribute_dataset, ..._from_function)
    "tutorials/distribute/multi_worker_with_keras",  # dist16c: MultiWorkerMirroredStrategy, Keras fit, one process
    "tutorials/distribute/multi_worker_with_ctl",  # dist16c: MultiWorkerMirroredStrategy, custom loop, one process
    "guide/distributed_training",  # dist16c: the tf.distribute guide's strategies, Keras and a custom loop
    "text:guide/unicode",  # text11: tf.strings unicode ops (tensorflow/text docs)
    "text:tutorials/text_generation",  # text11: GRU char model, StringLookup, OneStep generator (stand-in text)
    "text:tutorials/text_classification_rnn",  # text11: Bidirectional LSTM, masking (stand-in tfds imdb_reviews)
    "text:tutorials/word_embeddings",  # text11: Embedding, TextVectorization, projector files
    "text:tutorials/word2vec",  # text11: skipgrams, log_uniform_candidate_sampler, negative sampling
    "text:tutorials/warmstart_embedding_matrix",  # text11: keras.utils.warmstart_embedding_matrix
    "text:tutorials/nmt_with_attention",  # text11: GRU seq2seq + attention, TextVectorization(ragged), export
    "tutorials/generative/deepdream",  # nb11 2026-12-04: InceptionV3 (stand-in weights) gradient ascent, tf.roll
    "tutorials/reinforcement_learning/actor_critic",  # nb11: stand-in gym CartPole, numpy_function, TensorArray
    "guide/gpu",  # nb11: device listing and placement on a CPU-only machine
    "guide/graph_optimization",  # nb11: tf.config.optimizer options, debug_stripper, check_numerics
    # nb11 2026-12-07: programs of our own in the style of TF tutorials and StackOverflow answers (programs/)
    "prog:custom_loop",  # tf.data + tf.function train/val steps, Keras metrics, CheckpointManager, restore
    "prog:functional_fit",  # multi-input/-output functional model, callbacks, class/sample weights, .keras
    "prog:custom_parts",  # custom Layer/Loss/Metric, subclassed Model, custom train_step, registered objects
    "prog:data_pipes",  # tf.data: padded_batch, cache, prefetch, windows, group_by_window, buckets, text lines
    "prog:text_rnn",  # TextVectorization modes, masking Embedding, Bidirectional LSTM/GRU, LR schedule, clipnorm
    "prog:errors_and_shapes",  # common StackOverflow errors' exception types, retracing, static/dynamic shapes
    "prog:graph_features",  # AutoGraph loops, TensorArray, custom_gradient, tf.Module SavedModel, sliced assign
    "prog:keras_misc",  # Normalization.adapt, LR scheduler, PyDataset, train_on_batch, freezing, keras.ops, utils
    "prog:tensor_printing",  # reprs of many dtypes/sizes, tf.print, strings, lookup tables, math edge cases, seeds
    "prog:transformer_block",  # MultiHeadAttention masks, custom masking layers, weights files, stateful RNN
    "prog:image_pipeline",  # PNGs on disk, image_dataset_from_directory, tf.image ops, augmentation, a small CNN
    "tutorials/generative/cyclegan",  # nb11: pix2pix stand-in models (instance norm), 2 train steps of 4 U-Nets
    "tutorials/structured_data/feature_columns",  # nb11: petfinder columns (DenseFeatures is gone in TF too)
    "tutorials/interpretability/integrated_gradients",  # nb11: hub.KerasLayer stand-in (MobileNetV2), input grads
]
# results are named for the notebook's file; where two notebooks share one, the later gets a longer name
NAMES = {"tutorials/images/classification": "image_classification", "guide/basics": "guide_basics",
         "guide/migrate/saved_model": "migrate_saved_model",  # nb12
         "tutorials/distribute/save_and_load": "distribute_save_and_load"}
TYPES = [  # tensor types, tf.data and the tf.function surface
    "guide/ragged_tensor", "guide/sparse_tensor", "guide/function", "guide/intro_to_graphs",
    "guide/random_numbers", "guide/data", "guide/migrate/tf1_vs_tf2",
    "guide/tf_numpy",  # nb12: tf.experimental.numpy
    "guide/data_performance",  # nb12: prefetch, interleave, parallel map, cache
    "guide/saved_model",  # nb12: tf.saved_model save/load, signatures
    "tutorials/load_data/tfrecord",  # nb12: tf.train.Example, TFRecordWriter, TFRecordDataset
    "guide/migrate/migrating_checkpoints",  # nb12: TF1 -> TF2 checkpoints (Estimator parts raise)
    "guide/migrate/metrics_optimizers",  # nb12: Keras metrics and optimizers in custom loops
    "guide/migrate/early_stopping",  # nb12: EarlyStopping callback and a custom loop's equivalent
    "guide/migrate/tensorboard",  # nb12: tf.summary, TensorBoard callback
    "guide/migrate/saved_model",  # nb12: SavedModel from TF1 and TF2 (as migrate_saved_model)
    "guide/migrate/migration_debugging",  # nb12: validating a TF2 migration numerically
    # nb11 2026-12-04: the remaining migration guides (their TF 1 Estimator parts raise in TF 2.21 too)
    "guide/migrate/fault_tolerance",  # BackupAndRestore, CheckpointManager loop
    "guide/migrate/checkpoint_saver", "guide/migrate/logging_stop_hook", "guide/migrate/sessionrunhook_callback",
    "guide/migrate/evaluator", "guide/migrate/mirrored_strategy", "guide/migrate/multi_worker_cpu_gpu_training",
    "guide/migrate/validate_correctness", "guide/migrate/model_mapping",
    "guide/migrate/migrating_feature_columns",  # nb11 2026-12-07: CategoryEncoding(sparse=True), column descriptions
]
SETS = {"models": NOTEBOOKS, "types": TYPES, "all": NOTEBOOKS + [n for n in TYPES if n not in NOTEBOOKS]}


def _name(rel: str) -> str:
    return NAMES.get(rel, os.path.basename(rel.removeprefix("prog:")))


def _notebook_file(docs: str, rel: str, dest: str, text_docs: str = "") -> str:
    name = _name(rel)
    path = os.path.join(dest, "src", name + ".ipynb")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    site = "site/en"
    if rel.startswith("prog:"):  # nb11: a program of programs/ (Python with \"\"\" blocks), split by kerasio.py
        sys.path.insert(0, HERE)
        import json

        import kerasio
        with open(os.path.join(HERE, "programs", rel[len("prog:"):] + ".py"), encoding="utf-8") as f:
            cells = kerasio.split_cells(f.read())
        with open(path, "w", encoding="utf-8") as f:
            json.dump(kerasio.to_notebook(cells), f, indent=1)
        return path
    if rel.startswith("text:"):  # text11: tensorflow/text keeps its notebooks under docs/
        docs, site, rel = text_docs, "docs", rel[len("text:"):]
    checkout = os.path.join(docs, site, rel + ".ipynb")
    if os.path.exists(checkout):
        if name == os.path.basename(rel):
            return checkout
        with open(checkout, "rb") as f:  # run.py knows a notebook by its file's name
            text = f.read()
    else:
        text = subprocess.run(["git", f"--git-dir={docs}", "show", f"HEAD:{site}/{rel}.ipynb"], check=True,
                              capture_output=True).stdout
    with open(path, "wb") as f:
        f.write(text)
    return path


def _suffix(backend: str, seed: int) -> str:
    return ("tf" if backend == "tensorflow" else "tp") + (str(seed) if seed else "")


def run(a) -> None:
    env = dict(os.environ)
    if a.backend == "tapeflow":
        root = a.tapeflow_root or os.path.dirname(os.path.dirname(HERE))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    known = SETS["all"]
    for rel in a.names or SETS[a.set]:
        rel = next((n for n in known if n.endswith("/" + rel) or _name(n) == rel), rel)
        name = _name(rel)
        nb = _notebook_file(a.docs, rel, a.out, a.text_docs)
        out = os.path.join(a.out, f"{name}.{_suffix(a.backend, a.seed)}.json")
        work = os.path.join(a.out, "work", _suffix(a.backend, a.seed), name)
        cmd = [a.python, os.path.join(HERE, "run.py"), nb, "--backend", a.backend, "--out", out, "--seed",
               str(a.seed), "--workdir", work, "--cell-timeout", str(a.cell_timeout)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr[-500:]}"
        print(f"{name} [{a.backend}, seed {a.seed}] {status}", flush=True)


def table(a) -> None:
    sys.path.insert(0, HERE)
    import compare
    total = {"cells": 0, "match": 0, "random": 0, "tf_failing": 0}
    print("| notebook | cells | match | random cells | fail in TF | TF runs |\n|---|---|---|---|---|---|")
    for rel in SETS[a.set]:
        name = _name(rel)
        tf0, tf1, tp = (os.path.join(a.out, f"{name}.{s}.json") for s in ("tf", "tf1", "tp"))
        refs = [p for p in (tf0, tf1) if os.path.exists(p)]  # seed 0 is the reference when it exists
        if not refs or not os.path.exists(tp):
            print(f"| {name} | (not run) | | | | |")
            continue
        other = compare.load(refs[1]) if len(refs) > 1 else None
        rows = compare.compare(compare.load(refs[0]), compare.load(tp), other)
        s = compare.summary(rows)
        for k in total:
            total[k] += s[k]
        print(f"| {name} | {s['cells']} | {s['match']} | {s['random']} | {s['tf_failing']} | {len(refs)} |")
        if a.verbose:
            with open(os.path.join(a.out, f"{name}.diff.txt"), "w") as f:
                for r in rows:
                    if not r["match"]:
                        f.write(f"--- cell {r['cell']} ({'random' if r['random'] else 'deterministic'})\n"
                                f"{r['src'][:1000]}\n=== TF:\n{r['tf'][:2000]}\n"
                                f"=== tapeflow:\n{r['tapeflow'][:2000]}\n\n")
    print(f"| **total** | {total['cells']} | {total['match']} | {total['random']} | {total['tf_failing']} | |")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--backend", choices=("tensorflow", "tapeflow"), required=True)
    r.add_argument("--python", default=sys.executable)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--docs", default="/work/.mirror/tensorflow+docs/repo")
    r.add_argument("--text-docs", default="/work/.mirror/tensorflow+text/repo",
                   help="github.com/tensorflow/text checkout or bare git dir, for the text: notebooks")
    r.add_argument("--cell-timeout", type=int, default=600)
    r.add_argument("--tapeflow-root", help="checkout whose tapeflow runs (default: this one)")
    r.add_argument("names", nargs="*")
    t = sub.add_parser("table")
    t.add_argument("-v", "--verbose", action="store_true", help="also write OUT/NAME.diff.txt per notebook")
    for q in (r, t):
        q.add_argument("--out", default="/tmp/tapeflow_notebooks")
        q.add_argument("--set", choices=sorted(SETS), default="models",
                       help="notebook list when no NAME is given (models: Keras/autodiff guides, types: tensor types)")
    a = p.parse_args(argv)
    run(a) if a.cmd == "run" else table(a)


if __name__ == "__main__":
    main()
