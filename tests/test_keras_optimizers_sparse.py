"""Keras optimizers with sparse (IndexedSlices) gradients whose indices repeat.

Keras 3 with the TensorFlow backend applies elementwise ops to the slices one
by one (``ops.square`` squares each repeated slice) and sums them per row only
when they meet a dense tensor or are scattered into a variable, so e.g. Adam's
second moment gets the sum of squares, not the square of the sum. The values
below were produced by TF 2.21 / Keras 3.15 running the same steps as ``_run``
(eager and under tf.function give the same numbers there).
"""

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras.optimizers

CASES = {
    "sgd": lambda: K.SGD(0.1), "sgd_mom": lambda: K.SGD(0.1, momentum=0.9),
    "sgd_nesterov": lambda: K.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: K.Adam(0.1), "adam_ams": lambda: K.Adam(0.1, amsgrad=True),
    "adamw": lambda: K.AdamW(0.1), "rmsprop": lambda: K.RMSprop(0.1),
    "rmsprop_centered": lambda: K.RMSprop(0.1, centered=True), "rmsprop_mom": lambda: K.RMSprop(0.1, momentum=0.5),
    "adagrad": lambda: K.Adagrad(0.1), "nadam": lambda: K.Nadam(0.1), "adadelta": lambda: K.Adadelta(1.0),
    "ftrl": lambda: K.Ftrl(0.1, l1_regularization_strength=0.01, l2_shrinkage_regularization_strength=0.1),
    "adamax": lambda: K.Adamax(0.1), "lion": lambda: K.Lion(0.1),
    "sgd_clipnorm": lambda: K.SGD(0.1, clipnorm=1.0), "adam_clipnorm": lambda: K.Adam(0.1, clipnorm=1.0),
    "adam_global": lambda: K.Adam(0.1, global_clipnorm=1.0), "adam_clipvalue": lambda: K.Adam(0.1, clipvalue=0.5),
    "lamb": lambda: K.Lamb(0.1), "adafactor": lambda: K.Adafactor(0.1),
}
STEPS = {"lamb": 4, "adafactor": 4}

