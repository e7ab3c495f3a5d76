"""TF2 quickstart for experts, on generated data: a subclassed Model, tf.data batches, a custom
GradientTape loop with tf.function train/test steps and keras.metrics."""
import numpy as np

from _common import r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    rng = np.random.RandomState(1)
    x = rng.rand(40, 6, 6, 1).astype("float32")
    y = (x.mean(axis=(1, 2, 3)) * 10).astype("int64") % 4
    train_ds = tf.data.Dataset.from_tensor_slices((x[:32], y[:32])).batch(8)
    test_ds = tf.data.Dataset.from_tensor_slices((x[32:], y[32:])).batch(4)
    out["element_spec"] = repr(train_ds.element_spec)

    class MyModel(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = tf.keras.layers.Conv2D(4, 3, activation="relu",
                                                kernel_initializer=tf.keras.initializers.Constant(0.05))
            self.flatten = tf.keras.layers.Flatten()
            self.d1 = tf.keras.layers.Dense(8, activation="relu",
                                            kernel_initializer=tf.keras.initializers.RandomNormal(seed=3))
            self.d2 = tf.keras.layers.Dense(4)

        def call(self, x):
            x = self.conv1(x)
            x = self.flatten(x)
            x = self.d1(x)
            return self.d2(x)

    model = MyModel()
    model(x[:1])
    model.set_weights([(np.cos(np.arange(w.size) * 0.61 + i) * 0.2).reshape(w.shape).astype("float32")
                       for i, w in enumerate(model.get_weights())])
    out["weight_shapes"] = [list(w.shape) for w in model.trainable_variables]
    out["n_trainable"] = len(model.trainable_variables)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    test_loss = tf.keras.metrics.Mean(name="test_loss")
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)

    @tf.function
    def test_step(images, labels):
        predictions = model(images, training=False)
        t_loss = loss_object(labels, predictions)
        test_loss(t_loss)
        test_accuracy(labels, predictions)

    log = []
    for epoch in range(3):
        for m in (train_loss, train_accuracy, test_loss, test_accuracy):
            m.reset_state()
        for images, labels in train_ds:
            train_step(images, labels)
        for images, labels in test_ds:
            test_step(images, labels)
        log.append([epoch + 1, float(train_loss.result()), float(train_accuracy.result()) * 100,
                    float(test_loss.result()), float(test_accuracy.result()) * 100])
    out["log"] = r(log)
    out["optimizer_iterations"] = int(optimizer.iterations.numpy())
    out["lr"] = r(optimizer.learning_rate)
    out["metric_names"] = [train_loss.name, train_accuracy.name]
    out["metric_result_dtype"] = str(train_loss.result().dtype)
    out["final_pred"] = r(model(x[32:34]))
    out["n_variables_optimizer"] = len(optimizer.variables)
    return out
