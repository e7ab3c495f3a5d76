"""summary() shows each layer's last symbolic call's output shape (Keras 3.15's format_layer_shape), pinned from
TF 2.21: an augmentation Sequential first run eagerly on one image still shows (None, ...) in the functional
model built on it (TF's transfer-learning tutorial), and a layer called twice shows its second call."""

from __future__ import annotations

import numpy as np

import tapeflow as tf

K = tf.keras


def test_summary_rows_take_the_last_nodes_shape(capsys):
    K.backend.clear_session()
    aug = K.Sequential([K.layers.RandomFlip("horizontal")])
    aug(np.zeros((1, 8, 8, 3), "float32"))
    i, j = K.Input((8, 8, 3)), K.Input((4, 4, 3))
    flat = K.layers.Flatten()
    K.Model([i, j], K.layers.Concatenate()([flat(aug(i)), flat(j)])).summary()
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("│")]
    assert rows[2].split("│")[2].strip() == "(None, 8, 8, 3)"  # sequential (Sequential)
    assert rows[6].split("│")[1:3] == [" flatten (Flatten)   ", " (None, 48)        "]
    assert aug.output_shape == (1, 8, 8, 3)  # its own build, as Keras's