# TF 2.21 / Keras 3.15: the (6, 2) variable after the steps (row-major).
EXPECTED = {
    "sgd": [-0.4, -0.3, -0.24110001, -0.40825, 0.0, 0.1, -0.25210002, 0.2178, 0.15339997, 0.5411, 0.6, 0.7],
    "sgd_mom": [-0.4, -0.3, -0.27053005, -0.62897503, 0.0, 0.1, -0.57583004, 0.15894, -0.023180008, 0.57053, 0.6,
        0.7],
    "sgd_nesterov": [-0.4, -0.3, -0.30457702, -0.88432753, 0.0, 0.1, -0.95034707, 0.09084602, -0.227462, 0.60457695,
        0.6, 0.7],
    "adam": [-0.4, -0.3, -0.25019822, -0.27720064, 0.0, 0.1, -0.09909073, 0.0009118542, 0.10090976, 0.799085, 0.6,
        0.7],
    "adam_ams": [-0.4, -0.3, -0.25019822, -0.27720064, 0.0, 0.1, -0.09909073, 0.0009118542, 0.10090976, 0.799085,
        0.6, 0.7],
    "adamw": [-0.3995202, -0.29964015, -0.24993818, -0.2770097, 0.0, 0.09988005, -0.09921081, 0.00067180395,
        0.10054978, 0.79836535, 0.5992803, 0.6991603],
    "rmsprop": [-0.4, -0.3, -0.33599094, -0.58005, 0.0, 0.1, -0.6102597, -0.51025426, -0.41025922, 1.3102373, 0.6,
        0.7],
    "rmsprop_centered": [-0.4, -0.3, -0.3363244, -0.5954697, 0.0, 0.1, -0.69329715, -0.5932903, -0.49329656,
        1.3932691, 0.6, 0.7],
    "rmsprop_mom": [-0.4, -0.3, -0.39761382, -0.79757977, 0.0, 0.1, -0.9774206, -0.8774117, -0.7774198, 1.6773841,
        0.6, 0.7],
    "adagrad": [-0.4, -0.3, -0.23950434, -0.24702603, 0.0, 0.1, -0.04685463, 0.12744625, 0.16442114, 0.6119597, 0.6,
        0.7],
    "nadam": [-0.4, -0.3, -0.24659449, -0.26447925, 0.0, 0.1, -0.077618755, 0.02238135, 0.12238125, 0.7776185, 0.6,
        0.7],
    "adadelta": [-0.4, -0.3, -0.20082371, -0.10290769, 0.0, 0.1, 0.19509225, 0.29509234, 0.39509225, 0.50490737,
        0.6, 0.7],
    "ftrl": [0.01942449, 0.013874635, -0.1345043, -0.21813907, 0.0, -0.0027749273, -0.10563358, -0.13587499,
        -0.036542602, 0.0980596, -0.030524198, -0.03607405],
    "adamax": [-0.4, -0.3, -0.22674337, -0.19329076, 0.0, 0.1, -0.06743345, 0.032566644, 0.13256654, 0.7674333, 0.6,
        0.7],
    "lion": [-0.4, -0.3, -0.5, -0.4, 0.0, 0.1, -0.1, 1.4901161e-08, 0.10000002, 0.8000001, 0.6, 0.7],
    "sgd_clipnorm": [-0.4, -0.3, -0.21586102, -0.21895774, 0.0, 0.1, 0.025528647, 0.26827797, 0.3048338, 0.515861,
        0.6, 0.7],
    "adam_clipnorm": [-0.4, -0.3, -0.25035018, -0.27773747, 0.0, 0.1, -0.099996716, 8.866191e-06, 0.10000429,
        0.79998434, 0.6, 0.7],
    "adam_global": [-0.4, -0.3, -0.49998432, -0.39999616, 0.0, 0.1, -0.099996716, 8.866191e-06, 0.10000432,
        0.79998434, 0.6, 0.7],
    "adam_clipvalue": [-0.4, -0.3, -0.28169245, -0.2732034, 0.0, 0.1, -0.09999649, 0.0009118542, 0.100003526,
        0.799085, 0.6, 0.7],
    "adam_f64": [-0.4, -0.30000000000000004, -0.25019819849441577, -0.27720067299050294, 0.0, 0.09999999999999998,
        -0.09909077178952315, 0.000911811485090841, 0.10090970659849013, 0.799085031248128, 0.6,
        0.7000000000000001],
    "rmsprop_f64": [-0.4, -0.30000000000000004, -0.3359908903463381, -0.5800500328331751, 0.0, 0.09999999999999998,
        -0.6102596925850422, -0.5102542270438624, -0.4102592513911929, 1.3102372708493517, 0.6, 0.7000000000000001],
    "adadelta_f64": [-0.4, -0.30000000000000004, -0.20082369971233696, -0.10290767707776025, 0.0,
        0.09999999999999998, 0.19509223395969696, 0.2950923383034805, 0.3950922423827848, 0.5049073380104595, 0.6,
        0.7000000000000001],
    "lamb": [-0.4, -0.3, -0.24185109, -0.2477349, 0.0, 0.1, -0.0493566, 0.050643496, 0.15064344, 0.7493564, 0.6,
        0.7],
    "adafactor": [-0.4, -0.3, -0.21638715, -0.23265035, 0.0, 0.1, -0.025575094, 0.2557337, 0.17384623, 0.54068154,
        0.6, 0.7],
}


def _run(name, dtype, traced):
    v = tf.Variable((np.arange(12).reshape(6, 2) * 0.1 - 0.4).astype(dtype))
    opt = CASES[name.replace("_f64", "")]()

    def step(vals, idx):
        opt.apply_gradients([(tf.IndexedSlices(vals, idx, tf.constant([6, 2])), v)])

    f = tf.function(step) if traced else step
    for s in range(STEPS.get(name, 3)):
        vals = np.array([[0.3, -0.7], [1.1, 0.2], [-0.45, 0.9], [0.6, -0.1], [0.25, 0.55]], dtype) * (1 + 0.37 * s)
        f(tf.constant(vals), tf.constant(np.array([1, 3, 1, 4, 1], np.int32)))  # row 1 three times
    return v.numpy().ravel()


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "tf_function"])
@pytest.mark.parametrize("name", list(CASES))
def test_repeated_indices_match_tf(name, traced):
    np.testing.assert_allclose(_run(name, "float32", traced), np.float32(EXPECTED[name]), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["adam_f64", "rmsprop_f64", "adadelta_f64"])
