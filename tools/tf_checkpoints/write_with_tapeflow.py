"""By hand: writes checkpoints with tapeflow for tools/tf_checkpoints/restore_with_tf.py to restore with real TF.

python tools/tf_checkpoints/write_with_tapeflow.py /tmp/tf_interop
/opt/tfvenv/bin/python tools/tf_checkpoints/restore_with_tf.py /tmp/tf_interop
"""

import sys
import shutil
import numpy as np
import os
import tapeflow as tf

D = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tf_interop"
os.makedirs(D, exist_ok=True)
for d in os.listdir(D):
    if os.path.isdir(os.path.join(D, d)):
        shutil.rmtree(os.path.join(D, d))


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.5, -2.0, 3.25], [4.0, 5.5, -6.0]], name="w")
        self.b = tf.Variable([0.5, -0.5, 0.0], name="bias")
        self.steps = tf.Variable(np.int64(7))
        self.flags = tf.Variable([True, False, True])
        self.small = tf.Variable(np.array([-3, 0, 9], np.int8))
        self.half = tf.Variable(np.array([0.5, 1.25], np.float16))
        self.wide = tf.Variable(np.array([1e-300, 2.5], np.float64))
        self.z = tf.Variable(np.array([1 + 2j, -3j], np.complex64))
        self.words = tf.Variable(["hello", "", "checkpoint ✓"])
        self.layers = [tf.Variable(np.arange(4, dtype=np.int32)), tf.Variable(2.0)]
        self.table = {"alpha": tf.Variable(np.ones((2, 2), np.float32)), "scope/b.c": tf.Variable(-1.0)}


net = Net()
net.w.assign(net.w * 3)
print(tf.train.Checkpoint(net=net).save(f"{D}/tapeflow_module/ckpt"))
model = tf.keras.Sequential(
    [tf.keras.Input((3,)), tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(2)]
)
model.set_weights(
    [np.linspace(-1, 1, w.size, dtype=np.float32).reshape(w.shape) + i for i, w in enumerate(model.get_weights())]
)
opt = tf.keras.optimizers.Adam(0.01)
x = np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(model(x, training=True) ** 2)
grads = tape.gradient(loss, model.trainable_variables)
opt.apply_gradients(zip(grads, model.trainable_variables))
print(tf.train.Checkpoint(model=model, optimizer=opt).save(f"{D}/tapeflow_keras/ckpt"))
np.save(f"{D}/tapeflow_keras/predict.npy", model(x, training=False).numpy())
ck = tf.train.Checkpoint(
    vs=[tf.Variable(1.0), tf.Variable([2.0, 3.0])],
    d={"b": tf.Variable(np.int32(4)), "a": [tf.Variable(5.0)]},
    step=tf.Variable(np.int64(3)),
)
print(ck.write(f"{D}/tapeflow_containers/ckpt-1"))
m = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), f"{D}/tapeflow_manager", max_to_keep=2)
for _ in range(3):
    m.save()
print(sorted(os.listdir(f"{D}/tapeflow_manager")))
print(
    tf.train.Checkpoint(vs=[tf.Variable(float(i)) for i in range(6000)]).write(f"{D}/tapeflow_many/ckpt-1"),
    os.path.getsize(f"{D}/tapeflow_many/ckpt-1.index"),
)
