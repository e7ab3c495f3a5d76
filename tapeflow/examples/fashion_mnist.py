"""The main job: Fashion-MNIST (``tf.keras.datasets.fashion_mnist``) trained twice with the same small CNN —
once with a custom ``GradientTape`` loop (tape, gradient, clip, apply_gradients) and once with Keras ``fit`` —
then a checkpoint and a picture of both runs' curves in ``--out`` (default ``./out``). It prints the sanity
check ``d(x·x)/dx at 3`` first. When the data cannot be had (no cache, no Debian package, offline) it says so in
one line and trains on the bundled 8x8 digits instead.

Run: ``python -m tapeflow.examples.fashion_mnist`` (``--epochs``, ``--batch-size``, ``--out DIR``, ``--no-plot``,
``--blas-threads N``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from typing import Any

import numpy as np

import tapeflow as tf
from tapeflow.examples.digits import _limit_blas_threads, load_digits_split, plot_curves

keras = tf.keras


def sanity_check() -> float:
    """The seeds' first program: d(x·x)/dx at x = 3 is 6."""
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = float(tape.gradient(y, x))
    print(f"sanity check: d(x*x)/dx at x=3 is {g:g} (expected 6)")
    return g


def load_data() -> tuple:
    """``(name, x_train, y_train, x_test, y_test)``: Fashion-MNIST as float32 NHWC in [0, 1], else the digits."""
    try:
        (x_tr, y_tr), (x_te, y_te) = keras.datasets.fashion_mnist.load_data()
    except (OSError, ValueError) as e:
        print(f"Fashion-MNIST is not available ({str(e).split('. Get it')[0]}); training on the bundled digits "
              "instead (apt-get install dataset-fashion-mnist, or go online, to get it).")
        x_tr, y_tr, x_te, y_te = load_digits_split()
        return "digits", x_tr, y_tr, x_te, y_te
    prep = lambda a: (a[..., None].astype(np.float32) / np.float32(255.0))  # noqa: E731
    return "fashion-mnist", prep(x_tr), y_tr.astype(np.int32), prep(x_te), y_te.astype(np.int32)


def build_model(input_shape: tuple, seed: int = 0) -> keras.Model:
    """Conv(32, 3x3) -> max-pool -> Dense(128) -> Dense(10 logits)."""
    init = keras.initializers.GlorotUniform
    return keras.Sequential([
        keras.Input(input_shape),
        keras.layers.Conv2D(32, 3, activation="relu", kernel_initializer=init(seed)),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu", kernel_initializer=init(seed + 1)),
        keras.layers.Dense(10, kernel_initializer=init(seed + 2)),
    ])


