"""Recurrent layers of the text / time-series tutorials on pinned weights: SimpleRNN, LSTM, GRU (both
reset_after modes), the cells with RNN and StackedRNNCells, Bidirectional, TimeDistributed; return_sequences,
return_state, go_backwards, initial_state, stateful, masking from Embedding(mask_zero=True), tf.function
(a while loop) and unroll, gradients; a text classifier trained with fit and an LSTM loop with gradient
clipping (tape, clip_by_global_norm, apply_gradients)."""

import numpy as np

from _common import r


def set_det(layer_or_model, scale=0.3):
    values = []
    for i, w in enumerate(layer_or_model.weights):
        v = (np.sin(np.arange(int(np.prod(w.shape))) * 0.61 + i) * scale).reshape(tuple(w.shape))
        values.append((np.abs(v) + 0.5 if "variance" in w.name else v).astype("float32"))
    layer_or_model.set_weights(values)


def x_of(shape):
    return np.sin(np.arange(int(np.prod(shape))).reshape(shape) * 0.37).astype("float32")


CASES = [
    "SimpleRNN(4)",
    "SimpleRNN(3, return_sequences=True, activation='relu')",
    "LSTM(4)",
    "LSTM(3, return_sequences=True, return_state=True)",
    "LSTM(4, go_backwards=True, use_bias=False)",
    "LSTM(2, unit_forget_bias=False, recurrent_activation='hard_sigmoid')",
    "GRU(4)",
    "GRU(3, return_sequences=True, return_state=True)",
    "GRU(4, reset_after=False)",
    "GRU(3, go_backwards=True, return_sequences=True)",
    "RNN(L.LSTMCell(3))",
    "RNN(L.GRUCell(3), return_sequences=True)",
    "RNN(L.SimpleRNNCell(2), return_state=True, go_backwards=True)",
    "RNN([L.LSTMCell(4), L.GRUCell(2)], return_state=True)",
    "RNN(L.StackedRNNCells([L.SimpleRNNCell(3), L.LSTMCell(2)]), return_sequences=True)",
    "Bidirectional(L.LSTM(3))",
    "Bidirectional(L.GRU(2, return_sequences=True), merge_mode='sum')",
    "Bidirectional(L.SimpleRNN(2, return_sequences=True), merge_mode='ave')",
    "Bidirectional(L.LSTM(2, return_state=True))",
    "TimeDistributed(L.Dense(2, activation='tanh'))",
]


