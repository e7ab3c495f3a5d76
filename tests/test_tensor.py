"""Tensor, dtypes, TensorShape, conversion rules and core op errors, pinned
against TensorFlow 2.21."""

import re

import numpy as np
import pytest

import tapeflow as tf
InvalidArgumentError = tf.errors.InvalidArgumentError


def test_python_values_follow_tf_dtype_inference():
    assert tf.constant(1.0).dtype == tf.float32
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant(2**40).dtype == tf.int64
    assert tf.constant([1, 2.5]).dtype == tf.float32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant(np.array([1.0])).dtype == tf.float64
    assert tf.constant(np.float64(1.0)).dtype == tf.float64
    assert tf.constant(np.array([1], np.int64)).dtype == tf.int64
    assert tf.constant("abc").numpy() == b"abc"
    assert tf.constant("abc").dtype == tf.string


def test_constant_dtype_and_shape_arguments():
    assert tf.constant([1, 2], dtype=tf.float32).dtype == tf.float32
    with pytest.raises(TypeError, match="Cannot convert 2.5 to EagerTensor of dtype int32"):
        tf.constant(2.5, dtype=tf.int32)
    np.testing.assert_array_equal(tf.constant(1.0, shape=[2, 2]).numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(tf.constant([1.0, 2, 3, 4], shape=[2, 2]).numpy(), [[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="unsupported shape"):
        tf.constant([1.0, 2.0, 3.0], shape=[2])
    with pytest.raises(ValueError, match="None"):
        tf.constant(None)


def test_convert_to_tensor_rules():
    t = tf.constant([1.5])
    assert tf.convert_to_tensor(t) is t
    with pytest.raises(ValueError, match="requested dtype float64 for Tensor with dtype float32"):
        tf.convert_to_tensor(t, dtype=tf.float64)
    assert tf.convert_to_tensor(np.array([1.5]), dtype=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor([1, 2], dtype_hint=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor([1.5], dtype_hint=tf.int32).dtype == tf.float32
    assert tf.convert_to_tensor([tf.constant(1.0), 2.0]).numpy().tolist() == [1.0, 2.0]


def test_no_implicit_promotion_between_tensors():
    with pytest.raises(InvalidArgumentError, match="expected to be a float tensor but is a double tensor"):
        tf.constant(1.0) + tf.constant(1.0, tf.float64)
    with pytest.raises(InvalidArgumentError, match="int32 tensor but is a float tensor"):
        tf.constant(1) + 2.5
    with pytest.raises(InvalidArgumentError):
        tf.add(1, 2.5)
    assert (tf.constant(1.0, tf.float64) + 2.0).dtype == tf.float64  # a Python scalar adapts
    assert (tf.constant(1) + 2).dtype == tf.int32
    assert (np.float32(2) * tf.constant(3.0)).numpy() == 6.0
    assert (np.array([1.0, 2.0], np.float32) + tf.constant(3.0)).numpy().tolist() == [4.0, 5.0]


def test_integer_division_dtypes():
    r = tf.constant([1, 2]) / tf.constant([2, 3])
    assert r.dtype == tf.float64
    assert (tf.constant([1, 2], tf.int16) / tf.constant([2, 3], tf.int16)).dtype == tf.float32
    assert tf.reduce_mean(tf.constant([1, 2])).numpy() == 1
    assert tf.reduce_mean(tf.constant([-1, -2])).numpy() == -1
    assert (tf.constant([-7, 7]) // tf.constant([2, -2])).numpy().tolist() == [-4, -4]
    assert (tf.constant([-7.0, 7.0]) % tf.constant([2.0, -2.0])).numpy().tolist() == [1.0, -1.0]
    with pytest.raises(InvalidArgumentError, match="negative integer powers"):
        tf.constant(2) ** -1


def test_repr_and_str_match_tf():
    assert repr(tf.constant(6.0)) == "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"
    assert repr(tf.constant(True)) == "<tf.Tensor: shape=(), dtype=bool, numpy=True>"
    assert repr(tf.constant(3)) == "<tf.Tensor: shape=(), dtype=int32, numpy=3>"
    assert str(tf.constant(6.0)) == "tf.Tensor(6.0, shape=(), dtype=float32)"
    assert str(tf.constant([[1.0, 2.0], [3.0, 4.0]])) == (
        "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"
    )
    assert repr(tf.constant([[1.0, 2.0]])) == (
        "<tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[1., 2.]], dtype=float32)>"
    )
    assert repr(tf.eye(2)).startswith("<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray(")
    assert repr(tf.reduce_logsumexp(tf.constant([1000.0, 1000.0]))).endswith("numpy=1000.6931762695312>")


def test_python_protocol():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert len(t) == 2
    assert [r.numpy().tolist() for r in t] == [[1.0, 2.0], [3.0, 4.0]]
    try:  # TF 2.21's float() is float(self._numpy()): NumPy 2.4 says "only 0-dimensional arrays ..."
        expected = float(np.array([2.0]))
    except TypeError as e:
        with pytest.raises(TypeError, match=str(e)):
            float(tf.constant([2.0]))
        with pytest.raises(TypeError, match=str(e)):
            "%.1f" % tf.Variable([2.0])  # noqa: UP031 - as the preprocessing_layers tutorial prints a (1,) tensor
    else:
        assert float(tf.constant([2.0])) == expected
    assert int(tf.constant(2.7)) == 2
    assert bool(tf.constant(1.0))
    assert np.asarray(t).shape == (2, 2)
    assert t.ndim == 2 and t.shape == (2, 2) and t.shape.as_list() == [2, 2]
    with pytest.raises(TypeError, match="Scalar tensor has no `len\\(\\)`"):
        len(tf.constant(1.0))
    with pytest.raises(ValueError, match="truth value"):
        bool(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="iterate over a scalar"):
        list(tf.constant(1.0))
    with pytest.raises(TypeError, match="unhashable. Instead, use tensor.ref"):
        hash(t)
    d = {t.ref(): 1}
    assert d[t.ref()] == 1 and t.ref().deref() is t


def test_operators():
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    assert (a + b).numpy().tolist() == [4.0, 6.0]
    assert (a - b).numpy().tolist() == [-2.0, -2.0]
    assert (a * b).numpy().tolist() == [3.0, 8.0]
    assert (b / a).numpy().tolist() == [3.0, 2.0]
    assert (b // a).numpy().tolist() == [3.0, 2.0]
    assert (b % a).numpy().tolist() == [0.0, 0.0]
    assert (a**2).numpy().tolist() == [1.0, 4.0]
    assert (2**a).numpy().tolist() == [2.0, 4.0]
    assert (-a).numpy().tolist() == [-1.0, -2.0]
    assert abs(-a).numpy().tolist() == [1.0, 2.0]
    assert (a < b).dtype == tf.bool
    assert (a == tf.constant([1.0, 3.0])).numpy().tolist() == [True, False]
    assert (a != tf.constant([1.0, 3.0])).numpy().tolist() == [False, True]
    assert (a == tf.constant([1.0, 3.0, 4.0])).numpy() == np.False_  # TF: scalar False
    assert (a == None) is False  # noqa: E711
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert (m @ m).numpy().tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert (~tf.constant([True, False])).numpy().tolist() == [False, True]
    assert (tf.constant([True, False]) & tf.constant([True, True])).numpy().tolist() == [True, False]


def test_getitem():
    t = tf.constant([[1, 2, 3], [4, 5, 6]])
    assert t[1, ::-1].numpy().tolist() == [6, 5, 4]
    assert t[-1].numpy().tolist() == [4, 5, 6]
    assert t[..., 1].numpy().tolist() == [2, 5]
    assert t[:, None, 0].shape == (2, 1)
    assert t[tf.constant(1), 0].numpy() == 4
    assert t[0:1, 1:].numpy().tolist() == [[2, 3]]
    with pytest.raises(InvalidArgumentError, match="out of bounds"):
        tf.constant([1, 2, 3])[5]
    with pytest.raises(InvalidArgumentError, match="Index out of range"):
        tf.constant([1, 2, 3])[0, 0]
    with pytest.raises(InvalidArgumentError, match="tf.gather"):
        tf.constant([1, 2, 3])[[0, 1]]


def test_creation_ops():
    assert tf.range(5).dtype == tf.int32
    assert tf.range(1.0, 5).dtype == tf.float32
    assert tf.range(1.0, 5).numpy().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert tf.range(np.float64(1.0), 3).dtype == tf.float64
    assert tf.linspace(0.0, 1.0, 3).numpy().tolist() == [0.0, 0.5, 1.0]
    assert tf.linspace(0, 1, 3).dtype == tf.float64
    assert tf.zeros([2, 3]).dtype == tf.float32
    assert tf.ones([2], tf.int32).numpy().tolist() == [1, 1]
    assert tf.fill([2], 3).dtype == tf.int32
    assert tf.eye(2, 3).numpy().tolist() == [[1, 0, 0], [0, 1, 0]]
    assert tf.zeros_like(tf.Variable([1.0])).numpy().tolist() == [0.0]
    assert tf.ones_like(tf.constant([1, 2]), dtype=tf.float32).dtype == tf.float32
    assert tf.shape(tf.ones([2, 3])).numpy().tolist() == [2, 3]
    assert tf.size(tf.ones([2, 3])).numpy() == 6
    assert tf.rank(tf.ones([2, 3])).numpy() == 2
    assert tf.identity(tf.constant(2.0)).numpy() == 2.0


def test_array_ops_values():
    assert tf.tile(tf.constant([1, 2]), [2]).numpy().tolist() == [1, 2, 1, 2]
    assert tf.stack([tf.constant(1), tf.constant(2)]).numpy().tolist() == [1, 2]
    assert [u.numpy().tolist() for u in tf.unstack(tf.constant([[1, 2], [3, 4]]), axis=1)] == [[1, 3], [2, 4]]
    assert tf.expand_dims(tf.ones([2]), -1).shape == (2, 1)
    assert tf.squeeze(tf.ones([1, 2, 1])).shape == (2,)
    assert tf.reshape(tf.range(6), [2, -1]).shape == (2, 3)
    assert tf.transpose(tf.ones([2, 3, 4]), [2, 0, 1]).shape == (4, 2, 3)
    assert tf.concat([tf.ones([2, 1]), tf.zeros([2, 2])], axis=1).shape == (2, 3)
    assert [s.shape for s in tf.split(tf.ones([6, 2]), [1, -1])] == [(1, 2), (5, 2)]
    assert tf.broadcast_to(tf.constant([1, 2]), [3, 2]).shape == (3, 2)
    assert tf.where(tf.constant([True, False]), 1.0, 2.0).numpy().tolist() == [1.0, 2.0]
    assert tf.where(tf.constant([True, False, True])).numpy().tolist() == [[0], [2]]
    assert tf.argmax(tf.constant([[1, 3], [4, 2]])).numpy().tolist() == [1, 0]
    assert tf.argmax(tf.constant([[1, 3], [4, 2]])).dtype == tf.int64
    assert tf.round(tf.constant([0.5, 1.5, 2.5, -0.5])).numpy().tolist() == [0.0, 2.0, 2.0, -0.0]
    assert tf.cast(tf.constant([1.7, -1.7]), tf.int32).numpy().tolist() == [1, -1]
    assert tf.cast(tf.constant([0.0, 2.0]), tf.bool).numpy().tolist() == [False, True]
    assert tf.add_n([tf.constant(1.0), tf.constant(2.0)]).numpy() == 3.0
    assert tf.reduce_logsumexp(tf.constant([-np.inf, -np.inf])).numpy() == -np.inf
    np.testing.assert_allclose(tf.sigmoid(tf.constant([-100.0, 0.0, 100.0])).numpy(), [0.0, 0.5, 1.0], atol=1e-30)
    np.testing.assert_allclose(tf.math.softplus(tf.constant([100.0, -100.0])).numpy(), [100.0, 0.0], atol=1e-30)


@pytest.mark.parametrize("fn, match", [
    (lambda: tf.reshape(tf.constant([1, 2, 3]), [2, 2]), "Input to reshape is a tensor with 3 values"),
    (lambda: tf.transpose(tf.constant([[1, 2]]), [0, 0]), "permutation"),
    (lambda: tf.matmul(tf.ones([2, 3]), tf.ones([2, 3])), "Matrix size-incompatible: In\\[0\\]: \\[2, 3\\]"),
    (lambda: tf.matmul(tf.ones([3]), tf.ones([3, 2])), "rank >= 2"),
    (lambda: tf.ones([2, 3]) + tf.ones([4]), "Incompatible shapes: \\[2,3\\] vs. \\[4\\] \\[Op:AddV2\\]"),
    (lambda: tf.reduce_sum(tf.ones([2, 3]), axis=2), "Invalid reduction dimension 2"),
    (lambda: tf.concat([tf.ones([2, 3]), tf.ones([3, 2])], 0), "ConcatOp"),
    (lambda: tf.sin(tf.constant(1)), "Value for attr 'T' of int32 is not in the list of allowed values"),
    (lambda: tf.split(tf.ones([5]), 2), "evenly divide"),
    (lambda: tf.squeeze(tf.ones([2, 3]), 0), "Can not squeeze dim\\[0\\]"),
    (lambda: tf.gather(tf.constant([1, 2]), [3]), "not in \\[0, 2\\)"),
])
def test_bad_input_raises_invalid_argument_naming_the_op(fn, match):
    with pytest.raises(InvalidArgumentError, match=match) as info:
        fn()
    assert "[Op:" in str(info.value)


def test_dtypes_and_shapes():
    assert repr(tf.float32) == "tf.float32"
    assert tf.as_dtype(np.float64) is tf.float64
    assert tf.as_dtype("int32") is tf.int32
    assert tf.float32.is_floating and not tf.int32.is_floating and tf.int8.is_integer
    assert tf.float32.as_numpy_dtype is np.float32 and tf.float16.name == "float16"
    assert tf.uint8.is_unsigned and tf.bool.name == "bool"
    s = tf.TensorShape([None, 3])
    assert str(s) == "(None, 3)" and repr(s) == "TensorShape([None, 3])"
    assert s.rank == 2 and s[1] == 3 and s[0] is None and s.as_list() == [None, 3]
    assert not s.is_fully_defined() and s.is_compatible_with([5, 3])
    assert tf.TensorShape(None).rank is None
    assert repr(tf.ones([2, 3]).shape) == "TensorShape([2, 3])"


def test_string_tensors_and_errors_match_tf():
    assert str(tf.constant("a") + tf.constant("b")) == "tf.Tensor(b'ab', shape=(), dtype=string)"
    with pytest.raises(InvalidArgumentError, match="Sum"):
        tf.reduce_sum(tf.constant(["a", "b"]))
    with pytest.raises(InvalidArgumentError, match="Less"):
        tf.constant(["a"]) < tf.constant(["b"])
    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to float is not supported"):
        tf.cast(tf.constant(["1"]), tf.float32)
    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to int64 is not supported"):
        tf.cast(tf.constant(["1"]), tf.int64)
    with pytest.raises(InvalidArgumentError, match="bool tensor"):
        tf.reduce_all(tf.constant([1, 2]))
    with pytest.raises(tf.errors.NotFoundError):
        tf.realdiv(tf.constant(1), tf.constant(2))
    with pytest.raises(ValueError, match="0-D"):
        tf.math.scalar_mul(tf.ones([2, 2]), tf.ones([2, 2]))
    with pytest.raises(ValueError, match="unsupported type"):
        tf.convert_to_tensor(object())
    with pytest.raises(TypeError, match="base_type"):
        tf.register_tensor_conversion_function(None, None)
    with pytest.raises(InvalidArgumentError, match="num_segments must be a scalar"):
        tf.math.unsorted_segment_sum(tf.ones([2]), tf.constant([0, 1]), tf.constant([[2]]))


def test_gradient_of_none_target_is_a_type_error():
    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * 2
    with pytest.raises(TypeError, match="received None"):
        t.gradient(None, x)
    with pytest.raises(TypeError, match="received None"):
        t.gradient([y, None], x)
    assert float(t.gradient(y, x)) == 2.0


def test_empty_list_constants_take_any_dtype():
    assert repr(tf.constant([], dtype=tf.int32)) == (
        "<tf.Tensor: shape=(0,), dtype=int32, numpy=array([], dtype=int32)>"
    )
    assert tf.constant([]).dtype == tf.float32


def test_python_operand_conversion_errors_match_tf():
    assert float(tf.constant(1.0) * True) == 1.0  # bools convert to numbers
    assert float(tf.constant(True, tf.float32)) == 1.0
    with pytest.raises(TypeError, match="Cannot convert 1 to EagerTensor of dtype bool"):
        tf.constant(1, tf.bool)
    with pytest.raises(InvalidArgumentError):  # tensor on the left: the kernel's error
        tf.constant(1) + 0.5
    with pytest.raises(TypeError, match="Cannot convert 0.5 to EagerTensor of dtype int32"):
        0.5 + tf.constant(1)  # on the left, the conversion's error
    with pytest.raises(TypeError, match="Cannot convert 0.5 to EagerTensor of dtype int32"):
        tf.Variable(1) * 0.5


def test_non_rectangular_list_message_as_tf():
    with pytest.raises(ValueError, match=r"^Can't convert non-rectangular Python sequence to Tensor\.$"):
        tf.constant([[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]])


def test_tensor_shape_rank_assertions_and_subtypes_as_tf():
    s = tf.TensorShape([2, None, 3])
    assert s.with_rank_at_least(2) is s and s.with_rank_at_most(3) is s
    for call, msg in [(lambda: s.with_rank_at_least(4), "Shape (2, None, 3) must have rank at least 4"),
                      (lambda: s.with_rank_at_most(2), "Shape (2, None, 3) must have rank at most 2"),
                      (lambda: s.assert_has_rank(2), "Shape (2, None, 3) must have rank 2"),
                      (lambda: s.assert_is_fully_defined(), "Shape (2, None, 3) is not fully defined"),
                      (lambda: s.assert_same_rank(tf.TensorShape([1, 2])),
                       "Shapes (2, None, 3) and (1, 2) must have the same rank")]:
        with pytest.raises(ValueError, match=re.escape(msg)):
            call()
    unknown = tf.TensorShape(None)
    assert unknown.with_rank_at_least(2) is unknown and unknown.assert_has_rank(3) is None
    assert s.is_subtype_of(tf.TensorShape([2, None, None])) and tf.TensorShape([2, 4, 3]).is_subtype_of(s)
    assert s.is_subtype_of(unknown) and not unknown.is_subtype_of(s) and not s.is_subtype_of([2, None, 3])
    assert s.most_specific_common_supertype([tf.TensorShape([2, 5, 4])]).as_list() == [2, None, None]
    assert s.most_specific_common_supertype([tf.TensorShape([2, 5])]).rank is None
    assert s.most_specific_common_supertype([]) == s


def test_sequence_mask_inside_tf_function_with_run_time_lengths():
    @tf.function
    def masks(n, lengths):
        return tf.sequence_mask(lengths, n), tf.sequence_mask(lengths), tf.sequence_mask(lengths, 5, tf.float32)

    a, b, c = masks(tf.constant(4), tf.constant([1, 3]))
    assert a.numpy().tolist() == [[True, False, False, False], [True, True, True, False]]
    assert b.numpy().tolist() == [[True, False, False], [True, True, True]]
    assert c.numpy().tolist() == [[1, 0, 0, 0, 0], [1, 1, 1, 0, 0]]
    cf = masks.get_concrete_function(tf.TensorSpec([], tf.int32), tf.TensorSpec([None], tf.int32))
    assert [o.shape.as_list() for o in cf.structured_outputs] == [[None, None], [None, None], [None, 5]]  # as TF
