"""tf.function traced from a RaggedTensorSpec (every component a placeholder, as TF), saved and loaded
(the ragged-tensor guide's CustomModule); ops that need the row partition's values say so."""

import pytest

import tapeflow as tf


def test_concrete_function_of_a_ragged_spec_saves_and_loads(tmp_path):
    class CustomModule(tf.Module):
        def __init__(self, variable_value):
            super().__init__()
            self.v = tf.Variable(variable_value)

        @tf.function
        def grow(self, x):
            return x * self.v

    module = CustomModule(100.0)
    cf = module.grow.get_concrete_function(tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32))
    assert repr(cf.structured_input_signature) == (  # TF 2.21's
        "((RaggedTensorSpec(TensorShape([None, None]), tf.float32, 1, tf.int64),), {})")
    rt = tf.ragged.constant([[1.0, 4.0, 3.0], [2.0]])
    assert str(cf(rt)) == "<tf.RaggedTensor [[100.0, 400.0, 300.0], [200.0]]>"
    assert str(cf(tf.ragged.constant([[1.0], [], [2.0, 3.0]]))) == "<tf.RaggedTensor [[100.0], [], [200.0, 300.0]]>"
    tf.saved_model.save(module, str(tmp_path))
    imported = tf.saved_model.load(str(tmp_path))
    assert str(imported.grow(rt)) == "<tf.RaggedTensor [[100.0, 400.0, 300.0], [200.0]]>"


def test_input_signature_ragged_spec_and_partition_ops():
    @tf.function(input_signature=[tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32)])
    def f(x):
        return tf.ragged.map_flat_values(tf.square, x) + 1.0

    cf = f.get_concrete_function()
    assert [n.name for n in cf.graph.as_graph_def().node][:2] == ["x", "x_1"]  # flat values, row splits
    assert str(cf(tf.ragged.constant([[1.0], [2.0, 3.0]]))) == "<tf.RaggedTensor [[2.0], [5.0, 10.0]]>"
    rows = tf.function(lambda x: (x.nrows(), x.row_lengths(), x.row_starts(), x.row_limits()))
    n, lengths, starts, limits = rows.get_concrete_function(f.input_signature[0])(
        tf.ragged.constant([[1.0, 4.0, 3.0], [], [2.0]]))
    assert int(n) == 3 and n.dtype == tf.int64
    assert lengths.numpy().tolist() == [3, 0, 1] and starts.numpy().tolist() == [0, 3, 3]
    assert limits.numpy().tolist() == [3, 3, 4]
    g = tf.function(lambda x: tf.reduce_sum(x, axis=1))
    with pytest.raises(NotImplementedError, match="traced from a RaggedTensorSpec"):
        g.get_concrete_function(tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32))
    h = tf.function(lambda x: tf.shape(x))
    with pytest.raises(NotImplementedError, match="DynamicRaggedShape"):
        h.get_concrete_function(tf.RaggedTensorSpec(shape=[None, None], dtype=tf.float32))


def test_dynamic_ragged_shape_through_tf_function():
    rt = tf.ragged.constant([[1.0, 4.0, 3.0], [2.0]])
    # tf.reshape of a RaggedTensor to a DynamicRaggedShape takes its values in row-major order (TF's)
    assert str(tf.reshape(tf.ragged.constant([[1.0], [4.0, 3.0, 2.0]]), tf.shape(rt))) == (
        "<tf.RaggedTensor [[1.0, 4.0, 3.0], [2.0]]>")

    @tf.function
    def f(x):
        s = tf.shape(x)
        return tf.ones(s), s[0], tf.reshape(x, s), s

    ones, n, same, shape = f(rt)
    assert str(ones) == "<tf.RaggedTensor [[1.0, 1.0, 1.0], [1.0]]>" and int(n) == 2
    assert str(same) == str(rt)
    assert repr(shape) == "<DynamicRaggedShape lengths=[2, (3, 1)] num_row_partitions=1>"

    @tf.function
    def z(s):
        return tf.zeros(s)

    assert str(z(tf.shape(rt))) == "<tf.RaggedTensor [[0.0, 0.0, 0.0], [0.0]]>"
    z(tf.shape(rt))
    assert z.experimental_get_tracing_count() == 1
