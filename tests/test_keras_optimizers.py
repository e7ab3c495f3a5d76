"""tf.keras.optimizers: update rules, defaults and API pinned against TF 2.21 / Keras 3.15.

Expected values were produced once with real TensorFlow (same variables,
same gradient sequence); tests never import tensorflow.
"""

from __future__ import annotations

import time
import warnings
import weakref

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import optimizers as K
from tapeflow.keras.optimizers import schedules as S

CONFIGS = {
    "sgd": lambda: K.SGD(),
    "sgd_momentum": lambda: K.SGD(momentum=0.9),
    "sgd_nesterov": lambda: K.SGD(learning_rate=0.1, momentum=0.9, nesterov=True),
    "sgd_wd": lambda: K.SGD(learning_rate=0.1, weight_decay=0.01),
    "sgd_clipvalue": lambda: K.SGD(learning_rate=0.1, clipvalue=0.15),
    "adam": lambda: K.Adam(),
    "adam_amsgrad": lambda: K.Adam(learning_rate=0.01, amsgrad=True),
    "adam_clipnorm": lambda: K.Adam(learning_rate=0.01, clipnorm=0.1),
    "adam_global_clipnorm": lambda: K.Adam(learning_rate=0.01, global_clipnorm=0.1),
    "adamw": lambda: K.AdamW(learning_rate=0.01),
    "rmsprop": lambda: K.RMSprop(),
    "rmsprop_centered": lambda: K.RMSprop(learning_rate=0.01, centered=True),
    "rmsprop_momentum_centered": lambda: K.RMSprop(learning_rate=0.01, momentum=0.5, centered=True),
    "adagrad": lambda: K.Adagrad(learning_rate=0.1),
    "adadelta": lambda: K.Adadelta(learning_rate=1.0),
    "adamax": lambda: K.Adamax(learning_rate=0.01),
    "nadam": lambda: K.Nadam(learning_rate=0.01),
    "sgd_expdecay": lambda: K.SGD(learning_rate=S.ExponentialDecay(0.1, 2, 0.5, staircase=True)),
    "adam_cosine": lambda: K.Adam(learning_rate=S.CosineDecay(0.01, 4)),
    "adafactor": lambda: K.Adafactor(learning_rate=0.01),
    "lion": lambda: K.Lion(learning_rate=0.01),
    "lamb": lambda: K.Lamb(learning_rate=0.01),
    "ftrl": lambda: K.Ftrl(learning_rate=0.1),
    "ftrl_reg": lambda: K.Ftrl(learning_rate=0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02,
                               l2_shrinkage_regularization_strength=0.01, beta=0.1),
}

