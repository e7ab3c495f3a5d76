"""
# A custom training loop: tf.data, tf.function, Keras metrics, a checkpoint manager
"""
import os
import numpy as np
import tensorflow as tf

print(tf.__version__[:1])
"""
Synthetic regression data, deterministic.
"""
rng = np.random.RandomState(42)
x = rng.normal(size=(512, 8)).astype("float32")
true_w = rng.normal(size=(8, 1)).astype("float32")
y = (x @ true_w + 0.1 * rng.normal(size=(512, 1))).astype("float32")
labels = (y[:, 0] > 0).astype("int64")
ds = tf.data.Dataset.from_tensor_slices((x, y, labels))
print(ds.element_spec)
train = ds.take(384).shuffle(384, seed=1, reshuffle_each_iteration=False).batch(32)
val = ds.skip(384).batch(64)
print(train.cardinality().numpy(), val.cardinality().numpy())
for xb, yb, lb in train.take(1):
    print(xb.shape, yb.shape, lb.dtype)
"""
A model with two heads, weights set from NumPy so both backends start equal.
"""
inputs = tf.keras.Input(shape=(8,), name="features")
h = tf.keras.layers.Dense(16, activation="relu", name="hidden")(inputs)
reg = tf.keras.layers.Dense(1, name="reg")(h)
cls = tf.keras.layers.Dense(2, name="cls")(h)
model = tf.keras.Model(inputs, [reg, cls])
w_rng = np.random.RandomState(0)
model.set_weights([w_rng.normal(scale=0.3, size=w.shape).astype("float32") for w in model.get_weights()])
print([w.shape for w in model.get_weights()])
print(len(model.trainable_variables), model.count_params())
"""
Optimizer, losses, metrics.
"""
optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
mse = tf.keras.losses.MeanSquaredError()
xent = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_loss = tf.keras.metrics.Mean(name="train_loss")
train_acc = tf.keras.metrics.SparseCategoricalAccuracy(name="train_acc")
val_mae = tf.keras.metrics.MeanAbsoluteError(name="val_mae")
val_auc = tf.keras.metrics.AUC(name="val_auc")
print(train_loss.name, train_acc.name, val_auc.num_thresholds)


@tf.function
def train_step(xb, yb, lb):
    with tf.GradientTape() as tape:
        pred, logits = model(xb, training=True)
        loss = mse(yb, pred) + 0.5 * xent(lb, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_loss.update_state(loss)
    train_acc.update_state(lb, logits)
    return loss


@tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([None, 1], tf.float32),
                              tf.TensorSpec([None], tf.int64)])
def val_step(xb, yb, lb):
    pred, logits = model(xb, training=False)
    val_mae.update_state(yb, pred)
    val_auc.update_state(tf.one_hot(lb, 2)[:, 1], tf.nn.softmax(logits)[:, 1])


"""
Checkpoints.
"""
ckpt = tf.train.Checkpoint(step=tf.Variable(0, dtype=tf.int64), optimizer=optimizer, model=model)
manager = tf.train.CheckpointManager(ckpt, "ckpts", max_to_keep=2)
print(manager.latest_checkpoint)
for epoch in range(3):
    for metric in (train_loss, train_acc, val_mae, val_auc):
        metric.reset_state()
    for xb, yb, lb in train:
        train_step(xb, yb, lb)
        ckpt.step.assign_add(1)
    for xb, yb, lb in val:
        val_step(xb, yb, lb)
    path = manager.save()
    print(f"epoch {epoch}: loss={train_loss.result():.4f} acc={train_acc.result():.4f} "
          f"val_mae={val_mae.result():.4f} val_auc={val_auc.result():.4f} step={int(ckpt.step)} "
          f"{os.path.basename(path)}")
print([os.path.basename(p) for p in manager.checkpoints])
print(train_step.experimental_get_tracing_count(), val_step.experimental_get_tracing_count())
"""
Restore into a fresh model and compare.
"""
inputs2 = tf.keras.Input(shape=(8,), name="features")
h2 = tf.keras.layers.Dense(16, activation="relu", name="hidden")(inputs2)
model2 = tf.keras.Model(inputs2, [tf.keras.layers.Dense(1, name="reg")(h2), tf.keras.layers.Dense(2, name="cls")(h2)])
ckpt2 = tf.train.Checkpoint(step=tf.Variable(0, dtype=tf.int64), model=model2)
status = ckpt2.restore(manager.latest_checkpoint)
status.expect_partial()
print(int(ckpt2.step))
p1, _ = model(x[:4])
p2, _ = model2(x[:4])
print(np.allclose(p1.numpy(), p2.numpy()))
print(np.round(p1.numpy()[:, 0], 3))
print(tf.train.list_variables(manager.latest_checkpoint)[:3])
"""
Optimizer state and iterations.
"""
print(int(optimizer.iterations), float(optimizer.learning_rate))
print(sorted({type(v).__name__ for v in optimizer.variables}) != [])
print(len(optimizer.variables))
