"""Attention layers on pinned weights: MultiHeadAttention (self / cross attention, key, value_dim,
output_shape, attention_mask, use_causal_mask, return_attention_scores, masks from Embedding(mask_zero=True)),
Attention (dot, concat, use_scale, causal, masks), AdditiveAttention; weights, gradients, a small
Transformer-style functional model, and the Softmax layer with a mask."""

import numpy as np

from _common import r


def set_det(layer_or_model, scale=0.3):
    values = []
    for i, w in enumerate(layer_or_model.weights):
        v = (np.sin(np.arange(int(np.prod(w.shape))) * 0.61 + i) * scale).reshape(tuple(w.shape))
        values.append((np.abs(v) + 0.5 if "variance" in w.name else v).astype("float32"))
    layer_or_model.set_weights(values)


def x_of(shape, k=0.37):
    return np.sin(np.arange(int(np.prod(shape))).reshape(shape) * k).astype("float32")


def run(tf):
    tf.keras.backend.clear_session()
    L = tf.keras.layers
    out = {}
    q, v = x_of((2, 4, 5)), x_of((2, 6, 3), 0.53)
    amask = np.arange(2 * 4 * 6).reshape(2, 4, 6) % 3 != 1
    cases = [
        ("self", "MultiHeadAttention(2, 3)", lambda m, t: m(t, t)),
        ("cross", "MultiHeadAttention(3, 2, value_dim=4)", lambda m, t: m(t, v)),
        ("key", "MultiHeadAttention(2, 2, use_bias=False, output_shape=7)", lambda m, t: m(t, v, x_of((2, 6, 4)))),
        ("mask", "MultiHeadAttention(2, 3)", lambda m, t: m(t, v, attention_mask=amask)),
        ("causal", "MultiHeadAttention(2, 3)", lambda m, t: m(t, t, use_causal_mask=True)),
        ("scores", "MultiHeadAttention(2, 3)", lambda m, t: m(t, v, return_attention_scores=True)),
    ]
    for name, code, call in cases:
        m = eval("L." + code)
        call(m, q)
        set_det(m)
        ys = tf.nest.flatten(call(m, q))
        qv = tf.Variable(q)
        with tf.GradientTape() as tape:
            loss = tf.add_n([tf.reduce_sum(y**2) for y in tf.nest.flatten(call(m, qv))])
        gq, *gw = tape.gradient(loss, [qv] + m.trainable_weights)
        out["mha " + name] = {
            "weights": [[w.path, list(w.shape)] for w in m.weights],
            "shapes": [list(y.shape) for y in ys],
            "y": [r(y[0], 5) for y in ys],
            "gq": r(tf.reduce_sum(gq, axis=0), 5),
            "gw": [round(float(tf.reduce_sum(g * g)), 4) for g in gw],
        }
    m = L.MultiHeadAttention(4, 8, dropout=0.1)
    cfg = m.get_config()
    out["mha_config"] = {
        k: (list(val) if isinstance(val, tuple) else val)
        for k, val in cfg.items()
        if isinstance(val, (int, float, str, bool, tuple)) and k not in ("name", "dtype")
    }

    # masks from Embedding(mask_zero=True) flow into MHA and Attention
    tokens = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 2]], "int32")
    emb = L.Embedding(10, 4, mask_zero=True)
    emb.build((None, 5))
    set_det(emb)
    e = emb(tokens)
    mha = L.MultiHeadAttention(2, 2)
    mha(e, e)
    set_det(mha)
    inp = tf.keras.Input((5,), dtype="int32")
    h = emb(inp)
    y, s = mha(h, h, return_attention_scores=True)
    fm = tf.keras.Model(inp, [y, s])
    y, s = fm(tokens)
    out["mha_embedding_mask"] = [r(y[0], 5), r(s[0, 0], 5)]

    att_cases = [
        "Attention()",
        "Attention(use_scale=True)",
        "Attention(score_mode='concat')",
        "Attention(use_scale=True, score_mode='concat')",
        "AdditiveAttention()",
        "AdditiveAttention(use_scale=False)",
    ]
    qa, va, ka = x_of((2, 3, 4)), x_of((2, 5, 4), 0.61), x_of((2, 5, 4), 0.29)
    for code in att_cases:
        a = eval("L." + code)
        a([qa, va])
        set_det(a, 0.7)
        res, sc = a([qa, va, ka], return_attention_scores=True)
        masked = a(
            [qa, va],
            mask=[
                np.array([[True, True, False], [True, False, True]]),
                np.array([[True, True, True, False, False], [True, False, True, True, True]]),
            ],
        )
        causal = a([qa, qa], use_causal_mask=True)
        qv = tf.Variable(qa)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(a([qv, va]) ** 2)
        gq, *gw = tape.gradient(loss, [qv] + a.trainable_weights)
        out[code] = {
            "weights": [[w.name, list(w.shape)] for w in a.weights],
            "y": r(res, 5),
            "scores": r(sc[0], 5),
            "masked": r(masked, 5),
            "causal": r(causal[1], 5),
            "gq": r(gq[0], 5),
            "gw": [round(float(tf.reduce_sum(g * g)), 4) for g in gw],
            "config": sorted(a.get_config()),
        }
    # Attention layers after Embedding(mask_zero=True) in a functional model
    inp = tf.keras.Input((5,), dtype="int32")
    h = L.Embedding(10, 4, mask_zero=True)(inp)
    att = L.Attention()([h, h])
    pooled = L.GlobalAveragePooling1D()(att)
    fm = tf.keras.Model(inp, pooled)
    set_det(fm)
    out["functional_attention"] = [list(att.shape), r(fm(tokens), 5)]

    # a Transformer encoder block (the text tutorials'): MHA + LayerNormalization + Dense
    inp = tf.keras.Input((5, 4))
    a = L.MultiHeadAttention(num_heads=2, key_dim=4)(inp, inp)
    h = L.LayerNormalization(epsilon=1e-6)(inp + a)
    f = L.Dense(8, activation="relu")(h)
    f = L.Dense(4)(f)
    o = L.LayerNormalization(epsilon=1e-6)(h + f)
    block = tf.keras.Model(inp, o)
    set_det(block)
    out["transformer_block"] = [list(o.shape), block.count_params(), r(block(x_of((2, 5, 4)))[1], 5)]

    sm = L.Softmax()
    out["softmax_mask"] = r(sm(x_of((2, 4)), mask=np.array([[True, False, True, True], [False] * 4])), 5)
    return out
