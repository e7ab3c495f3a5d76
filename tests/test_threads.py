"""BLAS threads chosen per kernel (tapeflow.ops.threads)."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops import threads

BIG = np.ones((256, 256), np.float32)  # 16.7M multiply-adds: above SMALL_WORK
SMALL = np.ones((8, 8), np.float32)
ROW, COLS = np.ones((1, 2048), np.float32), np.ones((2048, 2048), np.float32)  # 4.2M = SMALL_WORK, one row: not split


def big_unsplit():
    return tf.matmul(ROW, COLS)


@pytest.fixture
def blas():
    if threads.blas_threads() is None:
        pytest.skip("NumPy's BLAS cannot be reached (no threadpoolctl, no bundled OpenBLAS)")
    b = threads._blas
    saved = (b.intra, b.auto, b.last, tf.config.threading.get_intra_op_parallelism_threads())
    start = threads.blas_threads()
    yield b
    b.intra, b.auto = saved[0], saved[1]
    tf.config.threading.set_intra_op_parallelism_threads(saved[3])
    b.set(start)
    b.last = start


def test_small_products_run_on_one_thread(blas):
    tf.config.threading.set_intra_op_parallelism_threads(2)
    big_unsplit()
    assert threads.blas_threads() == 2
    tf.matmul(SMALL, SMALL)
    assert threads.blas_threads() == 1
    big_unsplit()
    assert threads.blas_threads() == 2


def test_big_matmuls_split_over_rows_with_one_blas_thread(blas):
    # Python threads instead of OpenBLAS's own: its workers busy-wait between calls.
    tf.config.threading.set_intra_op_parallelism_threads(2)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((300, 256)).astype(np.float32), rng.standard_normal((256, 200)).astype(np.float32)
    c = rng.standard_normal((4, 200, 256)).astype(np.float32)
    big_unsplit()
    threads._POOL = None
    cases = [(a, b, {}), (a.T.copy(), b, {"transpose_a": True}), (a, b.T.copy(), {"transpose_b": True}),
             (c, b, {}), (c, np.swapaxes(c, 1, 2).copy(), {}), (c[:1], np.stack([b] * 3), {})]
    for x, y, kw in cases:
        want = np.matmul(x.T if kw.get("transpose_a") else x, y.T if kw.get("transpose_b") else y)
        np.testing.assert_allclose(tf.matmul(x, y, **kw).numpy(), want, rtol=1e-4, atol=1e-3)
    assert threads._POOL is not None  # the splittable ones ran in two parts
    assert threads.blas_threads() == 2  # the last (broadcast batch) is not split: the intra-op count
    tf.matmul(a, b)
    assert threads.blas_threads() == 1


def test_intra_op_threads_set_the_count_for_big_kernels(blas):
    tf.config.threading.set_intra_op_parallelism_threads(1)
    assert tf.config.threading.get_intra_op_parallelism_threads() == 1
    y = tf.matmul(BIG, BIG)
    assert threads.blas_threads() == 1
    np.testing.assert_array_equal(y.numpy(), BIG @ BIG)
    x = tf.ones((2, 16, 16, 32))
    w = tf.ones((3, 3, 32, 32))
    with tf.GradientTape() as tape:
        tape.watch(w)
        out = tf.nn.conv2d(x, w, 1, "SAME")
    tape.gradient(out, w)
    assert threads.blas_threads() == 1


def test_lapack_kernels_and_the_orthogonal_initializer_choose_their_threads(blas):
    # LAPACK on OpenBLAS's default threads beside a busy neighbour ran 10-80x slower: the decompositions
    # (and Keras's Orthogonal initializer, the RNN layers' default) take their count as a matmul does
    tf.config.threading.set_intra_op_parallelism_threads(2)
    a = np.eye(256, dtype=np.float32) * 2.0
    for run in (lambda: tf.linalg.qr(a), lambda: tf.linalg.cholesky(a), lambda: tf.linalg.inv(a),
                lambda: tf.linalg.svd(a), lambda: tf.linalg.eigh(a), lambda: tf.linalg.solve(a, a),
                lambda: tf.keras.initializers.Orthogonal(seed=1)((256, 256))):
        tf.matmul(SMALL, SMALL)
        assert threads.blas_threads() == 1
        run()
        assert threads.blas_threads() == 2
    tf.linalg.qr(SMALL)  # a small one: one thread
    assert threads.blas_threads() == 1


def test_automatic_count_follows_free_cpus(blas):
    blas.intra = 0
    blas.auto = True
    big_unsplit()
    assert 1 <= threads.blas_threads() <= max(blas.ncpu, 1)
    assert threads.blas_threads() == blas.free_cpus()


def test_an_outside_limit_is_kept(blas):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    tf.config.threading.set_intra_op_parallelism_threads(2)
    big_unsplit()
    with threadpoolctl.threadpool_limits(1):
        tf.matmul(SMALL, SMALL)
        big_unsplit()
        tf.matmul(BIG, BIG)
        assert threads.blas_threads() == 1
    assert threads.blas_threads() == 2
    tf.matmul(SMALL, SMALL)
    assert threads.blas_threads() == 1


def test_user_environment_disables_the_automatic_choice(blas):
    blas.auto = False  # as with OPENBLAS_NUM_THREADS set at import
    tf.config.threading.set_intra_op_parallelism_threads(0)
    before = threads.blas_threads()
    tf.matmul(SMALL, SMALL)
    tf.matmul(BIG, BIG)
    assert threads.blas_threads() == before


def test_kernels_are_wrapped_once_and_keep_their_results():
    from tapeflow.ops import registry

    threads.install()
    k = registry.get_op("BatchMatMulV2").kernel
    assert not hasattr(k.__wrapped__, "__wrapped__")


@pytest.mark.parametrize("winograd", [False, True])
def test_big_convolutions_run_their_chunks_on_the_pool_with_the_same_values(blas, monkeypatch, winograd):
    from tapeflow.ops.nn import _winograd, conv

    monkeypatch.setattr(conv, "_CHUNK_BYTES", 1)  # one image a chunk: 6 chunks
    monkeypatch.setattr(_winograd, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(_winograd, "MIN_WORK", 0 if winograd else float("inf"))
    monkeypatch.setattr(_winograd, "CHANNEL_RATIO", 0)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((6, 16, 16, 16)).astype(np.float32))
    w = tf.constant(rng.standard_normal((3, 3, 16, 32)).astype(np.float32))

    def run(n):
        tf.config.threading.set_intra_op_parallelism_threads(n)
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            y = tf.nn.conv2d(x, w, 1, "SAME")
            loss = tf.reduce_sum(y * y)
        return [y.numpy()] + [g.numpy() for g in tape.gradient(loss, [x, w])]

    one = run(1)
    threads._POOL = None
    three = run(3)  # chunks handed out to this thread and two helpers
    assert threads._POOL is not None and threads._POOL.size == 2
    for a, b in zip(one, three):  # chunk boundaries do not depend on the threads: same bits
        np.testing.assert_array_equal(b, a)
    assert threads._parts(6) == min(threads._blas.ncpu, 6) and threads._parts(1) == 1


def test_large_products_have_the_same_bits_on_any_number_of_threads(blas, monkeypatch):
    # OpenBLAS rounds a row block's products by the block's height, so a product is cut into the same
    # parts (one per CPU) whatever runs them: one intra-op thread, several, or a BLAS limit from outside.
    monkeypatch.setattr(threads._blas, "ncpu", 2)
    rng = np.random.default_rng(0)
    a, w = rng.standard_normal((32, 3136)).astype(np.float32), rng.standard_normal((3136, 128)).astype(np.float32)
    g = rng.standard_normal((32, 128)).astype(np.float32)

    def run(n):
        tf.config.threading.set_intra_op_parallelism_threads(n)
        return [tf.matmul(a, w).numpy(), tf.matmul(a, g, transpose_a=True).numpy(),
                tf.matmul(g, w, transpose_b=True).numpy()]

    one, two = run(1), run(2)
    for x, y in zip(one, two):
        np.testing.assert_array_equal(x, y)


def test_parallel_for_runs_every_chunk_once_and_reraises(blas):
    tf.config.threading.set_intra_op_parallelism_threads(2)
    seen = []
    threads.parallel_for(50, seen.append)
    assert sorted(seen) == list(range(50))

    def fail(i):
        if i == 3:
            raise ValueError("chunk 3")

    with pytest.raises(ValueError, match="chunk 3"):
        threads.parallel_for(8, fail)


def test_big_max_poolings_run_in_image_chunks_with_the_same_values(blas):
    from tapeflow.ops import registry

    rng = np.random.default_rng(0)
    x = np.maximum(rng.standard_normal((12, 16, 16, 128)).astype(np.float32), 0)  # 2 images a chunk
    x[:, :4] = 0.5  # ties, as a constant background gives
    x[5, 3, 3, 7] = np.nan  # one chunk takes the general path
    attrs = {"ksize": (2, 2), "strides": (2, 2), "padding": "VALID"}
    pool, grad, grad_relu = (registry.get_op(n).kernel for n in ("MaxPool", "MaxPoolGrad", "MaxPoolGradRelu"))

    def run(n):
        tf.config.threading.set_intra_op_parallelism_threads(n)
        y = pool(x, **attrs)
        g = rng.standard_normal(y.shape).astype(np.float32)
        return y, grad(x, y, g, **attrs), grad_relu(x, y, g, **attrs)

    state = rng.bit_generator.state
    one = run(1)
    rng.bit_generator.state = state
    threads._POOL = None
    two = run(2)
    assert threads._POOL is not None
    for a, b in zip(one, two):
        np.testing.assert_array_equal(b, a)


@pytest.fixture
def inter():
    saved = tf.config.threading.get_inter_op_parallelism_threads()
    yield
    tf.config.threading.set_inter_op_parallelism_threads(saved)


def _cnn_step():
    """A conv layer's training step as a tf.function: its filter gradient and the Dense kernel's are
    independent of the rest of the backward pass (the compiler hands them to the inter-op thread)."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((8, 12, 12, 8)).astype(np.float32))
    w1 = tf.Variable(rng.standard_normal((3, 3, 8, 32)).astype(np.float32) * 0.1)
    w2 = tf.Variable(rng.standard_normal((3, 3, 32, 32)).astype(np.float32) * 0.1)
    d = tf.Variable(rng.standard_normal((12 * 12 * 32, 64)).astype(np.float32) * 0.01)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME"))
            h = tf.nn.relu(tf.nn.conv2d(h, w2, 1, "SAME"))
            loss = tf.reduce_sum(tf.square(tf.matmul(tf.reshape(h, [8, -1]), d)))
        gs = tape.gradient(loss, [w1, w2, d])
        for v, g in zip([w1, w2, d], gs):
            v.assign_sub(0.001 * g)
        return loss

    return step, x, [w1, w2, d]


