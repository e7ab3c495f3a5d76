"""tf.image's box ops beyond the values pinned against TF in tests/tf_cases/image_boxes.py: inside tf.function,
and the detection idiom of gathering the kept boxes (the gradient flows through the gather, not the NMS)."""

import numpy as np

import tapeflow as tf
from tests.tf_cases.image_boxes import BOXES, CB, CS, IMG, SCORES


def test_box_ops_trace_in_tf_function_with_dynamic_counts():
    @tf.function
    def detect(boxes, scores, images):
        keep = tf.image.non_max_suppression(boxes, scores, 3)
        crops = tf.image.crop_and_resize(images, tf.gather(boxes, keep) * 0.1, tf.zeros_like(keep), [2, 3])
        return keep, crops, tf.image.combined_non_max_suppression(CB, CS, 2, 3).valid_detections

    fn = detect.get_concrete_function(tf.TensorSpec([None, 4]), tf.TensorSpec([None]), tf.TensorSpec([2, 4, 5, 2]))
    keep_spec, crops_spec, _ = fn.structured_outputs
    assert keep_spec.shape.as_list() == [None] and crops_spec.shape.as_list() == [None, 2, 3, 2]
    keep, crops, valid = detect(tf.constant(BOXES), tf.constant(SCORES), tf.constant(IMG))
    assert keep.numpy().tolist() == [3, 0, 5] and crops.shape == (3, 2, 3, 2) and valid.numpy().tolist() == [3]


def test_gradient_flows_to_the_kept_boxes_through_gather():
    boxes = tf.constant(BOXES)
    with tf.GradientTape() as tape:
        tape.watch(boxes)
        keep = tf.image.non_max_suppression(boxes, SCORES, 3)
        loss = tf.reduce_sum(tf.gather(boxes, keep))
    grad = tf.convert_to_tensor(tape.gradient(loss, boxes)).numpy()
    np.testing.assert_array_equal(grad.sum(axis=1), [4, 0, 0, 4, 0, 4])
