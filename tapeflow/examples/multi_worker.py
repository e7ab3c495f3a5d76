"""Data-parallel training on several processes, written as TF's multi-worker tutorials write it.

    mpirun -n 2 python -m tapeflow.examples.multi_worker [--out DIR] [--epochs N]

(one process: ``python -m tapeflow.examples.multi_worker``.) Trains an MLP on the bundled digits with
Keras ``fit`` under ``MultiWorkerMirroredStrategy``, then continues with a custom ``strategy.run`` loop;
a checkpoint is written after every epoch, and a restarted job resumes from the last one. With
``import tensorflow as tf`` instead of the line below, the same program runs on TensorFlow.
"""

from __future__ import annotations

import argparse
import os

import tapeflow as tf
from tapeflow.datasets import load_digits_split


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="out/multi_worker")
    ap.add_argument("--epochs", type=int, default=4)
    args = ap.parse_args()

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    task_id = strategy.cluster_resolver.task_id or 0
    (x_train, y_train), (x_test, y_test) = load_digits_split()
    x_train, x_test = x_train.reshape(-1, 64), x_test.reshape(-1, 64)
    global_batch = 64

    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.Input((64,)),
                tf.keras.layers.Dense(128, activation="relu"),
                tf.keras.layers.Dense(10),
            ]
        )
        model.compile(
            optimizer=tf.keras.optimizers.Adam(1e-3),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
    epoch = tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer, epoch=epoch)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(args.out, "ckpt"), max_to_keep=2)
    if manager.restore_or_initialize():
        if task_id == 0:
            print(f"resumed from {manager.latest_checkpoint} (epoch {int(epoch.numpy())})")

    # 1. Keras fit: batch_size is the global batch, split over the processes.
    while int(epoch.numpy()) < args.epochs:
        model.fit(
            x_train,
            y_train,
            batch_size=global_batch,
            epochs=int(epoch.numpy()) + 1,
            initial_epoch=int(epoch.numpy()),
            verbose=2 if task_id == 0 else 0,
        )
        epoch.assign_add(1)
        manager.save()

    # 2. A custom loop: strategy.run, compute_average_loss, strategy.reduce.
    dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(global_batch)
    dist_dataset = strategy.experimental_distribute_dataset(dataset)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def train_step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            loss = tf.nn.compute_average_loss(loss_object(labels, logits), global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def distributed_train_step(inputs):
        per_replica_losses = strategy.run(train_step, args=(inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    total, batches = 0.0, 0
    for batch in dist_dataset:
        total += float(distributed_train_step(batch))
        batches += 1
    loss, accuracy = model.evaluate(x_test, y_test, batch_size=global_batch, verbose=0)
    if task_id == 0:
        print(
            f"custom loop epoch: loss {total / batches:.4f}; test loss {loss:.4f}, accuracy {accuracy:.4f} "
            f"on {strategy.num_replicas_in_sync} process(es)"
        )


if __name__ == "__main__":
    main()