def test_repeated_indices_float64_match_tf(name):
    for traced in (False, True):
        out = _run(name, "float64", traced)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out, EXPECTED[name], rtol=1e-12, atol=1e-15)


def test_embedding_adam_repeated_ids_match_tf():
    emb = tf.keras.layers.Embedding(5, 2, embeddings_initializer=tf.keras.initializers.Constant(0.5))
    ids = tf.constant([[1, 1, 2], [1, 3, 3]])
    opt = tf.keras.optimizers.Adam(0.1)

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(emb(ids) * [1.0, 2.0]) ** 2 / 10
        grads = tape.gradient(loss, emb.trainable_variables)
        assert isinstance(grads[0], tf.IndexedSlices)
        opt.apply_gradients(zip(grads, emb.trainable_variables))

    step()
    tf.function(step)()
    np.testing.assert_allclose(emb.embeddings.numpy().ravel(),
                               [0.5, 0.5, 0.15781975, 0.15781963, 0.30244228, 0.30244213, 0.22061105, 0.22061093,
                                0.5, 0.5], rtol=1e-6)


@pytest.mark.parametrize("make", [lambda: K.SGD(0.1), lambda: K.Adagrad(0.1), lambda: K.RMSprop(0.1),
                                  lambda: K.Adadelta(1.0), lambda: K.Adafactor(0.1)])
def test_row_only_updates_keep_other_rows(make):
    # As Keras (scatter_sub / scatter_add of the slices): untouched rows keep
    # their values exactly, even where a dense step would move them.
    v = tf.Variable(np.linspace(-1, 1, 12).reshape(6, 2).astype(np.float32))
    before = v.numpy().copy()
    opt = make()
    for _ in range(2):
        opt.apply_gradients([(tf.IndexedSlices(tf.ones((3, 2)), tf.constant([1, 4, 1]), tf.constant([6, 2])), v)])
    changed = np.nonzero((v.numpy() != before).any(axis=1))[0]
    assert changed.tolist() == [1, 4]


def test_loss_scale_factor_with_sparse_gradient_raises_type_error_as_keras():
    v = tf.Variable(np.zeros((3, 2), np.float32))
    opt = K.Adagrad(0.1, loss_scale_factor=4.0)
    with pytest.raises(TypeError, match="IndexedSlices"):
        opt.apply_gradients([(tf.IndexedSlices(tf.ones((2, 2)), tf.constant([0, 0]), tf.constant([3, 2])), v)])