# Variables after 5 steps in TF 2.21 (w1 = [1, 2, 3], w2 = [[-1]], float32).
TF_AFTER_5_STEPS = {
    'sgd': [[0.9850000143051147, 2.010000467300415, 2.996999979019165], [[-1.0114167928695679]]],
    'sgd_momentum': [[0.9682969450950623, 2.0262880325317383, 2.9926018714904785], [[-1.0369645357131958]]],
    'sgd_nesterov': [[0.5646721124649048, 2.3365938663482666, 2.9034154415130615], [[-1.4468486309051514]]],
    'sgd_wd': [[0.8452097773551941, 2.089820146560669, 2.955090045928955], [[-1.108856201171875]]],
    'sgd_clipvalue': [[0.9300000667572021, 2.075000524520874, 2.984999895095825], [[-1.0674999952316284]]],
    'adam': [[0.9951492547988892, 2.0049996376037598, 2.998565435409546], [[-1.004401445388794]]],
    'adam_amsgrad': [[0.9514926671981812, 2.0499987602233887, 2.9856505393981934], [[-1.0440139770507812]]],
    'adam_clipnorm': [[0.9507076740264893, 2.0491888523101807, 2.9848923683166504], [[-1.0499985218048096]]],
    'adam_global_clipnorm': [[0.9518682956695557, 2.0498812198638916, 2.988284111022949], [[-1.0454546213150024]]],
    'adamw': [[0.9512966275215149, 2.0495951175689697, 2.9850523471832275], [[-1.0438101291656494]]],
    'rmsprop': [[0.986772358417511, 2.0106449127197266, 2.9973535537719727], [[-1.0070018768310547]]],
    'rmsprop_centered': [[0.8497644066810608, 2.1227095127105713, 2.971403121948242], [[-1.076863408088684]]],
    'rmsprop_momentum_centered': [[0.7546539306640625, 2.203662872314453, 2.954130172729492], [[-1.1350383758544922]]],
    'adagrad': [[0.7317089438438416, 2.218970775604248, 2.942330837249756], [[-1.1817216873168945]]],
    'adadelta': [[0.9892182350158691, 2.0072054862976074, 2.998565912246704], [[-1.0038843154907227]]],
    'adamax': [[0.9624704122543335, 2.049999952316284, 2.9856507778167725], [[-1.0323847532272339]]],
    'nadam': [[0.9519058465957642, 2.039597988128662, 2.9899020195007324], [[-1.0271837711334229]]],
    'sgd_expdecay': [[0.9225000739097595, 2.065000057220459, 2.992500066757202], [[-1.0920833349227905]]],
    'adam_cosine': [[0.9755657911300659, 2.0249993801116943, 2.988847494125366], [[-1.0235248804092407]]],
    'adafactor': [[0.8768134117126465, 2.0994114875793457, 2.9789724349975586], [[-1.0315589904785156]]],
    'lion': [[0.9500000476837158, 2.049999952316284, 2.990000009536743], [[-1.0499999523162842]]],
    'lamb': [[0.8756835460662842, 2.12829327583313, 2.9669647216796875], [[-1.051010012626648]]],
    'ftrl': [[-0.22175367176532745, 0.5286624431610107, 0.7659021019935608], [[-0.6471993327140808]]],
    'ftrl_reg': [[-0.19020739197731018, 0.40533679723739624, 0.5978145599365234], [[-0.542212963104248]]],
}
TF_ADAM_FLOAT64 = [0.7000044020509483, -2.1572663764662527]
TF_SGD_LOSS = [0.3240000009536743, -0.3040000796318054]

SCHEDULE_STEPS = [0, 1, 2, 3, 5, 10, 100]
TF_SCHEDULES = {
    'exp': [
        0.10000000149011612, 0.07937005162239075, 0.06299605220556259, 0.05000000074505806, 0.031498026102781296,
        0.009921257384121418, 9.239898776658428e-12,
    ],
    'exp_stair': [
        0.10000000149011612, 0.10000000149011612, 0.10000000149011612, 0.05000000074505806, 0.05000000074505806,
        0.012500000186264515, 1.1641532356165829e-11,
    ],
    'piecewise': [1.0, 1.0, 1.0, 0.5, 0.5, 0.10000000149011612, 0.10000000149011612],
    'poly': [
        0.10000000149011612, 0.08289999514818192, 0.06760000437498093, 0.054099999368190765, 0.032499998807907104,
        0.009999999776482582, 0.009999999776482582,
    ],
    'poly_cycle': [
        0.10000000149011612, 0.07750000059604645, 0.054999999701976776, 0.032499998807907104, 0.04375000298023224,
        0.02500000223517418, 0.009999999776482582,
    ],
    'inverse': [
        0.10000000149011612, 0.07999999821186066, 0.06666667014360428, 0.05714285746216774, 0.04444444552063942,
        0.02857142873108387, 0.003846153849735856,
    ],
    'inverse_stair': [
        0.10000000149011612, 0.10000000149011612, 0.06666667014360428, 0.06666667014360428, 0.05000000074505806,
        0.02857142873108387, 0.003846153849735856,
    ],
    'cosine': [
        0.10000000149011612, 0.09779754281044006, 0.09140576422214508, 0.08145033568143845, 0.05499999597668648,
        0.010000000707805157, 0.010000000707805157,
    ],
    'cosine_warmup': [
        0.0, 0.02500000037252903, 0.05000000074505806, 0.07500000298023224, 0.0975528284907341, 0.03454914316534996,
        0.0,
    ],
    'restarts': [
        0.10000000149011612, 0.07750000059604645, 0.032499995082616806, 0.055000003427267075, 0.04374999925494194,
        0.032116666436195374, 0.012775763869285583,
    ],
}


