"""Callbacks and saving weights, on generated data: ReduceLROnPlateau, TerminateOnNaN,
EarlyStopping(restore_best_weights), ModelCheckpoint(save_weights_only, save_best_only),
LambdaCallback, History; save_weights/load_weights round trips."""
import os
import tempfile

import numpy as np

from _common import hist, r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    x = np.linspace(-1, 1, 48, dtype="float32").reshape(16, 3)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], "float32")) ** 2
    xv, yv = x[::3] * 0.9, y[::3]

    def make(lr=0.05):
        m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(6, activation="tanh"),
                                 tf.keras.layers.Dense(1)])
        m.set_weights([(np.sin(np.arange(w.size) * 0.7 + i) * 0.5).reshape(w.shape).astype("float32")
                       for i, w in enumerate(m.get_weights())])
        m.compile(optimizer=tf.keras.optimizers.SGD(lr), loss="mse", metrics=["mae"])
        return m

    m = make(0.3)
    cb = tf.keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1, min_lr=0.05, cooldown=1,
                                              min_delta=0.01)
    h = m.fit(x, y, validation_data=(xv, yv), epochs=8, batch_size=8, shuffle=False, verbose=0, callbacks=[cb])
    out["reduce_lr"] = hist(h)
    out["reduce_lr_final"] = r(m.optimizer.learning_rate)

    m = make(1e6)
    h = m.fit(x, y, epochs=3, batch_size=4, shuffle=False, verbose=0,
              callbacks=[tf.keras.callbacks.TerminateOnNaN()])
    out["terminate_on_nan_epochs"] = len(h.history["loss"])
    out["terminate_on_nan_last_finite"] = bool(np.isfinite(h.history["loss"][-1]))

    m = make(0.2)
    es = tf.keras.callbacks.EarlyStopping(monitor="val_mae", patience=2, restore_best_weights=True, mode="min")
    h = m.fit(x, y, validation_data=(xv, yv), epochs=30, batch_size=4, shuffle=False, verbose=0, callbacks=[es])
    out["early_stopping"] = [len(h.history["loss"]), es.stopped_epoch, es.best_epoch, round(float(es.best), 5)]
    out["early_stopping_restored_val"] = r(m.evaluate(xv, yv, verbose=0))

    tmp = tempfile.mkdtemp()
    seen = []
    m = make(0.1)
    ck = tf.keras.callbacks.ModelCheckpoint(os.path.join(tmp, "best.weights.h5"), monitor="val_loss",
                                            save_best_only=True, save_weights_only=True)
    lam = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(round(logs["val_loss"], 5)))
    h = m.fit(x, y, validation_data=(xv, yv), epochs=4, batch_size=8, shuffle=False, verbose=0, callbacks=[ck, lam])
    out["lambda_seen"] = seen
    out["checkpoint_best"] = ck.best if ck.best is None else round(float(ck.best), 5)
    m2 = make()
    m2.load_weights(os.path.join(tmp, "best.weights.h5"))
    best_epoch = int(np.argmin(h.history["val_loss"]))
    out["loaded_best_val"] = [best_epoch, r(m2.evaluate(xv, yv, verbose=0))]

    # save_weights / load_weights round trip
    m.save_weights(os.path.join(tmp, "final.weights.h5"))
    m3 = make()
    m3.load_weights(os.path.join(tmp, "final.weights.h5"))
    out["roundtrip_equal"] = all(np.array_equal(a, b) for a, b in zip(m.get_weights(), m3.get_weights()))
    out["roundtrip_pred"] = r(m3.predict(x[:3], verbose=0))
    return out
