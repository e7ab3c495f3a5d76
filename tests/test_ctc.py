"""tf.nn's CTC functions beyond the values pinned against TF in tests/tf_cases/ctc.py: traced in tf.function
(the loss differentiable through the function; the decoders' SparseTensors of data-dependent size)."""

import tapeflow as tf
from tests.tf_cases.ctc import LABEL_LENGTH, LABELS, LOGIT_LENGTH, LOGITS


def test_ctc_loss_and_decoders_trace_in_tf_function():
    @tf.function
    def decode(x):
        loss = tf.nn.ctc_loss(LABELS, x, LABEL_LENGTH, LOGIT_LENGTH)
        (greedy,), _ = tf.nn.ctc_greedy_decoder(x, LOGIT_LENGTH)
        beams, log_probs = tf.nn.ctc_beam_search_decoder(x, LOGIT_LENGTH, beam_width=3, top_paths=2)
        return loss, greedy.values, beams[1].indices, log_probs

    x = tf.Variable(LOGITS)
    with tf.GradientTape() as tape:
        loss, values, indices, log_probs = decode(x)
        total = tf.reduce_sum(loss)
    eager = tf.nn.ctc_loss(LABELS, LOGITS, LABEL_LENGTH, LOGIT_LENGTH)
    assert abs(float(total) - float(tf.reduce_sum(eager))) < 1e-5
    assert tape.gradient(total, x).shape == (6, 3, 5)
    assert values.dtype == tf.int64 and indices.shape[1] == 2 and log_probs.shape == (3, 2)