def _grads(t: int) -> list:
    return [np.array([0.1 * (t + 1), -0.2, 0.3 * (-1) ** t], np.float32), np.array([[0.5 / (t + 1)]], np.float32)]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_values_after_five_steps_equal_tf(name):
    w1, w2 = tf.Variable([1.0, 2.0, 3.0]), tf.Variable([[-1.0]])
    opt = CONFIGS[name]()
    for t in range(5):
        opt.apply_gradients(zip([tf.constant(g) for g in _grads(t)], [w1, w2]))
    exp1, exp2 = TF_AFTER_5_STEPS[name]
    np.testing.assert_allclose(w1.numpy(), exp1, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(w2.numpy(), exp2, rtol=2e-6, atol=1e-7)
    assert w1.dtype == tf.float32
    assert int(opt.iterations.numpy()) == 5


def test_float64_variable_uses_float32_learning_rate_cast_up():
    w = tf.Variable(np.array([1.0, -2.0]))
    opt = K.Adam(learning_rate=0.1)
    for t in range(3):
        opt.apply_gradients([(tf.constant(np.array([0.3, 0.1 * t])), w)])
    assert w.dtype == tf.float64
    np.testing.assert_allclose(w.numpy(), TF_ADAM_FLOAT64, rtol=1e-13)


def test_training_loop_with_tape_matches_tf():
    w = tf.Variable([1.0, -1.0])
    opt = K.SGD(learning_rate=0.1, momentum=0.5)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((w * tf.constant([2.0, 3.0]) - 1.0) ** 2)
        grads = tape.gradient(loss, [w])
        opt.apply_gradients(zip(grads, [w]))
    np.testing.assert_allclose(w.numpy(), TF_SGD_LOSS, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(TF_SCHEDULES))
def test_schedules_equal_tf(name):
    sched = {
        "exp": S.ExponentialDecay(0.1, 3, 0.5),
        "exp_stair": S.ExponentialDecay(0.1, 3, 0.5, staircase=True),
        "piecewise": S.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1]),
        "poly": S.PolynomialDecay(0.1, 10, 0.01, power=2.0),
        "poly_cycle": S.PolynomialDecay(0.1, 4, 0.01, cycle=True),
        "inverse": S.InverseTimeDecay(0.1, 2, 0.5),
        "inverse_stair": S.InverseTimeDecay(0.1, 2, 0.5, staircase=True),
        "cosine": S.CosineDecay(0.1, 10, alpha=0.1),
        "cosine_warmup": S.CosineDecay(0.0, 10, warmup_target=0.1, warmup_steps=4),
        "restarts": S.CosineDecayRestarts(0.1, 3, t_mul=2.0, m_mul=0.5, alpha=0.1),
    }[name]
    got = [float(sched(tf.constant(s, tf.int64))) for s in SCHEDULE_STEPS]
    np.testing.assert_allclose(got, TF_SCHEDULES[name], rtol=2e-6, atol=1e-12)
    assert sched(tf.constant(1, tf.int64)).dtype == tf.float32


