"""tf.experimental.numpy (tnp): NumPy's dtype rules, functions and, with experimental_enable_numpy_behavior,
tensor promotion, methods and indexing; values and dtypes pinned from TF 2.21."""

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.experimental.numpy as tnp
from tapeflow.experimental.numpy import _core


@pytest.fixture
def numpy_behavior():
    tnp.experimental_enable_numpy_behavior()
    yield
    _core._disable_numpy_behavior()  # the switch is global (as TF's): undone for the other tests


def _r(t):
    return t.dtype.name, np.asarray(t).tolist()


def test_dtype_inference_and_creation():
    assert tf.experimental.numpy is tnp and tnp.ndarray is tf.Tensor
    assert tnp.asarray(1).dtype == tf.int64 and tnp.asarray(1.0).dtype == tf.float64
    assert tnp.asarray(True).dtype == tf.bool and tnp.asarray(np.float32(1)).dtype == tf.float32
    assert _r(tnp.asarray([1, 2.5])) == ("float64", [1.0, 2.5])
    assert tnp.ones([2]).dtype == tf.float64 and tnp.zeros(3, dtype=int).dtype == tf.int64
    assert tnp.empty([2]).dtype == tf.float64 and tnp.arange(5).dtype == tf.int64
    assert _r(tnp.arange(1.0, 5, 2)) == ("float64", [1.0, 3.0])
    assert _r(tnp.full([2], 3)) == ("int64", [3, 3])
    assert _r(tnp.eye(2)) == ("float64", [[1.0, 0.0], [0.0, 1.0]])
    assert _r(tnp.linspace(0, 1, 3)) == ("float64", [0.0, 0.5, 1.0])
    assert tnp.array([1, 2], ndmin=2).shape == (1, 2)
    assert _r(tnp.ones_like(tnp.arange(2))) == ("int64", [1, 1])
    assert _r(tnp.zeros_like(tnp.arange(2), dtype=float)) == ("float64", [0.0, 0.0])
    x = tf.constant([1, 2])
    assert tnp.asarray(x) is x  # a tensor of the dtype already: itself


def test_functions_follow_numpy_types():
    assert _r(tnp.add(1.0, 2.0)) == ("float64", 3.0) and _r(tnp.add(True, True)) == ("bool", True)
    assert _r(tnp.multiply(2, 3.0)) == ("float64", 6.0) and _r(tnp.power(2, 3)) == ("int64", 8)
    assert _r(tnp.subtract(5, tnp.arange(2))) == ("int64", [5, 4])
    assert _r(tnp.true_divide(tnp.arange(3), 2)) == ("float64", [0.0, 0.5, 1.0])
    assert _r(tnp.maximum(tnp.arange(3), 1.5)) == ("float64", [1.5, 1.5, 2.0])
    assert _r(tnp.where(tnp.arange(3) > 1, 1, 0)) == ("int64", [0, 0, 1])
    assert _r(tnp.concatenate([tnp.ones([1]), tnp.zeros([2], dtype=tnp.int32)])) == ("float64", [1.0, 0.0, 0.0])
    assert _r(tnp.matmul(tnp.ones([2, 3]), tnp.ones([3]))) == ("float64", [3.0, 3.0])
    assert _r(tnp.dot(tnp.arange(3), tnp.arange(3.0))) == ("float64", 5.0)
    assert _r(tnp.sqrt(32)) == ("float64", 5.656854249492381) and _r(tnp.exp(1)) == ("float64", 2.718281828459045)
    assert _r(tnp.square(tnp.arange(3))) == ("int64", [0, 1, 4]) and _r(tnp.floor(2.5)) == ("float64", 2.0)
    assert _r(tnp.sign(tnp.asarray([-2, 0, 3]))) == ("int64", [-1, 0, 1])
    assert _r(tnp.clip(tnp.arange(5), 1, 3)) == ("int64", [1, 1, 2, 3, 3])
    assert _r(tnp.around(2.567, 1)) == ("float64", 2.6)
    assert tnp.sum(tnp.arange(3, dtype=tnp.int32)).dtype == tf.int64  # NumPy sums int32 as int64
    assert _r(tnp.mean(tnp.arange(4))) == ("float64", 1.5) and _r(tnp.prod(tnp.arange(1, 4))) == ("int64", 6)
    assert _r(tnp.std(tnp.arange(4))) == ("float64", 1.118033988749895) and _r(tnp.var(tnp.arange(4))) == (
        "float64",
        1.25,
    )
    assert _r(tnp.argmax(tnp.asarray([1, 3, 2]))) == ("int64", 1)
    assert _r(tnp.cumsum(tnp.arange(4))) == ("int64", [0, 1, 3, 6])
    assert _r(tnp.sum(tnp.ones([2, 2]), axis=0, keepdims=True)) == ("float64", [[2.0, 2.0]])
    assert _r(tnp.allclose(tnp.ones([2]), 1)) == ("bool", True)
    assert _r(tnp.sum(np.ones([2, 3]))) == ("float64", 6.0) and type(np.sum(tnp.ones([2, 3]))) is np.float64
    assert _r(tnp.sum(tf.ones([2, 3]))) == ("float32", 6.0)
    with tf.GradientTape() as tape:  # differentiable as the TF ops
        w = tnp.asarray([1.0, 2.0])
        tape.watch(w)
        loss = tnp.sum(tnp.square(w))
    assert _r(tape.gradient(loss, w)) == ("float64", [2.0, 4.0])


