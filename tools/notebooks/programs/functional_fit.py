"""
# Keras functional model: several inputs and outputs, callbacks, class_weight-like weighting, save and load
"""
import csv

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

rng = np.random.RandomState(7)
n = 600
title = rng.randint(0, 50, size=(n, 10))
body = rng.randint(0, 50, size=(n, 20))
tags = rng.randint(0, 2, size=(n, 5)).astype("float32")
priority = ((title[:, 0] + tags[:, 0] * 30) > 40).astype("float32").reshape(-1, 1)
dept = (body[:, 0] % 3).astype("int64")
print(title.shape, body.shape, tags.shape, priority.mean().round(3), np.bincount(dept))
"""
The model.
"""
tf.keras.utils.set_random_seed(1)
title_in = keras.Input(shape=(None,), name="title")
body_in = keras.Input(shape=(None,), name="body")
tags_in = keras.Input(shape=(5,), name="tags")
emb = layers.Embedding(50, 8)
t = layers.GlobalAveragePooling1D()(emb(title_in))
b = layers.GlobalAveragePooling1D()(emb(body_in))
x = layers.concatenate([t, b, tags_in])
x = layers.Dense(16, activation="relu")(x)
x = layers.Dropout(0.2)(x)
priority_out = layers.Dense(1, activation="sigmoid", name="priority")(x)
dept_out = layers.Dense(3, name="department")(x)
model = keras.Model(inputs=[title_in, body_in, tags_in], outputs={"priority": priority_out, "department": dept_out})
model.summary()
print([i.name for i in model.inputs], sorted(model.output_names) if hasattr(model, "output_names") else None)
print(model.count_params())
"""
Compile with per-output losses, loss weights and metrics.
"""
model.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss={"priority": keras.losses.BinaryCrossentropy(),
          "department": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
    loss_weights={"priority": 1.0, "department": 0.2},
    metrics={"priority": ["accuracy", keras.metrics.AUC(name="auc")], "department": ["accuracy"]},
)
"""
Callbacks.
"""
class Recorder(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seen = []

    def on_epoch_end(self, epoch, logs=None):
        self.seen.append(sorted(logs))

    def on_train_end(self, logs=None):
        print("train end", len(self.seen))


rec = Recorder()
callbacks = [
    keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True),
    keras.callbacks.ModelCheckpoint("best.keras", monitor="val_loss", save_best_only=True),
    keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1),
    keras.callbacks.CSVLogger("log.csv"),
    rec,
]
history = model.fit(
    {"title": title, "body": body, "tags": tags},
    {"priority": priority, "department": dept},
    epochs=4, batch_size=32, validation_split=0.2, callbacks=callbacks, verbose=0,
)
print(sorted(history.history))
print(history.params)
print(rec.seen[0])
print(len(history.epoch))
"""
The CSV log.
"""
with open("log.csv") as f:
    rows = list(csv.reader(f))
print(rows[0])
print(len(rows))
"""
Evaluate, predict.
"""
res = model.evaluate({"title": title[:64], "body": body[:64], "tags": tags[:64]},
                     {"priority": priority[:64], "department": dept[:64]}, verbose=0, return_dict=True)
print(sorted(res))
pred = model.predict({"title": title[:5], "body": body[:5], "tags": tags[:5]}, verbose=0)
print(type(pred).__name__, sorted(pred), pred["priority"].shape, pred["department"].shape, pred["priority"].dtype)
"""
Save and load (.keras), compare predictions.
"""
model.save("model.keras")
loaded = keras.models.load_model("model.keras")
p2 = loaded.predict({"title": title[:5], "body": body[:5], "tags": tags[:5]}, verbose=0)
print(np.allclose(pred["priority"], p2["priority"], atol=1e-6),
      np.allclose(pred["department"], p2["department"], atol=1e-6))
best = keras.models.load_model("best.keras")
print(type(best).__name__, len(best.layers))
print([l.__class__.__name__ for l in loaded.layers])
"""
A single-output model with class_weight and sample_weight, deterministic weights.
"""
clf = keras.Sequential([keras.Input((5,)), layers.Dense(4, activation="tanh", kernel_initializer="ones"),
                        layers.Dense(1, activation="sigmoid", kernel_initializer="zeros")])
clf.compile(optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy", metrics=["accuracy"])
h = clf.fit(tags, priority, epochs=3, batch_size=100, class_weight={0: 1.0, 1: 3.0}, shuffle=False, verbose=0)
print({k: np.round(v, 4).tolist() for k, v in h.history.items()})
sw = np.where(priority[:, 0] > 0, 2.0, 0.5)
h = clf.fit(tags, priority, epochs=2, batch_size=100, sample_weight=sw, shuffle=False, verbose=0)
print({k: np.round(v, 4).tolist() for k, v in h.history.items()})
print(np.round(clf.evaluate(tags, priority, verbose=0), 4))
h = clf.fit(tags, priority, epochs=2, batch_size=200, shuffle=False, verbose=2,
            validation_data=(tags[:100], priority[:100]))
"""
get_config / from_config round trip and clone.
"""
cfg = clf.get_config()
print(sorted(cfg), cfg["name"] if "name" in cfg else None)
clone = keras.models.clone_model(clf)
print(len(clone.weights), np.allclose(clone.layers[0].kernel.numpy(), 1.0))
clone.set_weights(clf.get_weights())
print(np.allclose(clone.predict(tags[:3], verbose=0), clf.predict(tags[:3], verbose=0)))
