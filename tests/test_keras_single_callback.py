"""fit/evaluate/predict take ``callbacks=`` as one callback too (Keras 3's CallbackList flattens what it gets;
the audio tutorial passes ``callbacks=tf.keras.callbacks.EarlyStopping(...)``)."""

import numpy as np

import tapeflow as tf


def test_one_callback_not_in_a_list():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    seen = []

    class Count(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(epoch)

        def on_test_end(self, logs=None):
            seen.append("test")

    x, y = np.ones((8, 2), np.float32), np.ones((8, 1), np.float32)
    model.fit(x, y, epochs=2, verbose=0, callbacks=Count())
    model.evaluate(x, y, verbose=0, callbacks=[[Count()]])
    assert seen == [0, 1, "test"]


def test_empty_validation_dataset_gives_no_val_logs():
    # the audio tutorial's val_ds.shard(2, 1) of a one-batch dataset is empty: Keras 3.15 logs no val_* keys
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    ds = tf.data.Dataset.from_tensor_slices((np.ones((8, 2), np.float32), np.ones((8, 1), np.float32))).batch(4)
    empty = ds.shard(num_shards=3, index=2)
    history = model.fit(ds, validation_data=empty, epochs=2, verbose=0)
    assert sorted(history.history) == ["loss", "mae"]
    assert model.evaluate(empty, verbose=0) == [] and model.evaluate(empty, verbose=0, return_dict=True) == {}