def run(tf):
    flat = tf.nest.flatten
    tf.keras.backend.clear_session()
    L = tf.keras.layers
    out = {}
    x = x_of((2, 5, 3))
    for code in CASES:
        layer = eval("L." + code)
        layer.build((None, 5, 3))
        set_det(layer)
        ys = flat(layer(x))
        graph = flat(tf.function(lambda t: layer(t))(tf.constant(x)))
        xv = tf.Variable(x)
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_sum(y**2) for y in flat(layer(xv))])
        gx, *gw = tape.gradient(loss, [xv] + layer.trainable_weights)
        out[code] = {
            "weights": [[w.path, list(w.shape)] for w in layer.weights],
            "shapes": [list(y.shape) for y in ys],
            "y": [r(y, 5) for y in ys],
            "graph_max_diff": float(max(np.max(np.abs(np.asarray(a) - np.asarray(b))) for a, b in zip(ys, graph)))
            < 1e-5,
            "gx": r(tf.reduce_sum(gx, axis=0), 5),
            "gw": [round(float(tf.reduce_sum(g * g)), 4) for g in gw],
        }

    # unroll=True and a while loop under tf.function give the same numbers; gradients in the graph
    lstm = L.LSTM(3, return_sequences=True)
    lstm.build((None, 5, 3))
    set_det(lstm)
    unrolled = L.LSTM(3, return_sequences=True, unroll=True)
    unrolled.build((None, 5, 3))
    set_det(unrolled)

    @tf.function
    def grads(layer, t):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(t) ** 2)
        return loss, tape.gradient(loss, layer.trainable_weights)

    l1, g1 = grads(lstm, tf.constant(x))
    l2, g2 = grads(unrolled, tf.constant(x))
    out["graph_grads"] = [
        round(float(l1), 5),
        round(float(l2), 5),
        [round(float(tf.reduce_sum(g)), 5) for g in g1],
        [round(float(tf.reduce_sum(g)), 5) for g in g2],
    ]

    # initial_state, and initial states of a Bidirectional
    gru = L.GRU(3)
    gru.build((None, 5, 3))
    set_det(gru)
    out["initial_state"] = r(gru(x, initial_state=[tf.constant(x_of((2, 3)))]), 5)
    lstm2 = L.LSTM(2, return_state=True)
    lstm2.build((None, 5, 3))
    set_det(lstm2)
    y, h, c = lstm2(x, initial_state=[tf.ones((2, 2)), tf.constant(x_of((2, 2)))])
    out["lstm_initial_state"] = [r(y, 5), r(c, 5)]

    # stateful: the final states carry to the next call until reset_states()
    st = L.SimpleRNN(2, stateful=True)
    st.build((2, 5, 3))
    set_det(st)
    a = st(x)
    b = st(x)
    st.reset_states()
    c2 = st(x)
    out["stateful"] = [r(a, 5), r(b, 5), r(c2, 5)]

    # masking: Embedding(mask_zero=True) -> LSTM skips padded steps
    tokens = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 2]], "int32")
    emb = L.Embedding(10, 3, mask_zero=True)
    emb.build((None, 5))
    set_det(emb)
    e = emb(tokens)
    out["mask"] = r(emb.compute_mask(tokens))
    for code in [
        "LSTM(3)",
        "GRU(2, return_sequences=True)",
        "SimpleRNN(2, go_backwards=True)",
        "Bidirectional(L.LSTM(2))",
        "LSTM(2, return_sequences=True, zero_output_for_mask=True)",
    ]:
        layer = eval("L." + code)
        layer.build((None, 5, 3))
        set_det(layer)
        out["masked " + code] = r(layer(e), 5)
    masked_model = tf.keras.Sequential(
        [
            tf.keras.Input((5,), dtype="int32"),
            L.Embedding(10, 3, mask_zero=True),
            L.LSTM(2, return_sequences=True),
            L.GRU(2),
        ]
    )
    set_det(masked_model)
    out["masked_sequential"] = r(masked_model(tokens), 5)
    out["masking_layer"] = r(L.Masking(mask_value=0.0).compute_mask(np.array([[[1.0], [0.0]]], "float32")))

    # the text-classification tutorial's model: shapes, params, a pinned fit
    model = tf.keras.Sequential(
        [
            tf.keras.Input((None,), dtype="int64"),
            L.Embedding(20, 4, mask_zero=True),
            L.Bidirectional(L.LSTM(4, return_sequences=True)),
            L.Bidirectional(L.LSTM(3)),
            L.Dense(4, activation="relu"),
            L.Dense(1),
        ]
    )
    set_det(model)
    seqs = (np.arange(8 * 6).reshape(8, 6) * 7 % 19).astype("int64")
    seqs[:4, 4:] = 0
    labels = (seqs.sum(1) % 2).astype("float32")
    model.compile(
        loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
        optimizer=tf.keras.optimizers.SGD(0.1),
        metrics=["accuracy"],
    )
    out["text_model_shapes"] = [list(layer.output.shape) for layer in model.layers]
    out["text_model_params"] = model.count_params()
    out["text_model_predict"] = r(model.predict(seqs, verbose=0)[:, 0], 5)
    hist = model.fit(seqs, labels, epochs=2, batch_size=4, shuffle=False, verbose=0)
    out["text_model_loss"] = [round(v, 4) for v in hist.history["loss"]]

    # time series: LSTM + TimeDistributed(Dense) on windows, functional API
    inp = tf.keras.Input((6, 2))
    h = L.LSTM(4, return_sequences=True)(inp)
    h = L.TimeDistributed(L.Dense(1))(h)
    ts = tf.keras.Model(inp, h)
    set_det(ts)
    out["timeseries"] = [list(h.shape), ts.count_params(), r(ts(x_of((1, 6, 2)))[0, :, 0], 5)]

    # gradient clipping on an LSTM training loop
    seq_model = tf.keras.Sequential([tf.keras.Input((5, 3)), L.LSTM(4), L.Dense(1)])
    set_det(seq_model, 0.8)
    opt = tf.keras.optimizers.Adam(0.05)
    target = tf.constant([[1.0], [-1.0]])
    losses, norms = [], []

    @tf.function
    def train_step(inputs, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((seq_model(inputs) - y) ** 2)
        g = tape.gradient(loss, seq_model.trainable_variables)
        clipped, norm = tf.clip_by_global_norm(g, 0.5)
        opt.apply_gradients(zip(clipped, seq_model.trainable_variables))
        return loss, norm

    for _ in range(4):
        loss, norm = train_step(tf.constant(x * 3.0), target)
        losses.append(round(float(loss), 5))
        norms.append(round(float(norm), 4))
    with tf.GradientTape() as tape:  # and eagerly
        loss = tf.reduce_mean((seq_model(x * 3.0) - target) ** 2)
    g = tape.gradient(loss, seq_model.trainable_variables)
    clipped, norm = tf.clip_by_global_norm(g, 0.5)
    opt.apply_gradients(zip(clipped, seq_model.trainable_variables))
    out["clipping"] = {
        "losses": losses,
        "norms": norms,
        "eager": [round(float(loss), 5), round(float(norm), 4)],
        "after": r(seq_model(x)[:, 0], 5),
    }

    cfg = L.LSTM(4, return_sequences=True, dropout=0.1).get_config()
    out["lstm_config"] = {
        k: v for k, v in cfg.items() if isinstance(v, (int, float, str, bool)) and k not in ("name", "dtype")
    }
    out["lstm_config_keys"] = sorted(cfg)
    out["gru_config_keys"] = sorted(L.GRU(2).get_config())
    out["bidi_config_keys"] = sorted(L.Bidirectional(L.GRU(2)).get_config())
    rebuilt = L.LSTM.from_config(L.LSTM(5, go_backwards=True).get_config())
    out["from_config"] = [rebuilt.units, rebuilt.go_backwards]

    # dropout in training: the outputs change, the shapes do not; inference ignores dropout
    d = L.LSTM(3, dropout=0.5, recurrent_dropout=0.5)
    d.build((None, 5, 3))
    set_det(d)
    out["dropout_inference"] = r(d(x), 5)
    out["dropout_training_shape"] = list(d(x, training=True).shape)
    return out
