"""Keras 3's EpochIterator over arrays with ``steps_per_epoch``, and the ``on_batch_begin``/``on_batch_end``
aliases of the training batch hooks (TF's fault-tolerance guide interrupts training with them). Values pinned
from TF 2.21 / Keras 3.15."""

import json
import os
import warnings

import numpy as np
import pytest

import tapeflow as tf


def _data():
    rng = np.random.default_rng(2)
    return rng.random((90, 6)).astype(np.float32), rng.integers(0, 4, 90)


def _model():
    tf.keras.utils.set_random_seed(11)
    m = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(4)])
    m.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


class _Batches(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_batch_end(self, batch, logs=None):
        self.seen.append((batch, round(float(logs["loss"]), 5)))


def test_steps_per_epoch_goes_on_through_the_arrays_across_epochs():
    x, y = _data()
    m, cb = _model(), _Batches()
    with pytest.warns(UserWarning, match="Your input ran out of data"):
        m.fit(x, y, epochs=3, steps_per_epoch=4, batch_size=16, shuffle=False, verbose=0, callbacks=[cb])
    # 6 batches of 90 samples: epoch 2 takes batches 5 and 6, then runs out; epoch 3 starts a new pass (TF's)
    assert [b for b, _ in cb.seen] == [0, 1, 2, 3, 0, 1, 0, 1, 2, 3]
    assert [loss for _, loss in cb.seen[3:6]] == [1.52442, 1.36134, 1.44039]
    assert cb.seen[6][1] == 1.8139


class _InterruptAtStep(tf.keras.callbacks.Callback):  # the guide's, counting with Keras's older hook names
    def __init__(self, interrupting_step=7):
        super().__init__()
        self.total_step_count, self.interrupting_step = 0, interrupting_step

    def on_batch_begin(self, batch, logs=None):
        self.total_step_count += 1

    def on_batch_end(self, batch, logs=None):
        if self.total_step_count == self.interrupting_step:
            raise RuntimeError("Interruption")


def test_on_batch_hooks_are_called_for_training_batches_and_backup_resumes_mid_fit(tmp_path):
    x, y = _data()
    backup = tf.keras.callbacks.BackupAndRestore(backup_dir=str(tmp_path), save_freq=3)
    with warnings.catch_warnings(), pytest.raises(RuntimeError, match="Interruption"):
        warnings.simplefilter("ignore")
        _model().fit(x, y, epochs=4, steps_per_epoch=4, batch_size=16, verbose=0,
                     callbacks=[backup, _InterruptAtStep()])
    with open(os.path.join(tmp_path, "training_metadata.json")) as f:
        assert json.load(f) == {"epoch": 1, "batch": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = _model().fit(x, y, epochs=4, steps_per_epoch=4, batch_size=16, verbose=0, callbacks=[backup])
    assert history.epoch == [1, 2, 3]
