"""tf.random: TF's global/op seed rules, distributions, stateless ops and
tf.random.Generator. Numbers are NumPy Philox streams (not TF's bits), so
tests pin semantics (reproducibility, ranges, dtypes, errors), not values."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.ops import random_ops, registry


@pytest.fixture(autouse=True)
def _no_global_seed():
    tf.random.set_seed(None)
    yield
    tf.random.set_seed(None)


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b))


# ---------------------------------------------------------------- seed rules

def test_no_seed_gives_different_numbers_each_call():
    assert not same(tf.random.uniform([4]), tf.random.uniform([4]))


def test_global_seed_gives_a_reproducible_sequence_and_set_seed_restarts_it():
    tf.random.set_seed(1)
    a1, a2 = tf.random.uniform([3]), tf.random.normal([3])
    tf.random.set_seed(1)
    b1, b2 = tf.random.uniform([3]), tf.random.normal([3])
    assert same(a1, b1) and same(a2, b2)
    assert not same(tf.random.uniform([3]), a1)
    tf.random.set_seed(2)
    assert not same(tf.random.uniform([3]), a1)


def test_op_seed_with_global_seed_continues_its_stream_until_set_seed():
    tf.random.set_seed(1)
    c1, c2 = tf.random.uniform([2], seed=5), tf.random.uniform([2], seed=5)
    assert not same(c1, c2)  # as TF eager: the same op seed twice continues one stream
    tf.random.set_seed(1)
    assert same(tf.random.uniform([2], seed=5), c1)


def test_get_seed_follows_tf_rules():
    assert random_ops.get_seed(None) == (None, None)
    assert random_ops.get_seed(7) == (random_ops.DEFAULT_GRAPH_SEED, 7)
    tf.random.set_seed(3)
    first = random_ops.get_seed(None)
    assert first[0] == 3 and random_ops.get_seed(None) != first
    assert random_ops.get_seed(9) == (3, 9)
    tf.random.set_seed(3)
    assert random_ops.get_seed(None) == first
    tf.random.set_seed(0)
    assert random_ops.get_seed(0) == (0, 2**31 - 1)  # (0, 0) is reserved by TF


def test_seeded_programs_repeat_across_runs():
    prog = ("import tapeflow as tf; tf.random.set_seed(42); a = tf.random.normal([3]); "
            "b = tf.random.uniform([2], seed=1); c = tf.random.shuffle(tf.range(6)); "
            "import tapeflow.random as r; d = r._generator_for(None).random(2); "
            "e = tf.random.uniform([2], seed=9) if False else tf.random.categorical([[0.0, 1.0]], 4); "
            "print(a.numpy().tolist(), b.numpy().tolist(), c.numpy().tolist(), d.tolist(), e.numpy().tolist())")
    op_only = ("import tapeflow as tf; print(tf.random.normal([3], seed=4).numpy().tolist(), "
               "tf.random.normal([3], seed=4).numpy().tolist())")
    script = f"exec({prog!r}); exec({op_only!r})"
    other_run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    # This process is a second "run": set_seed(None) (the fixture) restarts every stream, as a new program would.
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(script)  # noqa: S102 - the same program text in-process
    assert other_run == buf.getvalue() and other_run.strip()


def test_generator_for_is_the_internal_seeded_api():
    tf.random.set_seed(5)
    g1 = tf.random._generator_for(3).random(4)
    g2 = tf.random._generator_for(3).random(4)
    tf.random.set_seed(5)
    assert same(tf.random._generator_for(3).random(4), g1) and not same(g1, g2)
    assert isinstance(tf.random._generator_for(), np.random.Generator)


# ---------------------------------------------------------------- distributions

def test_uniform_float_range_dtype_and_bounds():
    x = tf.random.uniform([2000], minval=-2.0, maxval=3.0, dtype=tf.float64, seed=1)
    assert x.dtype == tf.float64 and x.shape == (2000,)
    v = x.numpy()
    assert v.min() >= -2.0 and v.max() < 3.0 and abs(v.mean() - 0.5) < 0.15
    y = tf.random.uniform([2], maxval=tf.constant([1.0, 10.0]))
    assert y.numpy()[0] < 1.0
    assert tf.random.uniform(tf.constant([2, 1])).shape == (2, 1)
    assert tf.random.uniform(tf.TensorShape([3])).shape == (3,)


def test_uniform_int():
    x = tf.random.uniform([1000], minval=-2, maxval=3, dtype=tf.int64, seed=2)
    assert x.dtype == tf.int64
    assert set(np.unique(x.numpy())) == {-2, -1, 0, 1, 2}
    assert tf.random.uniform([5], maxval=3, dtype=tf.int32).dtype == tf.int32


def test_uniform_errors_match_tf():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random.uniform([2], dtype=tf.int32)
    with pytest.raises(TypeError, match="Cannot convert 0.5"):
        tf.random.uniform([5], minval=0.5, maxval=3, dtype=tf.int32)
    with pytest.raises(ValueError, match="Argument `dtype` got invalid value"):
        tf.random.uniform([2], dtype=tf.bool)
    with pytest.raises(InvalidArgumentError, match=r"Need minval < maxval, got 3 >= 1 \[Op:RandomUniformInt\]"):
        tf.random.uniform([2], minval=3, maxval=1, dtype=tf.int32)
    with pytest.raises(TypeError, match="Cannot convert 0.0"):
        tf.random.normal([2], dtype=tf.int32)


def test_normal_and_truncated_normal_statistics():
    n = tf.random.normal([20000], mean=1.0, stddev=2.0, seed=3).numpy()
    assert abs(n.mean() - 1.0) < 0.06 and abs(n.std() - 2.0) < 0.06
    t = tf.random.truncated_normal([20000], mean=1.0, stddev=2.0, seed=3).numpy()
    assert t.min() >= 1.0 - 4.0 and t.max() <= 1.0 + 4.0
    assert abs(t.std() - 2.0 * 0.8796) < 0.05  # std of N(0,1) truncated to [-2, 2] is 0.8796
    z = tf.random.normal([2], mean=tf.constant([1.0, 2.0]), stddev=0.0)
    assert same(z, [1.0, 2.0])


def test_gradients_flow_into_mean_and_stddev_but_not_into_the_draw():
    mean, std = tf.Variable(1.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.random.normal([3], mean=mean, stddev=std, seed=1))
    gm, gs = tape.gradient(y, [mean, std])
    assert gm.numpy() == 3.0 and np.isfinite(gs.numpy())
    for name in ("RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal", "Multinomial",
                 "RandomShuffle", "StatelessRandomNormal", "StatefulStandardNormalV2"):
        assert not registry.is_differentiable(name)


def test_categorical():
    logits = tf.math.log([[0.5, 0.5], [0.1, 0.9]])
    s = tf.random.categorical(logits, 5)
    assert s.dtype == tf.int64 and s.shape == (2, 5)
    assert tf.random.categorical([[0.0, 0.0]], 3, dtype=tf.int32).dtype == tf.int32
    assert (tf.random.categorical([[-np.inf, 0.0, -np.inf]], 50).numpy() == 1).all()
    freq = tf.random.categorical(tf.math.log([[0.2, 0.3, 0.5]]), 20000, seed=4).numpy()
    np.testing.assert_allclose(np.bincount(freq[0], minlength=3) / 20000, [0.2, 0.3, 0.5], atol=0.02)
    with pytest.raises(InvalidArgumentError, match="logits should be a matrix, got shape"):
        tf.random.categorical([0.0, 0.0], 3)
    with pytest.raises(ValueError, match="Accepted dtypes are"):
        tf.random.categorical([[0.0, 0.0]], 3, dtype=tf.float32)


def test_shuffle_permutes_the_first_axis():
    x = tf.reshape(tf.range(20), (10, 2))
    s = tf.random.shuffle(x, seed=1).numpy()
    assert sorted(s[:, 0].tolist()) == list(range(0, 20, 2)) and (s[:, 1] == s[:, 0] + 1).all()
    assert tf.random.shuffle(tf.constant(1)).numpy() == 1
    tf.random.set_seed(8)
    a = tf.random.shuffle(tf.range(50))
    tf.random.set_seed(8)
    assert same(tf.random.shuffle(tf.range(50)), a)


# ---------------------------------------------------------------- stateless

def test_stateless_same_seed_same_numbers():
    a = tf.random.stateless_normal([3], seed=[1, 2])
    assert same(a, tf.random.stateless_normal([3], seed=[1, 2]))
    assert not same(a, tf.random.stateless_normal([3], seed=[1, 3]))
    u = tf.random.stateless_uniform([3], seed=tf.constant([4, 5], tf.int64), minval=2.0, maxval=3.0)
    assert same(u, tf.random.stateless_uniform([3], seed=[4, 5], minval=2.0, maxval=3.0))
    assert (u.numpy() >= 2.0).all() and (u.numpy() < 3.0).all()
    t = tf.random.stateless_truncated_normal([100], seed=[1, 2]).numpy()
    assert np.abs(t).max() <= 2.0
    c = tf.random.stateless_categorical([[0.0, 0.0]], 10, seed=[7, 7])
    assert same(c, tf.random.stateless_categorical([[0.0, 0.0]], 10, seed=[7, 7])) and c.dtype == tf.int64


def test_stateless_ints_and_errors():
    i = tf.random.stateless_uniform([50], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32)
    assert i.dtype == tf.int32 and i.numpy().min() >= 0 and i.numpy().max() < 10
    full = tf.random.stateless_uniform([4], seed=[1, 2], minval=None, maxval=None, dtype=tf.int64)
    assert full.dtype == tf.int64
    with pytest.raises(ValueError, match="must be both None or not None"):
        tf.random.stateless_uniform([4], seed=[1, 2], dtype=tf.int32)
    with pytest.raises(InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
        tf.random.stateless_normal([2], seed=[1, 2, 3])


def test_split_and_fold_in_are_deterministic():
    s = tf.random.split([1, 2], num=3)
    assert s.shape == (3, 2) and same(s, tf.random.split([1, 2], num=3))
    f = tf.random.fold_in([1, 2], 3)
    assert f.shape == (2,) and same(f, tf.random.fold_in([1, 2], 3)) and not same(f, tf.random.fold_in([1, 2], 4))


# ---------------------------------------------------------------- Generator

def test_generator_from_seed_is_reproducible_and_advances():
    g1, g2 = tf.random.Generator.from_seed(1), tf.random.Generator.from_seed(1)
    a = g1.normal([3])
    assert same(a, g2.normal([3])) and not same(a, g1.normal([3]))
    g1.reset_from_seed(1)
    assert same(g1.normal([3]), a)
    assert not same(tf.random.Generator.from_seed(2).normal([3]), a)


def test_generator_draws():
    g = tf.random.Generator.from_seed(3)
    u = g.uniform([100], minval=1.0, maxval=2.0, dtype=tf.float64)
    assert u.dtype == tf.float64 and u.numpy().min() >= 1.0 and u.numpy().max() < 2.0
    ints = g.uniform([100], maxval=5, dtype=tf.int32)
    assert ints.dtype == tf.int32 and set(ints.numpy().tolist()) <= set(range(5))
    assert np.abs(g.truncated_normal([100]).numpy()).max() <= 2.0
    assert g.uniform_full_int([2], dtype=tf.int64).dtype == tf.int64
    with pytest.raises(ValueError, match="minval and maxval must be both `None` or both non-`None`"):
        g.uniform([3], dtype=tf.int32)


def test_generator_make_seeds_and_split():
    g = tf.random.Generator.from_seed(1)
    seeds = g.make_seeds(3)
    assert seeds.dtype == tf.int64 and seeds.shape == (2, 3) and (seeds.numpy()[1] == 0).all()
    assert g.make_seeds().shape == (2, 1)
    tf.random.stateless_normal([2], seed=seeds[:, 0])  # usable as a stateless seed
    kids = tf.random.Generator.from_seed(1).split(2)
    again = tf.random.Generator.from_seed(1).split(2)
    assert len(kids) == 2 and same(kids[0].normal([2]), again[0].normal([2]))
    assert not same(kids[0].normal([2]), kids[1].normal([2]))


def test_non_deterministic_generators_and_global_generator():
    a = tf.random.Generator.from_non_deterministic_state().normal([4])
    b = tf.random.Generator.from_non_deterministic_state().normal([4])
    assert not same(a, b)
    g = tf.random.get_global_generator()
    assert g is tf.random.get_global_generator()
    mine = tf.random.Generator.from_seed(0)
    tf.random.set_global_generator(mine)
    assert tf.random.get_global_generator() is mine
    restored = tf.random.Generator.from_state(mine.state, 1)
    assert same(restored.normal([3]), mine.normal([3]))


def test_random_ops_are_marked_stateful_for_graph_compilation():
    for op in (random_ops.RANDOM_NORMAL, random_ops.RANDOM_UNIFORM, random_ops.RANDOM_UNIFORM_INT,
               random_ops.TRUNCATED_NORMAL, random_ops.MULTINOMIAL, random_ops.RANDOM_SHUFFLE,
               random_ops.STATEFUL_NORMAL, random_ops.STATEFUL_UNIFORM_INT):
        assert op.extra.get("stateful") is True
    spec = random_ops.RANDOM_NORMAL.shape([], shape=(2, 3), dtype=np.dtype(np.float32), seed=None, seed2=None)
    assert spec == [((2, 3), np.dtype(np.float32))]


def test_fold_in_is_an_op_and_rejects_bad_data():
    assert not registry.is_differentiable("RandomFoldIn")
    with pytest.raises(InvalidArgumentError, match="data must be an integer scalar"):
        tf.random.fold_in([1, 2], tf.constant(1.5))


def _tf_function():
    fn = getattr(tf, "function", None)
    if fn is None:
        graph_function = pytest.importorskip("tapeflow.graph.function")
        fn = graph_function.function
    return fn


def test_traced_functions_follow_tf_graph_seed_rules():
    function = _tf_function()
    tf.random.set_seed(1234)

    def draw():
        return tf.random.uniform([1]), tf.random.normal([1])

    f, g = function(draw), function(lambda: draw())
    f1, f2, g1 = f(), f(), g()
    assert same(f1[0], g1[0]) and same(f1[1], g1[1])  # same sequence per function, as TF
    assert not same(f1[0], f2[0])  # each call continues the op's stream
    tf.random.set_seed(None)
    h = function(lambda: tf.random.uniform([4]))
    assert not same(h(), h())


def test_docstring_examples_run():
    import doctest

    assert doctest.testmod(random_ops, extraglobs={"tf": tf}).failed == 0


def test_shape_may_be_a_runtime_tensor_inside_tf_function():
    function = _tf_function()
    spec_cls = getattr(tf, "TensorSpec", None) or pytest.importorskip("tapeflow.graph.function").TensorSpec
    gen = tf.random.Generator.from_seed(1)

    def draw(shape):
        return (tf.random.uniform(shape), tf.random.normal(shape, mean=1.0),
                tf.random.uniform(shape, maxval=5, dtype=tf.int32), tf.random.stateless_uniform(shape, seed=[1, 2]),
                gen.normal(shape))

    f = function(draw, input_signature=[spec_cls([2], tf.int32)])
    for out in f(tf.constant([2, 3])):
        assert out.shape == (2, 3)
    assert f(tf.constant([1, 4]))[0].shape == (1, 4)


def test_categorical_rows_are_independent_and_zero_mass_is_never_drawn():
    probs = np.array([[0.2, 0.3, 0.5], [0.0, 0.0, 1.0], [0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])
    with np.errstate(divide="ignore"):
        logits = np.log(probs)
    draws = tf.random.categorical(logits, 5000, seed=1).numpy()
    for row, p in zip(draws, probs):
        np.testing.assert_allclose(np.bincount(row, minlength=3) / 5000, p, atol=0.03)
        assert (p[row] > 0).all()
    assert tf.random.categorical(tf.zeros((2, 4)), 0).shape == (2, 0)


def test_same_op_seed_twice_in_a_function_gives_equal_draws_like_tf_docs():
    function = _tf_function()
    tf.random.set_seed(1234)
    foo = function(lambda: (tf.random.uniform([1], seed=1), tf.random.uniform([1], seed=1)))
    a1, b1 = foo()
    a2, b2 = foo()
    assert same(a1, b1) and same(a2, b2) and not same(a1, a2)  # '(A1, A1)' then '(A2, A2)'