def test_defaults_match_keras():
    assert K.Adam().epsilon == 1e-7 and K.Adam().beta_1 == 0.9 and K.Adam().beta_2 == 0.999
    assert K.AdamW().weight_decay == 0.004
    assert float(K.SGD().learning_rate.numpy()) == pytest.approx(0.01)
    assert float(K.Adagrad().learning_rate.numpy()) == pytest.approx(0.001)
    assert K.Adagrad().initial_accumulator_value == 0.1
    assert K.Adadelta().rho == 0.95 and K.RMSprop().rho == 0.9
    assert K.Adam().iterations.dtype == tf.int64
    assert K.Adam().learning_rate.dtype == tf.float32


def test_variables_in_keras_order_and_callable():
    w1, w2 = tf.Variable([1.0, 2.0]), tf.Variable([[3.0]], name="w")
    opt = K.Adam(amsgrad=True)
    opt.apply_gradients([(tf.constant([0.1, 0.2]), w1), (tf.constant([[0.3]]), w2)])
    names = [v.name for v in opt.variables]
    assert names == ["iteration", "learning_rate", "Variable_0_momentum", "Variable_0_velocity", "w_0_momentum",
                     "w_0_velocity", "Variable_0_velocity_hat", "w_0_velocity_hat"]
    assert [v.path for v in opt.variables] == [f"{opt.name}/{n}" for n in names]  # Keras 3: name short, path scoped
    assert opt.variables() == opt.variables
    np.testing.assert_allclose(opt.variables[3].numpy(), [1.0000002e-05, 4.0000006e-05], rtol=1e-7)


def test_none_gradients_skipped_with_warning_and_all_none_raise():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    opt = K.SGD(learning_rate=0.5)
    with pytest.warns(UserWarning, match="Gradients do not exist"):
        opt.apply_gradients([(tf.constant(1.0), a), (None, b)])
    assert float(a.numpy()) == 0.5 and float(b.numpy()) == 2.0
    with pytest.raises(ValueError, match="No gradients provided"):
        opt.apply_gradients([(None, a), (None, b)])


def test_apply_with_and_without_variables():
    v = tf.Variable([1.0, 1.0])
    opt = K.SGD(learning_rate=1.0)
    with pytest.raises(ValueError, match="must already be built"):
        opt.apply([tf.constant([1.0, 1.0])])
    opt.apply([tf.constant([0.5, 0.25])], [v])
    opt.apply([tf.constant([0.5, 0.25])])
    np.testing.assert_allclose(v.numpy(), [0.0, 0.5])
    with pytest.raises(ValueError, match="Unknown variable"):
        opt.apply([tf.constant(1.0)], [tf.Variable(1.0)])


def test_minimize_with_callable_and_with_tape():
    w = tf.Variable([1.0, -1.0])
    opt = K.SGD(learning_rate=0.1, momentum=0.5)
    for _ in range(3):
        opt.minimize(lambda: tf.reduce_sum((w * tf.constant([2.0, 3.0]) - 1.0) ** 2), [w])
    np.testing.assert_allclose(w.numpy(), TF_SGD_LOSS, rtol=1e-6)
    w2 = tf.Variable(2.0)
    opt2 = K.SGD(learning_rate=0.25)
    with tf.GradientTape() as tape:
        loss = w2 * w2
    opt2.minimize(loss, [w2], tape=tape)
    assert float(w2.numpy()) == 1.0
    with pytest.raises(ValueError, match="`tape` is required"):
        opt2.minimize(tf.constant(1.0), [w2])


def test_learning_rate_settable_float_and_schedule():
    v = tf.Variable(1.0)
    opt = K.SGD(learning_rate=0.1)
    opt.learning_rate = 0.5
    opt.apply_gradients([(tf.constant(1.0), v)])
    assert float(v.numpy()) == 0.5
    opt.learning_rate = S.ExponentialDecay(1.0, 1, 0.5)
    opt.apply_gradients([(tf.constant(1.0), v)])  # iterations == 1 -> lr 0.5
    assert float(v.numpy()) == 0.0
    with pytest.raises(TypeError, match="not settable"):
        opt.learning_rate = 0.1
    with pytest.raises(ValueError, match="should be float"):
        K.Adam(learning_rate=1)