def test_random_is_tfs_stream():
    tnp.random.seed(3)
    assert tnp.random.randn(2, 3).dtype == tf.float64
    tnp.random.seed(3)
    got = [tnp.random.randn(2, 3), tnp.random.rand(3), tnp.random.randint(0, 10, 4), tnp.random.uniform(-1, 1, (2,))]
    tnp.random.seed(3)
    want = [
        tf.random.normal((2, 3), dtype=tf.float64),
        tf.random.uniform((3,), dtype=tf.float64),
        tf.random.uniform((4,), 0, 10, dtype=tf.int64),
        tf.random.uniform((2,), -1, 1, dtype=tf.float64),
    ]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g.numpy(), w.numpy())


def test_numpy_behavior_promotes_operators(numpy_behavior):
    a, b = tf.constant(1), tf.constant(2.0)
    assert _r(a + b) == ("float64", 3.0) and _r(a * 2.5) == ("float64", 2.5) and _r(a / a) == ("float64", 1.0)
    assert _r(a < b) == ("bool", True) and _r(a // b) == ("float64", 0.0) and _r(a & a) == ("int32", 1)
    assert _r(tf.add(a, a)) == ("int32", 2)  # only the operators promote, as TF
    assert _r(tf.Variable(1.0) + tf.constant(2)) == ("float64", 3.0)
    assert _r(tf.constant(1, tf.int8) + tf.constant(1, tf.uint8)) == ("int16", 2)
    assert _r(tf.constant(1, tf.int32) + 1.5) == ("float64", 2.5)
    assert _r(tf.constant(1.0, tf.float32) + 1.5) == ("float32", 2.5)
    assert _r(tf.constant([1.0, 2.0]) @ tf.constant([1, 2])) == ("float64", 5.0)
    assert _r(tnp.ones([2]) + np.ones([2], np.float32)) == ("float64", [2.0, 2.0])
    values = [tnp.asarray(1, dtype=d) for d in (tnp.int32, tnp.int64, tnp.float32, tnp.float64)]
    pairs = [
        f"{v1.dtype.name} + {v2.dtype.name} => {(v1 + v2).dtype.name}"
        for i, v1 in enumerate(values)
        for v2 in values[i + 1 :]
    ]
    assert pairs == [
        "int32 + int64 => int64",
        "int32 + float32 => float64",
        "int32 + float64 => float64",
        "int64 + float32 => float64",
        "int64 + float64 => float64",
        "float32 + float64 => float64",
    ]
    tnp.experimental_enable_numpy_behavior(prefer_float32=True)
    assert tnp.asarray(1.0).dtype == tf.float32 and tnp.add(1.0, 2.0).dtype == tf.float32
    assert (tf.constant(1) + 1.5).dtype == tf.float64  # int32 with float32 is float64 by NumPy
    assert tnp.random.randn(1).dtype == tf.float64 and tnp.ones([1]).dtype == tf.float64  # (TF: float types stay)
    assert (tf.constant(1.0) + 1.5).dtype == tf.float32


def test_numpy_behavior_methods_and_indexing(numpy_behavior):
    ones = tnp.ones([5, 3], dtype=tnp.float32)
    assert ones.T.shape == (3, 5) and ones.reshape(-1).shape == (15,) and ones.size == 15
    assert tf.constant([1, 2]).reshape(2, 1).shape == (2, 1) and tf.constant([1, 2]).reshape((1, 2)).shape == (1, 2)
    assert _r(tf.constant([[1, 2], [3, 4]]).transpose()) == ("int32", [[1, 3], [2, 4]])
    assert _r(tf.constant([[1, 2], [3, 4]]).max(axis=0)) == ("int32", [3, 4])
    assert _r(tf.constant([1, 2]).clip(1, 1.5)) == ("float64", [1.0, 1.5])
    assert _r(tf.constant([1.5, 2.5]).mean()) == ("float32", 2.0) and tf.constant([1.5]).tolist() == [1.5]
    assert _r(round(tf.constant(2.5))) == ("float32", 2.0) and _r(tnp.sqrt(32).astype(tnp.float32))[0] == "float32"
    x = tnp.arange(24).reshape(2, 3, 4)
    assert _r(x[1, tnp.newaxis, 1:3, ...]) == ("int64", [[[16, 17, 18, 19], [20, 21, 22, 23]]])
    assert _r(x[:, (True, False, True)]) == (
        "int64",
        [[[0, 1, 2, 3], [8, 9, 10, 11]], [[12, 13, 14, 15], [20, 21, 22, 23]]],
    )
    assert _r(x[1, (0, 0, 1), tnp.asarray([0, 1, 1])]) == ("int64", [12, 13, 17])
    assert _r(x[x > 20]) == ("int64", [21, 22, 23])
    with pytest.raises(TypeError):
        tnp.arange(6)[1] = -1
    with pytest.raises(AttributeError):
        tnp.asarray([[1, 2]]).sum()  # not one of TF's methods
