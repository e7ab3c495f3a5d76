"""tf.DeviceSpec: TF 2.21's parsing, printing, replace/merge and equality (values pinned from TF)."""

import pytest

import tapeflow as tf


def test_device_spec_prints_and_parses_tf_device_names():
    d = tf.DeviceSpec(job="worker", replica=0, task=1, device_type="GPU", device_index=0)
    assert d.to_string() == "/job:worker/replica:0/task:1/device:GPU:0"
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == ("worker", 0, 1, "GPU", 0)
    assert tf.DeviceSpec(device_type="gpu").to_string() == "/device:GPU:*"
    assert tf.DeviceSpec(device_type="cpu", device_index=1).to_string() == "/device:CPU:1"
    assert tf.DeviceSpec().to_string() == ""
    s = tf.DeviceSpec.from_string("/job:ps/task:3/device:CPU:*")
    assert s.to_string() == "/job:ps/task:3/device:CPU:*" and s.device_index is None and s.task == 3
    assert tf.DeviceSpec.from_string("/gpu:1").to_string() == "/device:GPU:1"
    assert tf.DeviceSpec.from_string("GPU:2").to_string() == "/device:GPU:2"
    assert tf.DeviceSpec.from_string("/job:a/cpu:0").to_string() == "/job:a/device:CPU:0"
    assert repr(d) == "<DeviceSpec(job=worker, replica=0, task=1, device_type=GPU, device_index=0)>"


def test_device_spec_replace_merge_equality_and_errors():
    d = tf.DeviceSpec(job="worker", replica=0, task=1, device_type="GPU", device_index=0)
    assert d.replace(job="ps", task=None).to_string() == "/job:ps/replica:0/device:GPU:0"
    merged = d.make_merged_spec(tf.DeviceSpec(device_type="CPU"))
    assert merged.to_string() == "/job:worker/replica:0/task:1/device:CPU:0"
    assert d == tf.DeviceSpec.from_string(d.to_string()) and hash(d) == hash(tf.DeviceSpec.from_string(d.to_string()))
    with pytest.raises(ValueError, match="Unknown attribute 'foo' is encountered while parsing the device spec"):
        tf.DeviceSpec.from_string("/foo:bar")
    with pytest.raises(ValueError):
        tf.DeviceSpec(task="x")
    with tf.device(tf.DeviceSpec(device_type="CPU", device_index=0)):
        assert float(tf.constant(1.0)) == 1.0