def test_constructor_errors_match_keras():
    with pytest.raises(ValueError, match="Only one of"):
        K.SGD(clipnorm=1.0, clipvalue=1.0)
    with pytest.raises(ValueError, match="momentum"):
        K.SGD(momentum=2.0)
    with pytest.raises(ValueError, match="not recognized"):
        K.Adam(bogus=1)
    with pytest.raises(ValueError, match="weight_decay"):
        K.AdamW(weight_decay=None)


def test_get_by_name_and_config_round_trip():
    assert isinstance(K.get("adam"), K.Adam)
    assert isinstance(K.get("RMSprop"), K.RMSprop)
    assert isinstance(tf.optimizers.get("sgd"), tf.optimizers.SGD)
    opt = K.Adam(learning_rate=0.02, amsgrad=True)
    again = K.Adam.from_config(opt.get_config())
    assert again.amsgrad and float(again.learning_rate.numpy()) == pytest.approx(0.02)
    sched_opt = K.SGD(learning_rate=S.ExponentialDecay(0.1, 3, 0.5))
    cfg = K.serialize(sched_opt)
    assert isinstance(K.deserialize(cfg)._learning_rate, S.ExponentialDecay)
    with pytest.raises(ValueError, match="Could not interpret"):
        K.get("nope")


def _sparse_vs_dense(make, steps=4):
    dense_v = tf.Variable(np.ones((5, 3), np.float32))
    sparse_v = tf.Variable(np.ones((5, 3), np.float32))
    od, osp = make(), make()
    for i in range(steps):
        values = np.arange(9, dtype=np.float32).reshape(3, 3) * 0.1 + (10.0 - i)
        # Unique rows: then Keras's sparse rules give the dense result (repeated
        # rows do not: see test_keras_optimizers_sparse.py).
        indices = np.array([0, 2, 4])
        dense = np.zeros((5, 3), np.float32)
        np.add.at(dense, indices, values)
        od.apply_gradients([(tf.constant(dense), dense_v)])
        osp.apply_gradients([(tf.IndexedSlices(tf.constant(values), tf.constant(indices), tf.constant([5, 3])),
                              sparse_v)])
    return dense_v.numpy(), sparse_v.numpy()


@pytest.mark.parametrize("make", [
    lambda: K.SGD(learning_rate=0.1), lambda: K.SGD(momentum=0.5), lambda: K.Adam(learning_rate=0.1),
    lambda: K.Adagrad(learning_rate=0.1), lambda: K.RMSprop(learning_rate=0.1),
    lambda: K.RMSprop(learning_rate=0.1, centered=True), lambda: K.Adadelta(learning_rate=1.0),
    lambda: K.Nadam(), lambda: K.Adamax(), lambda: K.AdamW(), lambda: K.SGD(learning_rate=0.1, clipnorm=1.0),
])
def test_indexed_slices_with_unique_rows_give_the_dense_result(make):
    d, s = _sparse_vs_dense(make)
    np.testing.assert_allclose(s, d, rtol=1e-6, atol=1e-7)


def test_sparse_sgd_touches_only_gradient_rows():
    v = tf.Variable(np.ones((1000, 4), np.float32))
    opt = K.SGD(learning_rate=1.0)
    before = v.numpy().copy()
    grad = tf.IndexedSlices(tf.ones((2, 4)), tf.constant([3, 7]), tf.constant([1000, 4]))
    opt.apply_gradients([(grad, v)])
    changed = np.nonzero((v.numpy() != before).any(axis=1))[0]
    assert changed.tolist() == [3, 7]
    np.testing.assert_array_equal(v.numpy()[3], np.zeros(4))


def test_update_never_mutates_arrays_a_tape_saved():
    v = tf.Variable([1.0, 2.0])
    read = v.value()
    K.Adam().apply_gradients([(tf.constant([1.0, 1.0]), v)])
    np.testing.assert_array_equal(read.numpy(), [1.0, 2.0])


