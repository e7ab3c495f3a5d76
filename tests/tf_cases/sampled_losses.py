"""Cases of tf.nn.nce_loss, sampled_softmax_loss and compute_accidental_hits (seeded samplers: TF's samples),
each ``fn(tf)``; recorded from real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

import numpy as np

RNG = np.random.default_rng(5)
W = RNG.normal(size=(20, 4)).astype(np.float32)
B = RNG.normal(size=(20,)).astype(np.float32)
X = RNG.normal(size=(3, 4)).astype(np.float32)
LABELS = np.array([[0], [6], [3]], np.int64)
LABELS2 = np.array([[0, 1], [6, 2], [3, 3]], np.int64)
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}
# TF's eager sampler kernels are cached per (op, seeds, attrs) and move on at each call: each case sets the global
# seed (as other tests may have) and has an op seed of its own, so it is its kernel's first call in any order


def _seeded(tf, seed):
    tf.random.set_seed(1204)
    return seed


def _loss(kind, seed, labels=LABELS, num_true=1, grads=False, **kw):
    def fn(tf):
        w, b, x = tf.Variable(W), tf.Variable(B), tf.constant(X)
        sampled = tf.random.log_uniform_candidate_sampler(labels, num_true, 6, True, 20, seed=_seeded(tf, seed))
        loss_fn = tf.nn.nce_loss if kind == "nce" else tf.nn.sampled_softmax_loss
        with tf.GradientTape() as t:
            t.watch(x)
            loss = loss_fn(w, b, labels, x, 6, 20, num_true=num_true, sampled_values=sampled, **kw)
            total = tf.reduce_sum(loss * tf.constant([1.0, 0.5, 2.0]))
        if not grads:
            return loss
        gw, gb, gx = t.gradient(total, [w, b, x])
        return [tf.convert_to_tensor(gw), tf.convert_to_tensor(gb), gx]
    return fn


CASES = {
    "sampled_candidates": lambda tf: tuple(tf.random.log_uniform_candidate_sampler(LABELS, 1, 6, True, 20,
                                                                                 seed=_seeded(tf, 99))),
    "nce": _loss("nce", 101),
    "nce_grads": _loss("nce", 102, grads=True),
    "nce_remove_hits": _loss("nce", 103, remove_accidental_hits=True),
    "nce_two_true": _loss("nce", 104, LABELS2, 2),
    "sampled_softmax": _loss("softmax", 105),
    "sampled_softmax_grads": _loss("softmax", 106, grads=True),
    "sampled_softmax_keep_hits": _loss("softmax", 107, remove_accidental_hits=False),
    "sampled_softmax_two_true": _loss("softmax", 108, LABELS2, 2),
    "sampled_softmax_seed": lambda tf: tf.nn.sampled_softmax_loss(W, B, LABELS, X, 5, 20, seed=_seeded(tf, 11)),
    "accidental_hits": lambda tf: tuple(tf.nn.compute_accidental_hits(LABELS2, np.array([3, 9, 6, 0], np.int64),
                                                                      2)),
}
