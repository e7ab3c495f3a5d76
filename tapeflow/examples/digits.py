"""The main job: a small CNN on the bundled 8x8 digits, trained twice — with
a custom ``GradientTape`` loop and with Keras ``fit`` — then a checkpoint and
a plot of the loss/accuracy curves. Both runs start from the same seeded
weights and draw the same shuffled batches, so their curves coincide: ``fit``
is exactly the loop written out here.

Run: ``python -m tapeflow.examples.digits`` (options: ``--epochs``,
``--batch-size``, ``--out DIR``, ``--fashion-mnist DIR`` for Fashion-MNIST
IDX files, ``--eager`` to skip tf.function, ``--no-plot``).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

import tapeflow as tf

keras = tf.keras


def load_digits_split(seed: int = 0, test_fraction: float = 0.2) -> tuple:
    """The bundled digits (1,797 images 8x8, tapeflow.datasets) as float32
    NHWC in [0, 1], split (stratified, fixed seed) into train and test."""
    from tapeflow import datasets

    (x_tr, y_tr), (x_te, y_te) = datasets.load_digits_split(test_size=test_fraction, seed=seed)
    return _prep(x_tr), np.asarray(y_tr, np.int32), _prep(x_te), np.asarray(y_te, np.int32)


def _prep(images: Any) -> np.ndarray:
    x = np.asarray(images, np.float32)
    if x.ndim == 2:  # flat 64-pixel rows
        side = int(round(np.sqrt(x.shape[1])))
        x = x.reshape(-1, side, side)
    if x.ndim == 3:
        x = x[..., None]
    return x / x.max() if x.max() > 1.0 else x


def load_fashion_mnist(folder: str) -> tuple:
    """Fashion-MNIST from the standard IDX files in ``folder`` (gzipped or not)."""
    from tapeflow import datasets

    (x_tr, y_tr), (x_te, y_te) = datasets.load_fashion_mnist(folder)
    return _prep(x_tr), np.asarray(y_tr, np.int32), _prep(x_te), np.asarray(y_te, np.int32)


def build_cnn(input_shape: tuple, seed: int = 0) -> keras.Model:
    """Conv(32) -> pool -> Conv(64) -> pool -> Dense(128) -> Dense(10 logits), 3x3 same-padding convs."""
    init = keras.initializers.GlorotUniform
    return keras.Sequential([
        keras.Input(input_shape),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu", kernel_initializer=init(seed)),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu", kernel_initializer=init(seed + 1)),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu", kernel_initializer=init(seed + 2)),
        keras.layers.Dense(10, kernel_initializer=init(seed + 3)),
    ])


def train_custom_loop(model: keras.Model, x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
                      epochs: int, batch_size: int, lr: float, eager: bool) -> dict:
    """The loop fit hides: forward under a tape, gradients, apply_gradients."""
    optimizer = keras.optimizers.Adam(lr)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = keras.metrics.SparseCategoricalAccuracy()
    mean_loss = keras.metrics.Mean()

    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            logits = model(xb, training=True)
            loss = loss_fn(yb, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, logits

    step = train_step if eager else tf.function(train_step)
    history: dict = {"loss": [], "accuracy": [], "val_accuracy": []}
    n = len(x)
    steps = -(-n // batch_size)
    for epoch in range(epochs):
        order = fit_order(n)
        mean_loss.reset_state()
        acc.reset_state()
        bar = _Progress(steps, f"loop epoch {epoch + 1}/{epochs}")
        for i in range(steps):
            idx = order[i * batch_size:(i + 1) * batch_size]
            xb, yb = tf.constant(x[idx]), tf.constant(y[idx])
            loss, logits = step(xb, yb)
            mean_loss.update_state(loss, sample_weight=len(idx))
            acc.update_state(yb, logits)
            bar.update(f"loss: {float(mean_loss.result()):.4f} - accuracy: {float(acc.result()):.4f}")
        val_acc = evaluate_accuracy(model, x_test, y_test)
        bar.close(f"loss: {float(mean_loss.result()):.4f} - accuracy: {float(acc.result()):.4f} - "
                  f"val_accuracy: {val_acc:.4f}")
        history["loss"].append(float(mean_loss.result()))
        history["accuracy"].append(float(acc.result()))
        history["val_accuracy"].append(val_acc)
    return history


def fit_order(n: int) -> np.ndarray:
    """The order ``fit`` takes ``n`` array samples in each epoch, as Keras 3 draws it: ``tf.random.shuffle`` of
    ``range(n)`` in a tf.data map function that every epoch's iterator runs afresh (so, with a global seed,
    every epoch takes the same order)."""
    perm = tf.data.Dataset.range(1).map(lambda _: tf.random.shuffle(tf.range(n, dtype=tf.int64)))
    return next(iter(perm)).numpy()


def evaluate_accuracy(model: keras.Model, x: np.ndarray, y: np.ndarray) -> float:
    logits = model.predict(x, batch_size=256, verbose=0)
    return float(np.mean(np.argmax(logits, -1) == y))


class _Progress:
    """Keras's progress bar (tf.keras.utils.Progbar, on stdout) under a title line."""

    def __init__(self, total: int, desc: str) -> None:
        print(desc)
        self.n, self.bar = 0, keras.utils.Progbar(total, stateless_metrics=())

    def update(self, text: str) -> None:
        self.n += 1
        self.bar.update(self.n, _parse(text), finalize=False)

    def close(self, text: str) -> None:
        self.bar.update(self.n, _parse(text), finalize=True)


