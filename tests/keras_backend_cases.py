"""The legacy ``tf.keras.backend`` functions' cases, run under TF 2.21 by
``tools/keras_backend_legacy/record.py`` (into ``tests/fixtures/keras/backend_legacy.json``) and under tapeflow by
``tests/test_keras_backend_legacy.py``: ``run(tf)`` returns {case: result as nested lists, or "Error: message"}."""

import numpy as np


def run(tf) -> dict:
    K = tf.keras.backend
    rng = np.random.default_rng(0)

    def f(*shape):
        return rng.standard_normal(shape).astype("float32")

    res = {}

    def rec(name, fn):
        try:
            out = fn()
            res[name] = tf.nest.map_structure(lambda t: np.asarray(t).tolist(), out)
        except Exception as e:  # noqa: BLE001 - the case records the error
            res[name] = f"{type(e).__name__}: {str(e)[:200]}"
    x3, y3 = f(2, 3, 4), f(2, 4, 5)
    rec("batch_dot_33", lambda: K.batch_dot(x3, y3))
    rec("batch_dot_22", lambda: K.batch_dot(f(2, 4), f(2, 4)))
    rec("batch_dot_23", lambda: K.batch_dot(f(2, 3), f(2, 3, 5), axes=1))
    rec("batch_dot_32", lambda: K.batch_dot(f(2, 3, 5), f(2, 5)))
    rec("batch_dot_ax", lambda: K.batch_dot(f(2, 3, 4), f(2, 3, 6), axes=[1, 1]))
    rec("batch_dot_42", lambda: K.batch_dot(f(2, 3, 4, 5), f(2, 5, 2)).shape)
    rec("batch_dot_err", lambda: K.batch_dot(f(2, 3), f(3, 3)))
    rec("batch_dot_ax0", lambda: K.batch_dot(f(2, 3), f(2, 3), axes=0))
    p = np.abs(f(3, 4)) + 0.1
    p = p / p.sum(-1, keepdims=True)
    t = np.eye(4, dtype="float32")[[0, 2, 3]]
    rec("bce", lambda: K.binary_crossentropy(t, p))
    rec("bce_logits", lambda: K.binary_crossentropy(t, f(3, 4), from_logits=True))
    rec("bfce", lambda: K.binary_focal_crossentropy(t, p, apply_class_balancing=True))
    rec("cce", lambda: K.categorical_crossentropy(t, p))
    rec("cce_logits", lambda: K.categorical_crossentropy(t, f(3, 4), from_logits=True))
    rec("cfce", lambda: K.categorical_focal_crossentropy(t, p))
    rec("scce", lambda: K.sparse_categorical_crossentropy(np.array([0, 2, 3]), p))
    rec("scce_seq", lambda: K.sparse_categorical_crossentropy(np.array([[0, 2], [3, 1]]), np.abs(f(2, 2, 4)) + .1,
                                                             from_logits=True))
    rec("scce_ign", lambda: K.sparse_categorical_crossentropy(np.array([0, 2, 3]), p, ignore_class=2))
    img = f(2, 6, 6, 3)
    rec("conv2d", lambda: K.conv2d(img, f(3, 3, 3, 2), padding="same"))
    rec("conv2d_s", lambda: K.conv2d(img, f(3, 3, 3, 2), strides=(2, 2)))
    rec("conv2d_cf", lambda: K.conv2d(np.transpose(img, (0, 3, 1, 2)), f(3, 3, 3, 2),
                                      data_format="channels_first").shape)
    rec("conv1d_causal", lambda: K.conv1d(tf.constant(f(2, 7, 3)), tf.constant(f(3, 3, 4)), padding="causal",
                                          dilation_rate=2))
    rec("conv3d", lambda: K.conv3d(f(1, 4, 4, 4, 2), f(2, 2, 2, 2, 3)))
    rec("conv2d_t", lambda: K.conv2d_transpose(f(2, 3, 3, 4), f(3, 3, 2, 4), (2, 6, 6, 2), strides=(2, 2),
                                               padding="same"))
    rec("conv2d_t_none", lambda: K.conv2d_transpose(f(2, 3, 3, 4), f(3, 3, 2, 4), (None, 5, 5, 2)).shape)
    rec("conv2d_t_dil", lambda: K.conv2d_transpose(f(1, 4, 4, 2), f(3, 3, 2, 2), (1, 4, 4, 2), padding="same",
                                                   dilation_rate=(2, 2)))
    rec("dwconv", lambda: K.depthwise_conv2d(img, f(3, 3, 3, 2)))
    rec("sepconv", lambda: K.separable_conv2d(img, f(3, 3, 3, 1), f(1, 1, 3, 4), padding="same"))
    rec("pool2d", lambda: K.pool2d(img, (2, 2), strides=(2, 2)))
    rec("pool2d_avg", lambda: K.pool2d(img, (3, 3), padding="same", pool_mode="avg"))
    rec("pool3d", lambda: K.pool3d(f(1, 4, 4, 4, 2), (2, 2, 2), strides=(2, 2, 2), pool_mode="avg"))
    rec("pool_bad", lambda: K.pool2d(img, (2, 2), pool_mode="min"))
    rec("pad3d", lambda: K.spatial_3d_padding(f(1, 2, 2, 2, 1)).shape)
    rec("resize", lambda: K.resize_images(tf.constant(f(1, 2, 3, 1)), 2, 3, "channels_last"))
    rec("resize_bil", lambda: K.resize_images(tf.constant(f(1, 2, 3, 1)), 2, 2, "channels_last",
                                              interpolation="bilinear"))
    rec("resize_bad", lambda: K.resize_images(tf.constant(f(1, 2, 3, 1)), 2, 2, "channels_last", interpolation="foo"))
    rec("resize_vol", lambda: K.resize_volumes(tf.constant(f(1, 2, 2, 2, 1)), 2, 1, 3, "channels_last"))
    v = tf.Variable(np.ones(3, "float32"))
    rec("mau", lambda: K.moving_average_update(v, np.array([3., 5., 7.], "float32"), 0.9))
    rec("foldl", lambda: K.foldl(lambda a, x: a + x, np.arange(5.0, dtype="float32")))
    rec("foldr", lambda: K.foldr(lambda a, x: a * 2 + x, np.arange(4.0, dtype="float32"), initializer=np.float32(1.0)))
    rec("map_fn", lambda: K.map_fn(lambda x: x * x, np.arange(4.0, dtype="float32")))
    rec("switch_s", lambda: K.switch(tf.constant(True), lambda: tf.constant(1.0), lambda: tf.constant(2.0)))
    rec("switch_v", lambda: K.switch(tf.constant([True, False, True]), tf.constant(f(3)), tf.constant(f(3))))
    rec("switch_2d", lambda: K.switch(tf.constant([[True, False], [False, True]]), tf.constant(f(2, 2, 3)),
                                      tf.constant(f(2, 2, 3))))
    rec("switch_err", lambda: K.switch(tf.constant([[True, False]]), tf.constant(f(2)), tf.constant(f(2))))
    rec("gradients", lambda: K.gradients(tf.constant(1.0), [tf.constant(2.0)]))
    lab = np.array([[1, 2, 0], [3, 3, 1]])
    ll = np.array([[2], [3]])
    probs = np.abs(f(2, 6, 5)) + 0.05
    probs = probs / probs.sum(-1, keepdims=True)
    rec("ctc_sparse", lambda: tf.sparse.to_dense(K.ctc_label_dense_to_sparse(lab, tf.constant([2, 3], "int32"))))
    rec("ctc_cost", lambda: K.ctc_batch_cost(lab, probs, np.array([[6], [5]]), ll))
    rec("ctc_decode", lambda: K.ctc_decode(probs, np.array([6, 5])))
    rec("ctc_decode_beam", lambda: K.ctc_decode(probs, np.array([6, 5]), greedy=False, beam_width=4, top_paths=2))
    W = f(4, 3)
    U = f(3, 3)

    def step(x, states):
        h = tf.tanh(tf.matmul(x, W) + tf.matmul(states[0], U))
        return h, [h]

    seq = f(2, 5, 4)
    m = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    h0 = [np.zeros((2, 3), "float32")]
    rec("rnn", lambda: K.rnn(step, seq, h0))
    rec("rnn_back", lambda: K.rnn(step, seq, h0, go_backwards=True))
    rec("rnn_mask", lambda: K.rnn(step, seq, h0, mask=m))
    rec("rnn_mask_back", lambda: K.rnn(step, seq, h0, mask=m, go_backwards=True))
    rec("rnn_mask_zero", lambda: K.rnn(step, seq, h0, mask=m, zero_output_for_mask=True))
    rec("rnn_unroll_mask", lambda: K.rnn(step, tf.constant(seq), [tf.constant(h0[0])], mask=tf.constant(m),
                                         unroll=True, zero_output_for_mask=True))
    rec("rnn_last", lambda: K.rnn(step, seq, h0, return_all_outputs=False))
    rec("rnn_tm", lambda: K.rnn(step, tf.constant(np.transpose(seq, (1, 0, 2))), h0, time_major=True))
    rec("rnn_len", lambda: K.rnn(step, seq, h0, input_length=tf.constant([3, 5])))
    rec("rnn_len_back", lambda: K.rnn(step, seq, h0, input_length=tf.constant([3, 5]), go_backwards=True))
    # traced, and differentiated
    rnn_fn = tf.function(lambda s, mm: K.rnn(step, s, [tf.zeros((2, 3))], mask=mm)[1])
    rec("fn_rnn_mask", lambda: rnn_fn(tf.constant(seq), tf.constant(m)))
    ctc_fn = tf.function(lambda q: K.ctc_batch_cost(lab, q, np.array([[6], [5]]), ll))
    rec("fn_ctc", lambda: ctc_fn(tf.constant(probs)))
    wv = tf.Variable(W)

    def vstep(x, states):
        h = tf.tanh(tf.matmul(x, wv) + tf.matmul(states[0], U))
        return h, [h]

    def grad_rnn():
        with tf.GradientTape() as tape:
            out = K.rnn(vstep, tf.constant(seq), h0, mask=tf.constant(m), go_backwards=True)[1]
            loss = tf.reduce_sum(out * out)
        return tape.gradient(loss, wv)

    rec("grad_rnn", grad_rnn)

    def grad_ctc():
        q = tf.constant(probs)
        with tf.GradientTape() as tape:
            tape.watch(q)
            loss = tf.reduce_sum(K.ctc_batch_cost(lab, q, np.array([[6], [5]]), ll))
        return tape.gradient(loss, q)

    rec("grad_ctc", grad_ctc)
    return res
