"""TF 1 graph mode (tapeflow/graph/session.py, tapeflow/compat/v1*.py) as TF's migration guides use it:
tf.Graph().as_default(), placeholders, Session.run, get_variable/variable_scope, initializers, the name-based
Saver and init_from_checkpoint. Expected values and texts are TF 2.21's."""

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.compat.v1 as tf1


def test_session_runs_the_fetched_subgraph_with_feeds():
    with tf.Graph().as_default() as g:
        x = tf1.placeholder(tf.float32, shape=[], name="x")
        v = tf.Variable(3.0, name="v")
        y = tf.multiply(x, v)
        z = y + 2
        assert not tf.executing_eagerly() and x.name == "x:0"
        with tf1.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(y, feed_dict={x: 5}) == 15.0
            out = sess.run({"y": y, "both": [z, y]}, {"x:0": 1.0})
            assert out == {"y": 3.0, "both": [5.0, 3.0]} and type(out["y"]) is np.float32
            assert sess.run(v) == 3.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value for placeholder "
                                                                     "tensor 'x' with dtype float"):
                sess.run(z)
            with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2,\) for Tensor x:0, which has "
                                                 r"shape \(\)"):
                sess.run(z, {x: [1.0, 2.0]})
        assert g.get_tensor_by_name("x:0") is x
    assert tf.executing_eagerly()
    with pytest.raises(RuntimeError, match="tf.placeholder\\(\\) is not compatible with eager execution."):
        tf1.placeholder(tf.float32)


def test_assign_runs_when_fetched_and_initializers_reset():
    with tf.Graph().as_default():
        a = tf1.get_variable("a", shape=[], dtype=tf.float32, initializer=tf1.zeros_initializer())
        with tf1.variable_scope("scoped"):
            c = tf1.get_variable("c", shape=[2], initializer=tf1.constant_initializer(3))
        assert [v.name for v in tf1.global_variables()] == ["a:0", "scoped/c:0"]
        with tf1.Session() as sess:
            step = a.assign(1)
            assert sess.run(a) == 0.0  # building the assign does not run it
            assert sess.run(step) == 1.0 and sess.run(a) == 1.0
            assert sess.run(a.assign_add(2.0, read_value=False)) is None and sess.run(a) == 3.0
            sess.run(tf1.global_variables_initializer())
            assert sess.run([a, c])[0] == 0.0 and sess.run(c).tolist() == [3.0, 3.0]
        with pytest.raises(ValueError, match="Variable a already exists, disallowed"):
            tf1.get_variable("a", shape=[])


def test_saver_writes_names_and_restores_in_graph_and_eagerly(tmp_path):
    path = str(tmp_path / "tf1-ckpt")
    with tf.Graph().as_default():
        a = tf1.get_variable("a", shape=[], initializer=tf1.zeros_initializer())
        c = tf1.get_variable("scoped/c", shape=[], initializer=tf1.zeros_initializer())
        with tf1.Session() as sess:
            sess.run(a.assign(1))
            sess.run(c.assign(3))
            assert tf1.train.Saver().save(sess, path) == path
    reader = tf.train.load_checkpoint(path)
    assert list(reader.get_variable_to_shape_map()) == ["scoped/c", "a"]  # TF's order, no object graph
    assert reader.get_tensor("a") == 1.0
    with tf1.variable_scope("new_scope"):
        a2 = tf1.get_variable("a", shape=[], initializer=tf1.zeros_initializer())
    assert a2.name == "new_scope/a:0"
    tf1.train.Saver({"a": a2}).restore(sess=None, save_path=path)
    assert a2.numpy() == 1.0
    # TF 2's Checkpoint restores a TF 1 checkpoint by the variables' names
    b, c2 = tf.Variable(0.0, name="a"), tf.Variable(0.0, name="scoped/c")
    tf.train.Checkpoint(variables=[b, c2]).restore(path)
    assert (b.numpy(), c2.numpy()) == (1.0, 3.0)
    with pytest.raises(tf.errors.NotFoundError, match="Key b not found in checkpoint"):
        tf1.train.Saver({"b": b}).restore(None, path)


def test_init_from_checkpoint_maps_scopes(tmp_path):
    path = str(tmp_path / "ckpt")
    a, c = tf.Variable(1.0, name="a"), tf.Variable(3.0, name="scoped/c")
    tf1.train.Saver(var_list=[a, c]).save(None, path)
    with tf.Graph().as_default():
        with tf1.variable_scope("new_scope"):
            a2 = tf1.get_variable("a", shape=[], initializer=tf1.zeros_initializer())
            c2 = tf1.get_variable("scoped/c", shape=[], initializer=tf1.zeros_initializer())
        with tf1.Session() as sess:
            tf1.train.init_from_checkpoint(path, assignment_map={"/": "new_scope/"})
            sess.run(tf1.global_variables_initializer())
            assert sess.run([a2, c2]) == [1.0, 3.0]


def test_checkpoint_keys_escape_slashes_and_dots_as_tf():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    variables, _ = __import__("tapeflow.train.checkpoint", fromlist=["_walk"])._walk(
        tf.train.Checkpoint(var_list={"scoped/c": a, "x.y": b}))
    assert sorted(variables) == ["var_list/scoped.Sc", "var_list/x..y"]


def test_object_graph_is_tfs_trackable_object_graph_proto(tmp_path):
    # TF 2.21's bytes (guide/migrate/migrating_checkpoints): breadth-first nodes, Checkpoint kwargs sorted
    a, b, c = tf.Variable(0.0), tf.Variable(0.0), tf.Variable(0.0)
    module = tf.Module()
    module.d = tf.Variable(0.0)
    path = tf.train.Checkpoint(v={"a": a, "b": b}, c=c, module=module).save(str(tmp_path / "root-tf2-ckpt"))
    want = (b"\n0\n\x05\x08\x01\x12\x01c\n\n\x08\x02\x12\x06module\n\x05\x08\x03\x12\x01v\n\x10\x08\x04\x12\x0c"
            b"save_counter*\x02\x08\x01\n>\x128\n\x0eVARIABLE_VALUE\x12\x08Variable\x1a\x1cc/.ATTRIBUTES/VARIABLE_"
            b"VALUE*\x02\x08\x01\n\x0b\n\x05\x08\x05\x12\x01d*\x02\x08\x01\n\x12\n\x05\x08\x06\x12\x01a\n\x05\x08"
            b"\x07\x12\x01b*\x02\x08\x01\nM\x12G\n\x0eVARIABLE_VALUE\x12\x0csave_counter\x1a'save_counter/.ATTRIBUTES"
            b"/VARIABLE_VALUE*\x02\x08\x01\nE\x12?\n\x0eVARIABLE_VALUE\x12\x08Variable\x1a#module/d/.ATTRIBUTES/"
            b"VARIABLE_VALUE*\x02\x08\x01\n@\x12:\n\x0eVARIABLE_VALUE\x12\x08Variable\x1a\x1ev/a/.ATTRIBUTES/"
            b"VARIABLE_VALUE*\x02\x08\x01\n@\x12:\n\x0eVARIABLE_VALUE\x12\x08Variable\x1a\x1ev/b/.ATTRIBUTES/"
            b"VARIABLE_VALUE*\x02\x08\x01")
    assert tf.train.load_checkpoint(path).get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH") == want
    assert tf.train.load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH") == want
