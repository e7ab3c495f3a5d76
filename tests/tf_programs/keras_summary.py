"""model.summary() text: a functional CNN with an operator node and a Sequential model whose layer
name wraps in the first column, compared line by line with Keras 3's table."""


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    i = tf.keras.Input((8, 8, 1), name="img")
    x = tf.keras.layers.Conv2D(4, 3, activation="relu")(i)
    x = tf.keras.layers.MaxPooling2D()(x)
    x = tf.keras.layers.Flatten()(x)
    x = x * 2.0
    o = tf.keras.layers.Dense(3)(x)
    m = tf.keras.Model(i, o, name="cnn")
    lines = []
    m.summary(print_fn=lambda s, **kw: lines.append(s))
    out["cnn"] = "".join(lines).split("\n")
    out["cnn_layers"] = [layer.name for layer in m.layers]
    s = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization(),
                             tf.keras.layers.Dense(1)])
    lines = []
    s.summary(print_fn=lambda t, **kw: lines.append(t))
    out["sequential"] = "".join(lines).split("\n")
    return out
