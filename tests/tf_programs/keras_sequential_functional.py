"""The Sequential model and the Functional API, on generated data: add/pop, lazy building,
summary, get_layer, feature extraction via layer outputs, freezing layers (transfer learning),
multiple inputs/outputs, shared layers, nested models, Concatenate/Add, Embedding."""
import numpy as np

from _common import exc, hist, r


def det(model, scale=0.25):
    model.set_weights([(np.cos(np.arange(w.size) * 0.41 + i) * scale).reshape(w.shape).astype(w.dtype)
                       for i, w in enumerate(model.get_weights())])


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    layers = tf.keras.layers
    model = tf.keras.Sequential(name="my_sequential")
    model.add(layers.Dense(2, activation="relu", name="layer1"))
    model.add(layers.Dense(3, activation="relu", name="layer2"))
    model.add(layers.Dense(4, name="layer3"))
    out["unbuilt_weights"] = len(model.weights)
    unbuilt = []
    out["unbuilt_summary_error"] = exc(lambda: model.summary(print_fn=lambda s, **kw: unbuilt.append(s)))
    out["unbuilt_summary"] = unbuilt
    y = model(tf.ones((3, 3)))
    out["built_weights"] = len(model.weights)
    out["out_shape"] = list(y.shape)
    out["layer_names"] = [layer.name for layer in model.layers]
    popped = model.pop()
    out["after_pop"] = [len(model.layers), popped.name]
    out["dup_name_error"] = exc(lambda: model.add(layers.Dense(1, name="layer1")))

    model = tf.keras.Sequential()
    model.add(tf.keras.Input(shape=(4,)))
    model.add(layers.Dense(2, activation="relu"))
    out["input_known_weights"] = len(model.weights)
    lines = []
    model.summary(print_fn=lambda s, **kw: lines.append(s))
    text = "\n".join(lines)
    out["summary_has"] = [s in text for s in ("Total params: 10", "Trainable params: 10", "Non-trainable params: 0",
                                              "(None, 2)")]

    # feature extraction with a Sequential model's layer outputs
    initial_model = tf.keras.Sequential([
        tf.keras.Input(shape=(6,)),
        layers.Dense(5, activation="relu", name="a"),
        layers.Dense(4, activation="relu", name="b"),
        layers.Dense(3, name="c"),
    ])
    det(initial_model)
    feature_extractor = tf.keras.Model(inputs=initial_model.inputs,
                                       outputs=[layer.output for layer in initial_model.layers])
    feats = feature_extractor(np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6))
    out["features"] = [r(f) for f in feats]
    fe2 = tf.keras.Model(inputs=initial_model.inputs, outputs=initial_model.get_layer(name="b").output)
    out["feature_b"] = r(fe2(np.ones((1, 6), "float32")))

    # transfer learning: freeze all but the last layer
    for layer in initial_model.layers[:-1]:
        layer.trainable = False
    out["frozen_counts"] = [len(initial_model.trainable_weights), len(initial_model.non_trainable_weights)]
    initial_model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    xs = np.linspace(-1, 1, 60, dtype="float32").reshape(10, 6)
    ys = np.stack([xs.sum(1), xs[:, 0], -xs[:, 1]], 1)
    before = [w.copy() for w in initial_model.get_weights()]
    out["frozen_fit"] = hist(initial_model.fit(xs, ys, epochs=2, batch_size=5, shuffle=False, verbose=0))
    after = initial_model.get_weights()
    out["frozen_changed"] = [bool(np.any(a != b)) for a, b in zip(before, after)]

    # functional API: multiple inputs and outputs, shared layers
    num_tags, num_words, num_departments = 6, 20, 3
    title_input = tf.keras.Input(shape=(None,), name="title", dtype="int32")
    body_input = tf.keras.Input(shape=(None,), name="body", dtype="int32")
    tags_input = tf.keras.Input(shape=(num_tags,), name="tags")
    shared_embedding = layers.Embedding(num_words, 4, name="emb")
    title_features = layers.GlobalAveragePooling1D()(shared_embedding(title_input))
    body_features = layers.GlobalAveragePooling1D()(shared_embedding(body_input))
    x = layers.concatenate([title_features, body_features, tags_input])
    priority_pred = layers.Dense(1, name="priority")(x)
    department_pred = layers.Dense(num_departments, name="department")(x)
    model = tf.keras.Model(inputs=[title_input, body_input, tags_input], outputs=[priority_pred, department_pred])
    det(model, 0.3)
    out["multi_io_names"] = [layer.name for layer in model.layers]
    out["multi_io_shapes"] = [[list(t.shape) for t in model.inputs], [list(t.shape) for t in model.outputs]]
    out["multi_io_weights"] = len(model.weights)
    rng = np.random.RandomState(5)
    title_data = rng.randint(num_words, size=(12, 5)).astype("int32")
    body_data = rng.randint(num_words, size=(12, 7)).astype("int32")
    tags_data = rng.randint(2, size=(12, num_tags)).astype("float32")
    priority_targets = rng.rand(12, 1).astype("float32")
    dept_targets = rng.randint(num_departments, size=(12,))
    # (SGD: with Embedding rows repeated in a batch, Keras 3's RMSprop/Adam/Adagrad/... square each repeated
    # row's gradient separately -- a sum of squares -- where tapeflow squares the summed, dense gradient)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.5),
                  loss={"priority": tf.keras.losses.BinaryCrossentropy(from_logits=True),
                        "department": tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
                  loss_weights={"priority": 1.0, "department": 0.2})
    h = model.fit({"title": title_data, "body": body_data, "tags": tags_data},
                  {"priority": priority_targets, "department": dept_targets},
                  epochs=2, batch_size=6, shuffle=False, verbose=0)
    out["multi_io_fit"] = hist(h)
    out["multi_io_predict"] = [r(p) for p in model.predict([title_data[:2], body_data[:2], tags_data[:2]], verbose=0)]

    # nested models, Add, shared model called twice
    enc_in = tf.keras.Input(shape=(4,))
    encoder = tf.keras.Model(enc_in, layers.Dense(3, activation="tanh")(enc_in), name="encoder")
    a_in = tf.keras.Input(shape=(4,), name="a_in")
    b_in = tf.keras.Input(shape=(4,), name="b_in")
    merged = layers.Add()([encoder(a_in), encoder(b_in)])
    siamese = tf.keras.Model([a_in, b_in], layers.Dense(1)(merged))
    det(siamese)
    out["siamese_layers"] = [type(layer).__name__ for layer in siamese.layers]
    out["siamese_weights"] = len(siamese.weights)
    xa = np.linspace(0, 1, 8, dtype="float32").reshape(2, 4)
    out["siamese_out"] = r(siamese([xa, xa[::-1]]))
    siamese.compile("adam", "mae")
    out["siamese_fit"] = hist(siamese.fit([xa, xa], np.ones((2, 1), "float32"), epochs=2, verbose=0))
    out["wrong_inputs"] = exc(lambda: siamese(xa))
    return out
