"""tf.train.Checkpoint tracks what TF tracks: Python lists/dicts of variables, dataset iterators and
tf.random.Generator states; tf.train.load_checkpoint / list_variables read a checkpoint without objects."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

pytest.importorskip("safetensors")


def _objects():
    vs = [tf.Variable(1.0), tf.Variable([2.0, 3.0])]
    d = {"a": tf.Variable(4.0), "b": [tf.Variable(5)]}
    gen = tf.random.Generator.from_seed(1)
    it = iter(tf.data.Dataset.range(10))
    return vs, d, gen, it


def test_lists_dicts_iterators_and_generators_are_tracked(tmp_path):
    vs, d, gen, it = _objects()
    next(it), next(it)
    gen.normal([3])
    ck = tf.train.Checkpoint(vs=vs, d=d, gen=gen, it=it)
    path = ck.save(str(tmp_path / "ck"))
    v = "/.ATTRIBUTES/VARIABLE_VALUE"  # TF's names (TF's iterator state has shape [2])
    assert tf.train.list_variables(str(tmp_path)) == [
        ("_CHECKPOINTABLE_OBJECT_GRAPH", []),
        ("d/a" + v, []),
        ("d/b/0" + v, []),
        ("gen/_state_var" + v, [3]),
        ("it/.ATTRIBUTES/ITERATOR_STATE", [1]),
        ("save_counter" + v, []),
        ("vs/0" + v, []),
        ("vs/1" + v, [2]),
    ]
    assert float(tf.train.load_variable(path, "vs/0/.ATTRIBUTES/VARIABLE_VALUE")) == 1.0
    assert tf.train.load_checkpoint(path).get_tensor("it/.ATTRIBUTES/ITERATOR_STATE").shape == (1,)
    assert isinstance(tf.train.load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH"), bytes)
    after_gen, after_it = gen.normal([2]).numpy(), int(next(it).numpy())
    assert after_it == 2
    vs[1].assign([0.0, 0.0])
    d["b"][0].assign(0)
    gen.normal([7])
    next(it), next(it)
    ck.restore(path)
    assert vs[1].numpy().tolist() == [2.0, 3.0] and int(d["b"][0].numpy()) == 5
    np.testing.assert_array_equal(gen.normal([2]).numpy(), after_gen)  # the stream continues from the save
    assert int(next(it).numpy()) == 2
    # into fresh objects, as in a new process
    vs2, d2, gen2, it2 = _objects()
    tf.train.Checkpoint(vs=vs2, d=d2, gen=gen2, it=it2).restore(path).assert_consumed()
    np.testing.assert_array_equal(gen2.normal([2]).numpy(), after_gen)
    assert [int(x.numpy()) for x in it2] == list(range(2, 10))


def test_load_checkpoint_reads_values_by_key(tmp_path):
    vs, d, gen, it = _objects()
    path = tf.train.Checkpoint(vs=vs, d=d).save(str(tmp_path / "ck"))
    reader = tf.train.load_checkpoint(str(tmp_path))
    v = "/.ATTRIBUTES/VARIABLE_VALUE"
    assert reader.get_variable_to_shape_map() == {"_CHECKPOINTABLE_OBJECT_GRAPH": [], "vs/0" + v: [],
                                                  "vs/1" + v: [2], "d/a" + v: [], "d/b/0" + v: [],
                                                  "save_counter" + v: []}
    assert reader.get_variable_to_dtype_map()["d/b/0" + v] == tf.int32
    np.testing.assert_array_equal(reader.get_tensor("vs/1"), [2.0, 3.0])
    np.testing.assert_array_equal(reader.get_tensor("vs/1/.ATTRIBUTES/VARIABLE_VALUE"), [2.0, 3.0])  # TF's key
    assert reader.has_tensor("d/a") and not reader.has_tensor("nope")
    assert float(tf.train.load_variable(path, "d/a/.ATTRIBUTES/VARIABLE_VALUE")) == 4.0
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found"):
        reader.get_tensor("nope")


def test_iterator_api():
    it = iter(tf.data.Dataset.from_tensor_slices([1, 2]))
    assert it.element_spec == tf.TensorSpec([], tf.int32)
    assert int(it.get_next().numpy()) == 1 and int(next(it).numpy()) == 2
    with pytest.raises(tf.errors.OutOfRangeError):
        it.get_next()
