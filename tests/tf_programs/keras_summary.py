"""model.summary() text: a functional CNN with an operator node and a Sequential model whose layer
name wraps in the first column (before and after training: optimizer params), multi-input graphs
with the "Connected to" column; compared line by line with Keras 3's table."""
import numpy as np


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
    s.compile("adam", "mse")
    s.fit(np.ones((4, 5), "float32"), np.ones((4, 1), "float32"), verbose=0)
    lines = []
    s.summary(print_fn=lambda t, **kw: lines.append(t))
    out["sequential_trained"] = "".join(lines).split("\n")

    # a multi-input, multi-output graph: Keras adds a "Connected to" column
    layers = tf.keras.layers
    title_input = tf.keras.Input(shape=(None,), name="title", dtype="int32")
    body_input = tf.keras.Input(shape=(None,), name="body", dtype="int32")
    tags_input = tf.keras.Input(shape=(6,), name="tags")
    shared_embedding = layers.Embedding(20, 4, name="emb")
    title_features = layers.GlobalAveragePooling1D()(shared_embedding(title_input))
    body_features = layers.GlobalAveragePooling1D()(shared_embedding(body_input))
    x = layers.concatenate([title_features, body_features, tags_input])
    x = x / 2.0
    priority_pred = layers.Dense(1, name="priority")(x)
    department_pred = layers.Dense(3, name="department")(x)
    model = tf.keras.Model(inputs=[title_input, body_input, tags_input], outputs=[priority_pred, department_pred])
    lines = []
    model.summary(print_fn=lambda t, **kw: lines.append(t))
    out["multi_io"] = "".join(lines).split("\n")
    enc_in = tf.keras.Input(shape=(4,))
    encoder = tf.keras.Model(enc_in, layers.Dense(3, activation="tanh")(enc_in), name="encoder")
    a_in = tf.keras.Input(shape=(4,), name="a_in")
    b_in = tf.keras.Input(shape=(4,), name="b_in")
    siamese = tf.keras.Model([a_in, b_in], layers.Dense(1)(layers.Add()([encoder(a_in), encoder(b_in)])))
    lines = []
    siamese.summary(print_fn=lambda t, **kw: lines.append(t))
    out["siamese"] = "".join(lines).split("\n")
    return out
