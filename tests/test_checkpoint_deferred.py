"""TF's deferred restoration and object-graph aliases in tf.train.Checkpoint (pinned from TF 2.21, as in
TF's checkpoint guide): lists and dicts on a Checkpoint or tf.Module are tracked wrappers; values saved for
objects that do not exist at restore time are applied when they are attached; a variable or module saved
under two names restores through either."""

import numpy as np
import pytest

import tapeflow as tf


def _saved(tmp_path):
    save = tf.train.Checkpoint()
    save.listed = [tf.Variable(1.0)]
    save.listed.append(tf.Variable(2.0))
    save.mapped = {"one": save.listed[0]}
    save.mapped["two"] = save.listed[1]
    save.mod = tf.Module()
    save.mod.v = tf.Variable([3.0, 4.0])
    save.mod.sub = tf.Module()
    save.mod.sub.w = tf.Variable(5.0)
    save.alias = save.mod
    return save.save(str(tmp_path / "lst"))


def test_containers_are_tracked_wrappers():
    m = tf.Module()
    m.l, m.d, m.t = [], {}, (1, 2)
    assert (repr(m.l), repr(m.d), repr(m.t)) == ("ListWrapper([])", "DictWrapper({})", "(1, 2)")
    assert (type(m.l).__name__, type(m.d).__name__) == ("ListWrapper", "_DictWrapper")
    m.l.append(tf.Variable(1.0))
    assert isinstance(m.l, list) and m.l == [m.l[0]]
    c = tf.train.Checkpoint()
    c.x = [1, 2]
    assert repr(c.x) == "ListWrapper([1, 2])"


def test_keys_are_stored_once_and_aliases_restore(tmp_path):
    path = _saved(tmp_path)
    assert [k for k, _ in tf.train.list_variables(path)] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH",
        "listed/0/.ATTRIBUTES/VARIABLE_VALUE",
        "listed/1/.ATTRIBUTES/VARIABLE_VALUE",
        "mod/sub/w/.ATTRIBUTES/VARIABLE_VALUE",
        "mod/v/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
    ]
    # TF's checkpoint guide: a dict entry saved as an alias of a list item restores through the dict.
    restore = tf.train.Checkpoint()
    v2 = tf.Variable(0.0)
    restore.mapped = {"two": v2}
    restore.restore(path)
    assert v2.numpy() == 2.0


def test_values_wait_for_objects_attached_later(tmp_path):
    path = _saved(tmp_path)
    r = tf.train.Checkpoint()
    status = r.restore(path)
    r.alias = tf.Module()  # a module saved under two names: the second one restores too
    r.alias.v = tf.Variable([0.0, 0.0])
    r.alias.sub = tf.Module()
    r.alias.sub.w = tf.Variable(0.0)
    np.testing.assert_array_equal(r.alias.v.numpy(), [3.0, 4.0])
    assert r.alias.sub.w.numpy() == 5.0
    r.listed = []
    assert repr(r.listed) == "ListWrapper([])"
    v1 = tf.Variable(0.0)
    r.listed.append(v1)  # TF's guide: "Restores v1, from restore() in the previous cell"
    assert v1.numpy() == 1.0
    r.mapped = {}
    r.mapped["two"] = tf.Variable(0.0)
    assert r.mapped["two"].numpy() == 2.0
    status.assert_consumed()  # every saved value has found its object now


def test_unconsumed_until_attached_and_shape_checked(tmp_path):
    path = _saved(tmp_path)
    r = tf.train.Checkpoint()
    status = r.restore(path)
    with pytest.raises(AssertionError, match="listed/0"):
        status.assert_consumed()
    r.listed = []
    with pytest.raises(ValueError, match=r"shape \(\) when attempting to restore variable with shape \(3,\)"):
        r.listed.append(tf.Variable([1.0, 2.0, 3.0]))
    status.expect_partial()


def test_deferred_into_module_attribute(tmp_path):
    src = tf.Module()
    src.layer = tf.Module()
    src.layer.bias = tf.Variable([1.0, 2.0])
    path = tf.train.Checkpoint(net=src).save(str(tmp_path / "m"))
    fake_layer = tf.train.Checkpoint()
    new_root = tf.train.Checkpoint(net=tf.train.Checkpoint(layer=fake_layer))
    new_root.restore(path)
    fake_layer.bias = b = tf.Variable([0.0, 0.0])  # created after restore: restored when attached
    np.testing.assert_array_equal(b.numpy(), [1.0, 2.0])