def test_weight_decay_exclusion_and_constraint():
    a, b = tf.Variable(1.0, name="kernel"), tf.Variable(1.0, name="bias")
    opt = K.SGD(learning_rate=0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=["bias"])
    opt.apply_gradients([(tf.constant(0.0), a), (tf.constant(0.0), b)])
    assert float(a.numpy()) == pytest.approx(0.95) and float(b.numpy()) == 1.0
    c = tf.Variable([2.0, -2.0], constraint=lambda x: tf.clip_by_value(x, -1.0, 1.0))
    K.SGD().apply_gradients([(tf.constant([0.0, 0.0]), c)])
    np.testing.assert_array_equal(c.numpy(), [1.0, -1.0])


def test_ema_and_loss_scale_and_accumulation():
    v = tf.Variable(1.0)
    opt = K.SGD(learning_rate=0.1, use_ema=True, ema_momentum=0.5)
    for _ in range(2):
        opt.apply_gradients([(tf.constant(1.0), v)])
    opt.finalize_variable_values([v])
    # avg after step 1 = 0.9; after step 2 = 0.5 * 0.9 + 0.5 * 0.8
    assert float(v.numpy()) == pytest.approx(0.85)
    w = tf.Variable(1.0)
    K.SGD(learning_rate=1.0, loss_scale_factor=4.0).apply_gradients([(tf.constant(2.0), w)])
    assert float(w.numpy()) == 0.5
    u = tf.Variable(0.0)
    acc = K.SGD(learning_rate=1.0, gradient_accumulation_steps=2)
    acc.apply_gradients([(tf.constant(1.0), u)])
    assert float(u.numpy()) == 0.0
    acc.apply_gradients([(tf.constant(3.0), u)])
    assert float(u.numpy()) == -2.0



def _ema_fit(callbacks=(), validation=False, **kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype("float32")
    y = (x @ np.array([[1.0], [2.0], [-1.0]], "float32")).astype("float32")
    m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    opt = K.SGD(0.05, use_ema=True, **kw)
    m.compile(opt, "mse")
    h = m.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False, callbacks=list(callbacks),
              validation_data=(x[:8], y[:8]) if validation else None)
    return h, m.layers[0].kernel.numpy().ravel().tolist(), opt


@pytest.mark.parametrize("kw, loss, kernel", [
    ({}, [3.237202, 1.60403], [0.9648609757423401, 1.0663540363311768, 0.8330410122871399]),
    ({"ema_overwrite_frequency": 3}, [3.536313, 2.956435],
     [0.9654080271720886, 1.0565969944000244, 0.8514479994773865]),
    ({"ema_momentum": 0.5}, [3.237202, 1.60403], [0.9251350164413452, 1.3877010345458984, 0.09539099782705307]),
])
def test_ema_in_fit_as_keras(kw, loss, kernel):
    # the averages update inside the compiled step, and fit ends with finalize_variable_values (values from TF 2.21)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to an eager step
        h, k, opt = _ema_fit(**kw)
    assert np.round(h.history["loss"], 6).tolist() == loss
    np.testing.assert_allclose(k, kernel, atol=1e-6)  # (TF's printed to 6 decimals)
    np.testing.assert_array_equal(k, opt._model_variables_moving_average[0].numpy().ravel())


def test_swap_ema_weights_callback_as_keras():
    h, k, _ = _ema_fit([tf.keras.callbacks.SwapEMAWeights(swap_on_epoch=True)], validation=True)
    assert np.round(h.history["val_loss"], 6).tolist() == [1.998857, 1.94163]  # evaluated on the averages
    np.testing.assert_allclose(k, [0.9648609757423401, 1.0663540363311768, 0.8330410122871399], atol=1e-6)
    m = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    m.compile(K.SGD(), "mse")
    m.fit(np.ones((2, 1)), np.ones((2, 1)), verbose=0)
    with pytest.raises(ValueError, match="SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. "
                                         "Received: use_ema=False"):
        m.evaluate(np.ones((2, 1)), np.ones((2, 1)), verbose=0, callbacks=[tf.keras.callbacks.SwapEMAWeights()])

