"""tf.Module basics, Introduction to Variables, and save/restore with tf.train.Checkpoint and
CheckpointManager, on generated data (files under a temporary directory)."""
import os
import tempfile

import numpy as np

from _common import exc, r


def _key(name):
    return None if name == "_CHECKPOINTABLE_OBJECT_GRAPH" else name.replace("/.ATTRIBUTES/VARIABLE_VALUE", "")


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    # -- variables
    my_variable = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    bool_variable = tf.Variable([False, False, False, True])
    complex_variable = tf.Variable([5 + 4j, 6 + 1j])
    out["var_reprs"] = [repr(my_variable), repr(bool_variable)]
    out["var_dtypes"] = [str(v.dtype) for v in (my_variable, bool_variable, complex_variable)]
    out["var_shape"] = str(my_variable.shape)
    out["var_numpy"] = r(my_variable.numpy())
    out["argmax"] = r(tf.math.argmax(my_variable))
    out["reshape_is_tensor"] = isinstance(tf.reshape(my_variable, [1, 4]), tf.Tensor)
    a = tf.Variable([2.0, 3.0])
    a.assign([1, 2])
    out["assign_int_list"] = r(a)
    out["assign_wrong_shape"] = exc(lambda: a.assign([1.0, 2.0, 3.0]))
    b = tf.Variable(a)
    a.assign([5, 6])
    out["copy_independent"] = [r(a), r(b)]
    out["assign_add"] = r(a.assign_add([2, 3]))
    out["assign_sub"] = r(a.assign_sub([7, 9]))
    c = tf.Variable(my_variable + 1, name="Mark")
    out["var_name"] = c.name
    step = tf.Variable(1, trainable=False)
    out["non_trainable"] = [step.trainable, str(step.dtype)]

    # -- tf.Module
    class Dense(tf.Module):
        def __init__(self, in_features, out_features, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(np.linspace(-1, 1, in_features * out_features, dtype="float32")
                                 .reshape(in_features, out_features), name="w")
            self.b = tf.Variable(tf.zeros([out_features]), name="b")

        def __call__(self, x):
            return tf.nn.relu(x @ self.w + self.b)

    class SequentialModule(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.dense_1 = Dense(in_features=3, out_features=3)
            self.dense_2 = Dense(in_features=3, out_features=2)

        @tf.function
        def __call__(self, x):
            return self.dense_2(self.dense_1(x))

    my_model = SequentialModule(name="the_model")
    out["module_out"] = r(my_model(tf.constant([[2.0, 2.0, 2.0]])))
    out["module_name"] = my_model.name
    out["submodules"] = sorted(type(m).__name__ for m in my_model.submodules)
    out["n_trainable"] = len(my_model.trainable_variables)
    out["variable_names"] = sorted(v.name for v in my_model.variables)

    # -- checkpoints
    tmp = tempfile.mkdtemp()
    ckpt = tf.train.Checkpoint(model=my_model)
    path = ckpt.write(os.path.join(tmp, "my_checkpoint"))
    out["write_path_suffix"] = os.path.relpath(path, tmp)
    # tapeflow stores safetensors keyed by object path: TF's keys carry "/.ATTRIBUTES/VARIABLE_VALUE"
    # and an extra "_CHECKPOINTABLE_OBJECT_GRAPH" entry; compare the object paths only.
    out["ckpt_shapes"] = {_key(n): list(s) for n, s in tf.train.list_variables(path) if _key(n)}
    out["load_variable_error"] = exc(lambda: tf.train.load_variable(path, "model/dense_1/zz"))
    out["load_variable"] = r(tf.train.load_variable(path, "model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE"))
    new_model = SequentialModule()
    tf.train.Checkpoint(model=new_model).restore(path)
    out["restored_out"] = r(new_model(tf.constant([[2.0, 2.0, 2.0]])))

    # keras model + optimizer + manager
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, name="lin")])
    model.set_weights([np.array([[0.5], [-0.5]], "float32"), np.zeros(1, "float32")])
    opt = tf.keras.optimizers.Adam(0.1)
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = tf.constant([[1.0], [2.0], [3.0]])

    def train_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=model)
    manager = tf.train.CheckpointManager(ckpt, os.path.join(tmp, "tf_ckpts"), max_to_keep=3)
    out["latest_before"] = manager.latest_checkpoint
    saved = []
    for _ in range(10):
        loss = train_step()
        ckpt.step.assign_add(1)
        if int(ckpt.step) % 2 == 0:
            saved.append([int(ckpt.step), os.path.basename(manager.save()), round(float(loss), 5)])
    out["saved"] = saved
    out["kept"] = [os.path.basename(p) for p in manager.checkpoints]
    out["latest"] = os.path.basename(manager.latest_checkpoint)
    out["latest_checkpoint_fn"] = os.path.basename(tf.train.latest_checkpoint(os.path.join(tmp, "tf_ckpts")))
    out["weights_after"] = r(model.get_weights()[0])
    ck_names = sorted(_key(n) for n, _ in tf.train.list_variables(manager.latest_checkpoint) if _key(n))
    # (Keras 3 stores a Sequential's weights under net/_functional/_operations/..., tapeflow under
    # TF Keras 2's net/layer_with_weights-0/...: compare the top-level entries)
    out["manager_ckpt_names"] = [n for n in ck_names if "/" not in n]

    model2 = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, name="lin")])
    opt2 = tf.keras.optimizers.Adam(0.1)
    ckpt2 = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt2, net=model2)
    status = ckpt2.restore(manager.latest_checkpoint)
    out["restored_step"] = int(ckpt2.step)
    out["restored_weights"] = r(model2.get_weights()[0])
    out["restored_opt_iterations"] = int(opt2.iterations)
    status.assert_existing_objects_matched()
    # continue training from the restore: same as continuing the original
    model, opt = model2, opt2
    out["loss_after_restore"] = r(train_step())
    out["restore_none"] = repr(type(tf.train.Checkpoint(step=tf.Variable(1)).restore(None))).count("Initialization")
    return out
