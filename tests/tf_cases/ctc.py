"""Cases of tf.nn's CTC functions (ctc_loss with dense and sparse labels and its gradients, the greedy and beam
search decoders, collapse_repeated, ctc_unique_labels), each ``fn(tf)``; recorded from real TF by
tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

import numpy as np

RNG = np.random.default_rng(12)
LOGITS = RNG.normal(size=(6, 3, 5)).astype(np.float32)  # [time, batch, classes]
LABELS = np.array([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 1, 0]], np.int32)
LABEL_LENGTH = np.array([3, 2, 3], np.int32)
LOGIT_LENGTH = np.array([6, 5, 6], np.int32)
SPARSE_INDICES = np.array([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [2, 0], [2, 1], [2, 2]], np.int64)
SPARSE_VALUES = np.array([1, 2, 2, 3, 1, 0, 0, 1], np.int32)  # (blank last: class 4)
TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}  # float32 forward-backward sums, in another order than TF's


def _sparse(tf):
    return tf.SparseTensor(SPARSE_INDICES, SPARSE_VALUES, [3, 3])


def _loss(**kw):
    def fn(tf):
        args = {"labels": LABELS, "logits": LOGITS, "label_length": LABEL_LENGTH, "logit_length": LOGIT_LENGTH}
        args.update(kw)
        return tf.nn.ctc_loss(**args)
    return fn


def _grad(order=1, sparse=False, **kw):
    def fn(tf):
        x = tf.constant(LOGITS)
        labels = _sparse(tf) if sparse else LABELS
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t:
                t.watch(x)
                loss = tf.nn.ctc_loss(labels, x, None if sparse else LABEL_LENGTH, LOGIT_LENGTH, **kw)
                total = tf.reduce_sum(loss * tf.constant([1.0, 2.0, 0.5]))
            g = t.gradient(total, x)
            if order == 1:
                return g
            s = tf.reduce_sum(g * g)
        return t2.gradient(s, x)
    return fn


def _greedy(**kw):
    def fn(tf):
        (st,), logp = tf.nn.ctc_greedy_decoder(LOGITS, LOGIT_LENGTH, **kw)
        return st.indices, st.values, st.dense_shape, logp
    return fn


def _beam(**kw):
    def fn(tf):
        decoded, logp = tf.nn.ctc_beam_search_decoder(LOGITS, LOGIT_LENGTH, **kw)
        return [(st.indices, st.values, st.dense_shape) for st in decoded], logp
    return fn


CASES = {
    "loss_dense": _loss(),
    "loss_dense_blank_last": _loss(blank_index=-1),
    "loss_dense_blank_2": _loss(blank_index=2),
    "loss_dense_batch_major": _loss(logits=np.transpose(LOGITS, (1, 0, 2)), logits_time_major=False),
    "loss_dense_infeasible": _loss(label_length=np.array([3, 2, 3], np.int32), logit_length=np.array([2, 5, 1])),
    "loss_dense_float64": _loss(logits=LOGITS.astype(np.float64)),
    "loss_dense_int64_labels": _loss(labels=LABELS.astype(np.int64), label_length=LABEL_LENGTH.astype(np.int64)),
    "loss_dense_grad": _grad(),
    "loss_dense_grad_blank_2": _grad(blank_index=2),
    "loss_sparse": lambda tf: tf.nn.ctc_loss(_sparse(tf), LOGITS, None, LOGIT_LENGTH, blank_index=-1),
    "loss_sparse_blank_0": lambda tf: tf.nn.ctc_loss(
        tf.SparseTensor(SPARSE_INDICES, SPARSE_VALUES + 1, [3, 3]), LOGITS, None, LOGIT_LENGTH, blank_index=0),
    "loss_sparse_no_blank_index": lambda tf: tf.nn.ctc_loss(_sparse(tf), LOGITS, None, LOGIT_LENGTH),
    "loss_sparse_infeasible": lambda tf: tf.nn.ctc_loss(_sparse(tf), LOGITS, None, [6, 5, 2], blank_index=-1),
    "loss_sparse_grad": _grad(sparse=True, blank_index=-1),
    "loss_sparse_second_order": _grad(order=2, sparse=True, blank_index=-1),
    "greedy": _greedy(),
    "greedy_no_merge": _greedy(merge_repeated=False),
    "greedy_blank_0": _greedy(blank_index=0),
    "greedy_bad_length": lambda tf: tf.nn.ctc_greedy_decoder(LOGITS, [6, 7, 6]),
    "greedy_bad_rank": lambda tf: tf.nn.ctc_greedy_decoder(LOGITS[0], LOGIT_LENGTH),
    "beam": _beam(beam_width=4),
    "beam_top2": _beam(beam_width=4, top_paths=2),
    "beam_default": _beam(),
    "beam_top_paths_too_many": _beam(beam_width=2, top_paths=3),
    "collapse_repeated": lambda tf: tf.nn.collapse_repeated([[1, 1, 2, 2, 3], [4, 4, 4, 5, 0]], [5, 4]),
    "ctc_unique_labels": lambda tf: tf.nn.ctc_unique_labels([[3, 4, 4, 3], [1, 1, 2, 0]]),
}