def test_user_subclass_gets_tensors():
    class Sign(K.Optimizer):
        def __init__(self):
            super().__init__(learning_rate=0.5)

        def update_step(self, gradient, variable, learning_rate):
            assert isinstance(gradient, tf.Tensor)
            self.assign_sub(variable, tf.sign(gradient) * tf.cast(learning_rate, variable.dtype))

    v = tf.Variable([1.0, 1.0])
    Sign().apply_gradients([(tf.constant([3.0, -0.1]), v)])
    np.testing.assert_allclose(v.numpy(), [0.5, 1.5])


def test_gradient_shape_mismatch_is_a_clear_error():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[3\] vs. \[2\]"):
        K.Adam().apply_gradients([(tf.constant([1.0, 2.0, 3.0]), v)])
    assert v.numpy().tolist() == [1.0, 2.0]


def test_trackable_children_lists_all_variables():
    v = tf.Variable([1.0])
    opt = K.Adam()
    opt.apply_gradients([(tf.constant([1.0]), v)])
    kids = opt._trackable_children()["variables"]._trackable_children()
    assert list(kids) == ["0", "1", "2", "3"]
    assert kids["0"] is opt.iterations


def test_adam_step_is_fast():
    vs = [tf.Variable(np.zeros((256, 256), np.float32)) for _ in range(4)]
    gs = [tf.constant(np.ones((256, 256), np.float32)) for _ in vs]
    opt = K.Adam()
    opt.apply_gradients(zip(gs, vs))
    t0 = time.perf_counter()
    for _ in range(20):
        opt.apply_gradients(zip(gs, vs))
    per_step = (time.perf_counter() - t0) / 20
    assert per_step < 0.05, per_step
    warnings.simplefilter("default")


@pytest.mark.parametrize("make", [lambda: K.Adam(0.1), lambda: K.Nadam(0.01),
                                  lambda: K.RMSprop(0.01, momentum=0.5, centered=True),
                                  lambda: K.AdamW(0.01, clipnorm=0.5),
                                  lambda: K.SGD(learning_rate=S.ExponentialDecay(0.1, 2, 0.5), momentum=0.9)])
