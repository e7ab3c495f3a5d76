"""Writing a training loop from scratch / custom training walkthrough, on generated data:
tf.data pipelines (map, batch, repeat, take, zip), a GradientTape loop with tf.function,
optimizers with learning-rate schedules and clipping, fit on a Dataset with steps_per_epoch."""
import numpy as np

from _common import hist, r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    rng = np.random.RandomState(3)
    features = rng.rand(48, 4).astype("float32") * 4
    labels = (features[:, 2] > 2).astype("int32") + (features[:, 3] > 3).astype("int32")

    def pack(f, lab):
        return (f - 2.0) / 2.0, lab

    ds = tf.data.Dataset.from_tensor_slices((features, labels)).map(pack).batch(12)
    out["cardinality"] = int(ds.cardinality())
    first_f, first_l = next(iter(ds))
    out["first_batch"] = [r(first_f[:2]), r(first_l)]
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),
        tf.keras.layers.Dense(10, activation=tf.nn.relu),
        tf.keras.layers.Dense(3),
    ])
    model.set_weights([(np.sin(np.arange(w.size) * 0.29 + 2 * i) * 0.4).reshape(w.shape).astype("float32")
                       for i, w in enumerate(model.get_weights())])
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss(model, x, y, training):
        return loss_object(y_true=y, y_pred=model(x, training=training))

    def grad(model, inputs, targets):
        with tf.GradientTape() as tape:
            loss_value = loss(model, inputs, targets, training=True)
        return loss_value, tape.gradient(loss_value, model.trainable_variables)

    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True)
    lv, grads = grad(model, first_f, first_l)
    out["step0_loss"] = r(lv)
    out["grad_norms"] = [r(tf.norm(g)) for g in grads]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    out["step1_loss"] = r(loss(model, first_f, first_l, training=True))
    epochs = []
    for epoch in range(4):
        epoch_loss_avg = tf.keras.metrics.Mean()
        epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
        for x, y in ds:
            loss_value, grads = grad(model, x, y)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            epoch_loss_avg.update_state(loss_value)
            epoch_accuracy.update_state(y, model(x, training=True))
        epochs.append([float(epoch_loss_avg.result()), float(epoch_accuracy.result())])
    out["epochs"] = r(epochs)
    out["iterations"] = int(optimizer.iterations)

    # schedules
    sched = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=3, decay_rate=0.5, staircase=True)
    out["exp_decay"] = [r(sched(s)) for s in range(7)]
    out["exp_decay_smooth"] = r(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 3, 0.5)(4))
    pw = tf.keras.optimizers.schedules.PiecewiseConstantDecay([2, 4], [1.0, 0.5, 0.1])
    out["piecewise"] = [r(pw(s)) for s in range(6)]
    cos = tf.keras.optimizers.schedules.CosineDecay(0.2, decay_steps=10, alpha=0.1)
    out["cosine"] = [r(cos(s)) for s in (0, 3, 10, 12)]
    inv = tf.keras.optimizers.schedules.InverseTimeDecay(0.5, decay_steps=2, decay_rate=1.0)
    out["inverse_time"] = [r(inv(s)) for s in range(4)]
    poly = tf.keras.optimizers.schedules.PolynomialDecay(0.1, decay_steps=4, end_learning_rate=0.01, power=2.0)
    out["polynomial"] = [r(poly(s)) for s in range(6)]
    out["sched_config"] = sched.get_config()

    # a schedule driving Adam inside a tf.function loop, with global clipnorm
    v = tf.Variable([1.0, -2.0, 3.0])
    opt = tf.keras.optimizers.Adam(learning_rate=sched, global_clipnorm=1.0)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            lo = tf.reduce_sum(v ** 2)
        opt.apply_gradients([(tape.gradient(lo, v), v)])
        return lo

    out["adam_sched_losses"] = [r(step()) for _ in range(5)]
    out["adam_sched_v"] = r(v)
    out["adam_lr_now"] = r(opt.learning_rate)
    w = tf.Variable([1.0, -2.0, 3.0])
    opt2 = tf.keras.optimizers.SGD(0.1, clipvalue=0.5)
    opt2.apply_gradients([(tf.constant([2.0, -0.1, 0.3]), w)])
    out["sgd_clipvalue"] = r(w)
    w = tf.Variable([1.0, -2.0, 3.0])
    tf.keras.optimizers.SGD(0.1, clipnorm=1.0).apply_gradients([(tf.constant([3.0, 4.0, 0.0]), w)])
    out["sgd_clipnorm"] = r(w)

    # fit on a repeated dataset with steps_per_epoch
    model2 = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3)])
    model2.set_weights([np.full((4, 3), 0.1, "float32"), np.zeros(3, "float32")])
    model2.compile(optimizer=tf.keras.optimizers.Adagrad(0.1), loss=loss_object, metrics=["accuracy"])
    h = model2.fit(ds.repeat(), steps_per_epoch=3, epochs=3, verbose=0)
    out["fit_repeat"] = hist(h)
    out["fit_take"] = hist(model2.fit(ds.take(2), epochs=2, verbose=0))
    out["eval_ds"] = r(model2.evaluate(ds, verbose=0))
    return out