def test_compiled_steps_run_independent_heavy_ops_on_the_inter_op_thread_with_the_same_bits(blas, inter):
    results = []
    for n in (1, 0, 2):
        tf.config.threading.set_inter_op_parallelism_threads(n)
        tf.config.threading.set_intra_op_parallelism_threads(2)
        step, x, vs = _cnn_step()
        losses = [float(step(x)) for _ in range(3)]
        results.append((losses, [v.numpy() for v in vs]))
    assert "_spawn(" in step.get_concrete_function(x)._gf.compiled().source
    for losses, values in results[1:]:
        assert losses == results[0][0]
        for a, b in zip(values, results[0][1]):
            np.testing.assert_array_equal(a, b)


def test_spawned_tasks_run_in_order_and_reraise(inter):
    tf.config.threading.set_inter_op_parallelism_threads(2)
    assert threads.inter_op_enabled()
    first = threads.spawn(lambda a: a + 1, np.ones(3))
    second = threads.spawn(lambda a, b: a * b, first, np.full(3, 2.0))  # an earlier task's value
    np.testing.assert_array_equal(second.result(), np.full(3, 4.0))

    def fail():
        raise ValueError("in the task")

    with pytest.raises(ValueError, match="in the task"):
        threads.spawn(fail).result()
    tf.config.threading.set_inter_op_parallelism_threads(1)
    assert not threads.inter_op_enabled()
    assert isinstance(threads.spawn(lambda: 1), threads._Done)