def test_training_step_under_tf_function_equals_eager(make):
    results = []
    for traced in (False, True):
        w = tf.Variable([1.0, -2.0, 3.0])
        opt = make()
        x = tf.constant([0.5, 1.0, -1.5])

        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.square(w * x - 1.0))
            opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
            return loss

        f = tf.function(step) if traced else step
        for _ in range(4):
            f()
        assert int(opt.iterations.numpy()) == 4
        results.append(w.numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


def test_sparse_step_on_a_large_table_updates_rows_in_place():
    v = tf.Variable(np.zeros((50000, 16), np.float32))
    g = tf.IndexedSlices(tf.ones((32, 16)), tf.constant(np.arange(32) * 5), tf.constant([50000, 16]))
    opt = K.Adagrad(0.1)
    opt.apply_gradients([(g, v)])
    table = weakref.ref(v._value)  # (a weak reference does not count as a reader)
    opt.apply_gradients([(g, v)])
    assert table() is v._value  # no copy of the table: only the gradient's rows were written
    read = v.value()  # a live read: the next step must not change it
    before = read.numpy()[0].copy()
    opt.apply_gradients([(g, v)])
    np.testing.assert_array_equal(read.numpy()[0], before)
    assert not np.array_equal(v.numpy()[0], before)


def test_gather_gradient_sparse_update_under_tf_function():
    results = []
    for traced in (False, True):
        emb = tf.Variable(np.ones((10, 3), np.float32))
        opt = K.Adagrad(0.1)
        ids = tf.constant([1, 3, 1])

        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.gather(emb, ids) ** 2)
            opt.apply_gradients(zip(tape.gradient(loss, [emb]), [emb]))

        f = tf.function(step) if traced else step
        for _ in range(3):
            f()
        results.append(emb.numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
    np.testing.assert_array_equal(results[0][0], [1.0, 1.0, 1.0])


def test_adafactor_factored_matrix_equals_tf():
    m = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3) - 2.0)
    opt = K.Adafactor(learning_rate=0.1)
    for t in range(4):
        opt.apply_gradients([(tf.constant((np.arange(6, dtype=np.float32).reshape(2, 3) - 1.5) * (t + 1) / 4), m)])
    np.testing.assert_allclose(m.numpy(), [[-0.8483182191848755, -0.6805809736251831, -0.23033632338047028],
                                           [0.5807338953018188, 1.4185824394226074, 2.41302752494812]], rtol=2e-6)
    assert [v.shape.as_list() for v in opt.variables[2:]] == [[2], [3], [2, 3]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("graph", [False, True])
def test_adam_fused_dense_step_bit_equal_to_the_op_by_op_rule(dtype, graph, monkeypatch):
    # The dense Adam step runs as one blocked kernel (KerasAdamUpdate inside tf.function); its numbers are
    # Keras's op-by-op rule's, bit for bit, over several blocks and steps, AdamW's decay included.
    from tapeflow.keras.optimizers import adam

    def run(fused, cls):
        monkeypatch.setattr(adam.Adam, "_fused_update", fused)
        w = tf.Variable(np.random.default_rng(0).standard_normal(70000).astype(dtype))
        b = tf.Variable(np.ones(3, dtype))
        opt = cls(learning_rate=0.01)

        def step(i):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.sin(w) ** 2) + tf.reduce_sum(b * b * tf.cast(i, w.dtype))
            opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))

        f = tf.function(step) if graph else step
        for i in range(4):
            f(tf.constant(float(i)))
        return [w.numpy(), b.numpy()] + [v.numpy() for v in opt.variables]

    for cls in (tf.keras.optimizers.Adam, tf.keras.optimizers.AdamW):
        for a, b in zip(run(False, cls), run(True, cls)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(not __import__("tapeflow.ops._fpu", fromlist=["_load"])._load(),
                    reason="flush-to-zero is set only on x86-64 glibc Linux")
@pytest.mark.parametrize("compiled", [False, True])
def test_adam_flushes_subnormals_to_zero_as_tf(compiled):
    # TF's kernels run with flush-to-zero and denormals-are-zero: a subnormal input counts as 0 and a
    # subnormal result is 0 (m: 5e-38 stays, its 0.1 * -5e-38 step is subnormal). Bits from TF 2.21.
    v = tf.Variable(np.array([1.0, 2.0, -3.0, 0.5], np.float32))
    opt = K.Adam(learning_rate=0.001)
    opt.build([v])
    opt._momentums[0].assign(np.array([5e-38, 1e-40, -1e-40, 0.01], np.float32))
    opt._velocities[0].assign(np.array([1e-6, 1e-6, 1e-6, 1e-40], np.float32))
    g = tf.constant(np.array([0.0, 0.0, 0.0, 1e-22], np.float32))
    step = tf.function(lambda: opt.apply_gradients([(g, v)])) if compiled else lambda: opt.apply_gradients([(g, v)])
    step()
    bits = {name: np.asarray(x.numpy()).view(np.uint32).tolist()
            for name, x in (("m", opt._momentums[0]), ("v", opt._velocities[0]), ("w", v))}
    assert bits == {"m": [25697514, 0, 0, 1007908028], "v": [897979745, 897979745, 897979745, 0],
                    "w": [1065353216, 1073741824, 3225419776, 3252661942]}
    assert np.float32(1e-30) * np.float32(1e-10) == np.float32(1e-40)  # (NumPy's own mode is back)