def _parse(text: str) -> list:
    return [(k, float(v)) for k, v in (part.split(": ") for part in text.split(" - "))]


def plot_curves(histories: dict, path: str) -> str | None:
    """Loss and accuracy per epoch for each run, as one PNG (matplotlib, Agg)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install matplotlib)")
        return None
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    # One colour per run (train solid, test dashed). On the digits the two runs coincide (same seed, same
    # batches), so the first is drawn wide and faint beneath the second.
    styles = [dict(linewidth=5, alpha=0.35), dict(linewidth=1.5, marker="o", markersize=3)]
    for i, ((name, h), style) in enumerate(zip(histories.items(), styles * len(histories))):
        style = dict(style, color=f"C{i}")
        epochs = np.arange(1, len(h["loss"]) + 1)
        ax_loss.plot(epochs, h["loss"], label=f"{name} train", **style)
        if "val_loss" in h:
            ax_loss.plot(epochs, h["val_loss"], linestyle="--", label=f"{name} test", **style)
        ax_acc.plot(epochs, h["accuracy"], label=f"{name} train", **style)
        ax_acc.plot(epochs, h["val_accuracy"], linestyle="--", label=f"{name} test", **style)
    ax_loss.set(title="loss", xlabel="epoch", ylabel="cross-entropy loss")
    ax_acc.set(title="accuracy", xlabel="epoch", ylabel="accuracy")
    from matplotlib.ticker import MaxNLocator

    for ax in (ax_loss, ax_acc):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole epochs
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _limit_blas_threads(n: int) -> Any:
    """Limits BLAS threads (undone by the returned object's ``restore_original_limits``)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None  # optional: without threadpoolctl NumPy keeps its default
    return threadpool_limits(n, user_api="blas")


def main(argv: list | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=None, help="epochs per run (default: 15 digits, 3 fashion)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--out", default="out", help="output folder for the checkpoint and the plot")
    parser.add_argument("--fashion-mnist", metavar="DIR", help="train on Fashion-MNIST IDX files in DIR instead")
    parser.add_argument("--eager", action="store_true", help="run the train steps eagerly (no tf.function)")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1: this model's matrices are small, and extra BLAS threads "
                             "only spin, badly so on a busy machine; 0 keeps NumPy's default)")
    args = parser.parse_args(argv)
    limiter = _limit_blas_threads(args.blas_threads) if args.blas_threads > 0 else None
    try:
        return _run(args)
    finally:
        if limiter is not None:
            limiter.restore_original_limits()


def _run(args: argparse.Namespace) -> dict:
    keras.utils.set_random_seed(0)
    t_start = time.perf_counter()
    if args.fashion_mnist:
        x_tr, y_tr, x_te, y_te = load_fashion_mnist(args.fashion_mnist)
        name, epochs = "fashion-mnist", args.epochs or 3
    else:
        x_tr, y_tr, x_te, y_te = load_digits_split()
        name, epochs = "digits", args.epochs or 15
    print(f"{name}: {len(x_tr)} train / {len(x_te)} test images of shape {x_tr.shape[1:]}")
    os.makedirs(args.out, exist_ok=True)

    print("\n== custom training loop (GradientTape + apply_gradients) ==")
    loop_model = build_cnn(x_tr.shape[1:])
    t0 = time.perf_counter()
    loop_hist = train_custom_loop(loop_model, x_tr, y_tr, x_te, y_te, epochs, args.batch_size, args.lr, args.eager)
    loop_time = time.perf_counter() - t0
    loop_acc = evaluate_accuracy(loop_model, x_te, y_te)

    print("\n== Keras compile/fit ==")
    fit_model = build_cnn(x_tr.shape[1:])
    fit_model.summary()
    fit_model.compile(optimizer=keras.optimizers.Adam(args.lr),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"],
                      run_eagerly=args.eager)
    t0 = time.perf_counter()
    fit_hist = fit_model.fit(x_tr, y_tr, batch_size=args.batch_size, epochs=epochs, validation_data=(x_te, y_te),
                             verbose=1).history
    fit_time = time.perf_counter() - t0
    _, fit_acc = fit_model.evaluate(x_te, y_te, verbose=0)

    ckpt = tf.train.Checkpoint(model=fit_model, optimizer=fit_model.optimizer)
    ckpt_path = ckpt.save(os.path.join(args.out, f"{name}-cnn"))
    plot = None if args.no_plot else plot_curves({"custom loop": loop_hist, "fit": fit_hist},
                                                 os.path.join(args.out, f"{name}-curves.png"))

    print(f"\ncustom loop: test accuracy {loop_acc:.2%} ({loop_time:.1f}s for {epochs} epochs)")
    print(f"fit:         test accuracy {fit_acc:.2%} ({fit_time:.1f}s for {epochs} epochs)")
    print(f"checkpoint:  {ckpt_path}")
    if plot:
        print(f"plot:        {plot}")
    print(f"total time:  {time.perf_counter() - t_start:.1f}s")
    return {"loop_accuracy": loop_acc, "fit_accuracy": fit_acc, "checkpoint": ckpt_path, "plot": plot,
            "loop_time": loop_time, "fit_time": fit_time}


if __name__ == "__main__":
    main()