def train_custom_loop(model: keras.Model, x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
                      epochs: int, batch_size: int, lr: float, seed: int = 0) -> dict:
    """The loop ``fit`` hides, with a Keras progress bar per epoch."""
    optimizer = keras.optimizers.Adam(lr)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc, mean_loss = keras.metrics.SparseCategoricalAccuracy(), keras.metrics.Mean()

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            logits = model(xb, training=True)
            loss = loss_fn(yb, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 5.0)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, logits

    history: dict = {"loss": [], "accuracy": [], "val_loss": [], "val_accuracy": []}
    rng = np.random.default_rng(seed)
    n = len(x)
    steps = -(-n // batch_size)
    for epoch in range(epochs):
        print(f"Epoch {epoch + 1}/{epochs}")
        order = rng.permutation(n)
        mean_loss.reset_state()
        acc.reset_state()
        bar = keras.utils.Progbar(steps, stateless_metrics=())
        for i in range(steps):
            idx = order[i * batch_size:(i + 1) * batch_size]
            xb, yb = tf.constant(x[idx]), tf.constant(y[idx])
            loss, logits = train_step(xb, yb)
            mean_loss.update_state(loss, sample_weight=len(idx))
            acc.update_state(yb, logits)
            if i + 1 < steps:
                bar.update(i + 1, [("accuracy", float(acc.result())), ("loss", float(mean_loss.result()))])
        val_loss, val_acc = evaluate(model, x_test, y_test)
        logs = {"accuracy": float(acc.result()), "loss": float(mean_loss.result()), "val_accuracy": val_acc,
                "val_loss": val_loss}
        bar.update(steps, list(logs.items()))
        for k, v in logs.items():
            history[k].append(v)
    return history


def evaluate(model: keras.Model, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(loss, accuracy) on ``x, y``."""
    logits = model.predict(x, batch_size=500, verbose=0)
    loss = float(keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, logits))
    return loss, float(np.mean(np.argmax(logits, -1) == y))


def main(argv: list | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=None, help="epochs per run (default: 5 fashion, 15 digits)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--out", default="out", help="output folder for the checkpoint and the plot")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1: this model's matrices are small; 0 keeps NumPy's default)")
    args = parser.parse_args(argv)
    limiter = _limit_blas_threads(args.blas_threads) if args.blas_threads > 0 else None
    try:
        return _run(args)
    finally:
        if limiter is not None:
            limiter.restore_original_limits()


def _run(args: Any) -> dict:
    t_start = time.perf_counter()
    sanity_check()
    keras.utils.set_random_seed(0)
    name, x_tr, y_tr, x_te, y_te = load_data()
    epochs = args.epochs or (5 if name == "fashion-mnist" else 15)
    print(f"{name}: {len(x_tr)} train / {len(x_te)} test images of shape {x_tr.shape[1:]}")
    os.makedirs(args.out, exist_ok=True)

    print("\n== custom training loop (GradientTape, gradient, clip_by_global_norm, apply_gradients) ==")
    loop_model = build_model(x_tr.shape[1:])
    t0 = time.perf_counter()
    loop_hist = train_custom_loop(loop_model, x_tr, y_tr, x_te, y_te, epochs, args.batch_size, args.lr)
    loop_time, loop_acc = time.perf_counter() - t0, loop_hist["val_accuracy"][-1]

    print("\n== Keras compile/fit ==")
    fit_model = build_model(x_tr.shape[1:])
    fit_model.summary()
    fit_model.compile(optimizer=keras.optimizers.Adam(args.lr, clipnorm=None),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    # TensorBoard event files for `tensorboard --logdir out/logs` (when the tensorboard package is there)
    callbacks = []
    if importlib.util.find_spec("tensorboard") is not None:
        callbacks.append(keras.callbacks.TensorBoard(log_dir=os.path.join(args.out, "logs"), histogram_freq=1))
    t0 = time.perf_counter()
    fit_hist = fit_model.fit(x_tr, y_tr, batch_size=args.batch_size, epochs=epochs, validation_data=(x_te, y_te),
                             verbose=1, callbacks=callbacks).history
    fit_time = time.perf_counter() - t0
    _, fit_acc = fit_model.evaluate(x_te, y_te, batch_size=500, verbose=0)

    ckpt = tf.train.Checkpoint(model=fit_model, optimizer=fit_model.optimizer)
    ckpt_path = ckpt.save(os.path.join(args.out, f"{name}-cnn"))
    plot = None if args.no_plot else plot_curves({"custom loop": loop_hist, "fit": fit_hist},
                                                 os.path.join(args.out, f"{name}-curves.png"))
    print(f"\ncustom loop: test accuracy {loop_acc:.4f} ({loop_time:.0f}s for {epochs} epochs)")
    print(f"fit:         test accuracy {fit_acc:.4f} ({fit_time:.0f}s for {epochs} epochs)")
    print(f"checkpoint:  {ckpt_path}")
    if plot:
        print(f"plot:        {plot}")
    if callbacks:
        print(f"tensorboard: tensorboard --logdir {os.path.join(args.out, 'logs')}")
    print(f"total time:  {time.perf_counter() - t_start:.0f}s")
    return {"data": name, "loop_accuracy": loop_acc, "fit_accuracy": float(fit_acc), "checkpoint": ckpt_path,
            "plot": plot, "loop_time": loop_time, "fit_time": fit_time, "loop_history": loop_hist,
            "fit_history": fit_hist}


if __name__ == "__main__":
    main()