ACCUMULATION = {  # TF 2.21 / Keras 3.15, 6 apply calls; the rules read iterations // steps
    "adam": (lambda: K.Adam(0.1, gradient_accumulation_steps=2), 3,
             [-0.4, -0.3, -0.49644348, -0.39644772, 0.0, 0.1, -0.096447945, 0.0035540834, 0.10355242, 0.79644346,
              0.6, 0.7]),
    "nadam": (lambda: K.Nadam(0.1, gradient_accumulation_steps=3), 2,
              [-0.4, -0.3, -0.39920345, -0.29920357, 0.0, 0.1, 0.0007964298, 0.10079649, 0.20079646, 0.6992035,
               0.6, 0.7]),
    "sgd_ema": (lambda: K.SGD(0.1, gradient_accumulation_steps=2, use_ema=True, ema_overwrite_frequency=2), 3,
                [-0.4, -0.3, -0.2386925, -0.39019373, 0.0, 0.1, -0.22561751, 0.222615, 0.16784503, 0.53869253,
                 0.6, 0.7]),
    "adam_schedule": (lambda: K.Adam(K.schedules.ExponentialDecay(0.1, 1, 0.5), gradient_accumulation_steps=2), 3,
                      [-0.4, -0.3, -0.2653706, -0.16537194, 0.0, 0.1, 0.13462798, 0.23462862, 0.3346281, 0.5653706,
                       0.6, 0.7]),
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", list(ACCUMULATION))
def test_gradient_accumulation_matches_tf(name, sparse):
    make, iterations, expected = ACCUMULATION[name]
    v = tf.Variable((np.arange(12).reshape(6, 2) * 0.1 - 0.4).astype(np.float32))
    opt = make()
    for s in range(6):
        vals = np.array([[0.3, -0.7], [1.1, 0.2], [-0.45, 0.9], [0.6, -0.1], [0.25, 0.55]], np.float32) * (1 + 0.37 * s)
        if sparse:
            g = tf.IndexedSlices(tf.constant(vals), tf.constant([1, 3, 1, 4, 1]), tf.constant([6, 2]))
        else:
            dense = np.zeros((6, 2), np.float32)
            np.add.at(dense, [1, 3, 1, 4, 1], vals)
            g = tf.constant(dense)
        opt.apply_gradients([(g, v)])
    assert int(opt.iterations.numpy()) == iterations  # apply calls // gradient_accumulation_steps, as Keras
    np.testing.assert_allclose(v.numpy().ravel(), np.float32(expected), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("repeats", [3, 40])  # 40: past the vectorized rounds (np.add.at then)
@pytest.mark.parametrize("make", [lambda: K.SGD(0.1), lambda: K.Adagrad(0.1), lambda: K.Adam(0.1),
                                  lambda: K.RMSprop(0.1, centered=True), lambda: K.Adadelta(1.0)])
def test_eager_sparse_sums_are_bitwise_the_traced_ones(make, repeats):
    # Eagerly the repeated slices are added round by round; traced, by
    # tensor_scatter_nd_* / unsorted_segment_sum (np.add.at): same order per row.
    rng = np.random.default_rng(repeats)
    idx = np.concatenate([np.full(repeats, 2), [0, 5, 0, 7], rng.integers(0, 9, 20)]).astype(np.int32)
    rng.shuffle(idx)
    vals = rng.standard_normal((idx.size, 3)).astype(np.float32)
    out = []
    for traced in (False, True):
        v = tf.Variable(np.linspace(-1, 1, 27).reshape(9, 3).astype(np.float32))
        opt = make()

        def step():
            opt.apply_gradients([(tf.IndexedSlices(tf.constant(vals), tf.constant(idx), tf.constant([9, 3])), v)])

        f = tf.function(step) if traced else step
        for _ in range(2):
            f()
        out.append(v.numpy())
    np.testing.assert_array_equal(out[0], out[1])


@pytest.mark.parametrize("make, expected", [
    (lambda: K.Adagrad(0.1, initial_accumulator_value=0.0, epsilon=0.0), 0.9),
    (lambda: K.RMSprop(0.1, epsilon=0.0), 0.6837722),
    (lambda: K.Adadelta(1.0, epsilon=0.0), 1.0),
])
def test_epsilon_zero_sparse_division(make, expected):
    # Every row in the gradient: Keras divides the slices by their rows (TF
    # 2.21 values). Rows left out have a 0 denominator, where Keras's
    # IndexedSlices division writes NaN there (or fails on repeated indices):
    # tapeflow raises NotImplementedError rather than differ silently.
    v = tf.Variable(np.ones((4, 2), np.float32))
    grad = tf.IndexedSlices(tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2) + 1), tf.constant([0, 1, 2, 3]),
                            tf.constant([4, 2]))
    make().apply_gradients([(grad, v)])
    np.testing.assert_allclose(v.numpy(), np.full((4, 2), expected, np.float32), rtol=1e-6)
    w = tf.Variable(np.ones((4, 2), np.float32))
    with pytest.raises(NotImplementedError, match="epsilon=0"):
        make().apply_gradients([(tf.IndexedSlices(tf.ones((2, 2)), tf.constant([1, 3]), tf.constant([4, 2])), w)])


@pytest.mark.parametrize("traced", [False, True])
def test_optimizer_assign_with_indexed_slices_scatters_rows_as_keras(traced):
    # Keras's assign / assign_add / assign_sub of IndexedSlices are
    # scatter_update / scatter_add / scatter_sub (TF 2.21 values).
    expected = {"assign": [2.5, 3.5, 2.0, 3.0, 0.5, 1.5, 6.0, 7.0],
                "assign_add": [2.5, 4.5, 2.0, 3.0, 4.5, 6.5, 6.0, 7.0],
                "assign_sub": [-2.5, -2.5, 2.0, 3.0, 3.5, 3.5, 6.0, 7.0]}
    for how, want in expected.items():
        v = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2))
        opt = K.SGD(0.1)
        opt.build([v])

        def f():
            getattr(opt, how)(v, tf.IndexedSlices(tf.constant([[0.5, 1.5], [2.5, 3.5]]), tf.constant([2, 0]),
                                                  tf.constant([4, 2])))

        (tf.function(f) if traced else f)()
        np.testing.assert_array_equal(v.numpy().ravel(), want)
