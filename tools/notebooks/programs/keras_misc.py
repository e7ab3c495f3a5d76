"""
# Keras odds and ends: schedulers, PyDataset, train_on_batch, Normalization, freezing, nested models, Lambda
"""
import math

import numpy as np
import keras
import tensorflow as tf

rng = np.random.RandomState(5)
x = rng.normal(size=(200, 4)).astype("float32")
y = (x @ np.array([[1.0], [-1.0], [0.5], [2.0]], "float32") + 0.3).astype("float32")
norm = keras.layers.Normalization()
norm.adapt(x)
print(np.round(norm.mean.numpy(), 4), np.round(norm.variance.numpy(), 4))
print(np.round(norm(x[:2]).numpy(), 4))
inv = keras.layers.Normalization(mean=2.0, variance=4.0, invert=True)
print(inv(tf.constant([[0.0], [1.0]])).numpy().tolist())
"""
A model with a scheduler, fit with initial_epoch and steps_per_epoch.
"""
model = keras.Sequential([keras.Input((4,)), norm,
                          keras.layers.Dense(8, activation="relu", kernel_initializer="he_normal", name="h"),
                          keras.layers.Dense(1, kernel_initializer="zeros", name="out")], name="reg")
keras.utils.set_random_seed(3)
model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="mse", metrics=["mae"])
lrs = []
sched = keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * math.exp(-0.5) if epoch > 0 else lr)
lr_log = keras.callbacks.LambdaCallback(
    on_epoch_begin=lambda e, logs: lrs.append(round(float(model.optimizer.learning_rate), 6)))
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(20).repeat()
h = model.fit(ds, epochs=5, initial_epoch=2, steps_per_epoch=5, callbacks=[sched, lr_log], verbose=0)
print(h.epoch, lrs, [round(v, 6) for v in h.history["learning_rate"]])
print(int(model.optimizer.iterations))
"""
PyDataset and train_on_batch / test_on_batch / predict_on_batch.
"""
class Batches(keras.utils.PyDataset):
    def __init__(self, x, y, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y, self.batch_size = x, y, batch_size

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __getitem__(self, idx):
        lo = idx * self.batch_size
        return self.x[lo:lo + self.batch_size], self.y[lo:lo + self.batch_size]


seq = Batches(x, y, 64)
print(len(seq), seq[3][0].shape)
h2 = model.fit(seq, epochs=2, verbose=0)
print(len(h2.history["loss"]))
print(type(model.train_on_batch(x[:10], y[:10])).__name__)
r = model.train_on_batch(x[:10], y[:10], return_dict=True)
print(sorted(r))
print(type(model.test_on_batch(x[:10], y[:10])).__name__, model.predict_on_batch(x[:3]).shape)
"""
Freezing, nested models, get_layer, summaries.
"""
base = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, name="b1"), keras.layers.Dense(3, name="b2")],
                        name="base")
base.trainable = False
inp = keras.Input((4,))
out = keras.layers.Dense(1, name="head")(base(inp, training=False))
full = keras.Model(inp, out, name="full")
full.summary(expand_nested=True)
print(len(full.trainable_weights), len(full.non_trainable_weights), full.get_layer("base").get_layer("b2").units)
base.trainable = True
for layer in base.layers[:1]:
    layer.trainable = False
print(len(full.trainable_weights), [l.trainable for l in base.layers])
full.compile("adam", "mse")
print(full.layers[1].name, [l.name for l in full.layers])
print([w.path for w in full.weights])
"""
Lambda layers and keras.ops.
"""
lam = keras.layers.Lambda(lambda t: keras.ops.square(t) + 1.0, name="sq")
print(lam(tf.constant([1.0, 2.0])).numpy())
m2 = keras.Sequential([keras.Input((3,)), keras.layers.Lambda(lambda t: t * 2),
                       keras.layers.Dense(1, kernel_initializer="ones")])
print(m2.predict(np.ones((2, 3)), verbose=0).tolist())
print(keras.ops.softmax(keras.ops.array([1.0, 2.0, 3.0])).numpy().round(4))
print(keras.ops.one_hot(keras.ops.array([0, 2]), 3).numpy().tolist())
print(keras.ops.top_k(keras.ops.array([3.0, 1.0, 2.0]), k=2))
print(keras.ops.convert_to_numpy(keras.ops.where(keras.ops.array([True, False]), 1, 0)))
print(keras.ops.shape(keras.ops.zeros((2, 3))), keras.backend.backend(), keras.config.floatx())
print(keras.utils.to_categorical([0, 2, 1], num_classes=3).tolist())
print(keras.utils.normalize(np.array([[3.0, 4.0]])).tolist())
print(keras.utils.pad_sequences([[1, 2, 3], [4]], maxlen=4).tolist(),
      keras.utils.pad_sequences([[1, 2, 3], [4]], padding="post", truncating="post", maxlen=2).tolist())
