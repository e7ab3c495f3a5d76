"""Writing a training loop from scratch (Keras 3 guide style), on generated data: functional model,
optimizer.apply / apply_gradients, model.losses from regularizers in the loss, train/val metrics
under tf.function, reset_state per epoch, a GAN-like two-optimizer step, gradient accumulation."""
import numpy as np

from _common import r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    inputs = tf.keras.Input(shape=(6,), name="digits")
    x1 = tf.keras.layers.Dense(8, activation="relu", kernel_regularizer=tf.keras.regularizers.l2(1e-2))(inputs)
    x2 = tf.keras.layers.Dense(8, activation="relu")(x1)
    outputs = tf.keras.layers.Dense(4, name="predictions")(x2)
    model = tf.keras.Model(inputs=inputs, outputs=outputs)
    model.set_weights([(np.sin(np.arange(w.size) * 0.77 + i) * 0.4).reshape(w.shape).astype("float32")
                       for i, w in enumerate(model.get_weights())])
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-2)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = tf.keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = tf.keras.metrics.SparseCategoricalAccuracy()
    rng = np.random.RandomState(11)
    xs = rng.randn(48, 6).astype("float32")
    ys = (np.abs(xs[:, 0]) * 2).astype("int32").clip(0, 3)
    train_dataset = tf.data.Dataset.from_tensor_slices((xs[:40], ys[:40])).batch(8)
    val_dataset = tf.data.Dataset.from_tensor_slices((xs[40:], ys[40:])).batch(4)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
            loss_value += sum(model.losses)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        train_acc_metric.update_state(y, logits)
        return loss_value

    @tf.function
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)

    log = []
    for epoch in range(3):
        losses = []
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
            losses.append(float(train_step(x_batch_train, y_batch_train)))
        train_acc = float(train_acc_metric.result())
        train_acc_metric.reset_state()
        for x_batch_val, y_batch_val in val_dataset:
            test_step(x_batch_val, y_batch_val)
        val_acc = float(val_acc_metric.result())
        val_acc_metric.reset_state()
        log.append(losses + [train_acc, val_acc])
    out["log"] = r(log)
    out["reg_losses"] = [r(v) for v in model.losses]
    out["traces"] = train_step.experimental_get_tracing_count()
    out["iterations"] = int(optimizer.iterations)

    # two models / two optimizers (GAN-like alternating step)
    gen = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(3, activation="tanh")])
    disc = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    for mdl, s in ((gen, 0.5), (disc, 0.3)):
        mdl.set_weights([(np.cos(np.arange(w.size) + i) * s).reshape(w.shape).astype("float32")
                         for i, w in enumerate(mdl.get_weights())])
    g_opt, d_opt = tf.keras.optimizers.Adam(0.05, beta_1=0.5), tf.keras.optimizers.RMSprop(0.01)
    bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
    real = tf.constant(np.linspace(-1, 1, 12, dtype="float32").reshape(4, 3))
    noise = tf.constant(np.linspace(0, 1, 8, dtype="float32").reshape(4, 2))

    @tf.function
    def gan_step(real, noise):
        with tf.GradientTape() as tape:
            fake = gen(noise)
            d_loss = bce(tf.ones((4, 1)), disc(real)) + bce(tf.zeros((4, 1)), disc(fake))
        d_opt.apply_gradients(zip(tape.gradient(d_loss, disc.trainable_weights), disc.trainable_weights))
        with tf.GradientTape() as tape:
            g_loss = bce(tf.ones((4, 1)), disc(gen(noise)))
        g_opt.apply_gradients(zip(tape.gradient(g_loss, gen.trainable_weights), gen.trainable_weights))
        return d_loss, g_loss

    out["gan"] = [[r(a), r(b)] for a, b in (gan_step(real, noise) for _ in range(4))]

    # gradient accumulation over micro-batches
    acc_model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(2)])
    acc_model.set_weights([np.full((6, 2), 0.1, "float32"), np.zeros(2, "float32")])
    acc_opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    accum = [tf.Variable(tf.zeros_like(v), trainable=False) for v in acc_model.trainable_variables]
    for i in range(4):
        xb, yb = xs[i * 4:(i + 1) * 4], ys[i * 4:(i + 1) * 4] % 2
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, acc_model(xb)) / 2.0
        for a, g in zip(accum, tape.gradient(loss, acc_model.trainable_variables)):
            a.assign_add(g)
        if i % 2 == 1:
            acc_opt.apply_gradients(zip([a.read_value() for a in accum], acc_model.trainable_variables))
            for a in accum:
                a.assign(tf.zeros_like(a))
    out["accumulated"] = [r(w) for w in acc_model.get_weights()]
    return out
