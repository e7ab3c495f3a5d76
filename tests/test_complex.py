"""Complex numbers: tf.complex, tf.math.real / imag / conj / angle, |z|, and TF's gradient convention
(dL/dre + i dL/dim for a real loss L) through the elementwise ops and matmul. Values pinned from TF 2.21."""

import numpy as np
import pytest

import tapeflow as tf

Z = [1 + 2j, -0.5 + 0.3j]
W = [0.7 - 1.1j, 2 + 0.5j]


def test_complex_dtypes_and_errors():
    assert tf.complex(1.0, 2.0).dtype == tf.complex64
    c = tf.complex(tf.constant([1.0], tf.float64), tf.constant([2.0], tf.float64))
    assert c.dtype == tf.complex128 and c.numpy().tolist() == [1 + 2j]
    np.testing.assert_array_equal(tf.complex(1.0, [3.0, 4.0]).numpy(), [1 + 3j, 1 + 4j])
    with pytest.raises(TypeError, match=r"incorrect types: float32 float64. They must be consistent"):
        tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64))
    with pytest.raises(TypeError, match=r"incorrect types: int32 int32"):
        tf.complex(tf.constant(1), tf.constant(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        tf.complex([1.0, 2.0], [3.0, 4.0, 5.0])
    inf = tf.complex(np.float32(np.inf), np.float32(1.0)).numpy()
    assert inf.real == np.inf and inf.imag == 1.0


def test_parts_of_complex_and_real_inputs():
    z = tf.constant([1 + 2j, 3 - 4j], tf.complex64)
    re, im = tf.math.real(z), tf.math.imag(z)
    assert re.dtype == tf.float32 and re.numpy().tolist() == [1.0, 3.0] and im.numpy().tolist() == [2.0, -4.0]
    assert tf.math.conj(z).numpy().tolist() == [1 - 2j, 3 + 4j]
    assert tf.abs(z).dtype == tf.float32 and tf.abs(z).numpy().tolist() == [np.float32(np.sqrt(5)), 5.0]
    np.testing.assert_allclose(tf.math.angle(z).numpy(), [1.1071487, -0.9272952], rtol=1e-6)
    # real inputs (TF: real and conj return the input, imag zeros, angle 0 or pi)
    x = tf.constant([1, 2])
    assert tf.math.real(x) is x and tf.math.conj(x) is x
    assert tf.math.imag(x).numpy().tolist() == [0, 0] and tf.math.imag(x).dtype == tf.int32
    np.testing.assert_array_equal(tf.math.angle(tf.constant([1.0, -2.0])).numpy(), np.float32([0, np.pi]))
    with pytest.raises(TypeError, match="Expected numeric or variant tensor, got dtype tf.string"):
        tf.math.conj(tf.constant(["a"]))
    with pytest.raises(TypeError, match="input must be a numeric tensor"):
        tf.math.real(tf.constant(["a"]))
    # cast: TF discards the imaginary part
    assert tf.cast(tf.constant([1 + 2j]), tf.float32).numpy().tolist() == [1.0]
    assert tf.cast(tf.constant([1.5, 2.0]), tf.complex64).numpy().tolist() == [1.5 + 0j, 2 + 0j]


def test_printing_as_tf():
    assert str(tf.constant([1 + 2j, 3 - 4j])) == "tf.Tensor([1.+2.j 3.-4.j], shape=(2,), dtype=complex128)"
    assert repr(tf.complex(1.0, 2.0)) == "<tf.Tensor: shape=(), dtype=complex64, numpy=(1+2j)>"


# TF 2.21: gradient w.r.t. z of sum(0.3 * real(f) + 0.7 * imag(f))
_GRADS = {
    "mul": (lambda z, w: z * w, [-0.56 + 0.82j, 0.95 + 1.25j]),
    "div": (lambda z, w: z / w,
        [0.5764705882352941 + 0.09411764705882346j, 0.058823529411764705 + 0.36470588235294116j]),
    "divr": (lambda z, w: w / z, [0.064 + 0.188j, -4.558823529411765 + 0.7352941176470589j]),
    "square": (lambda z, w: tf.square(z), [3.4 + 0.2j, 0.12 - 0.88j]),
    "sqrt": (lambda z, w: tf.sqrt(z), [-0.03772248233808255 + 0.25183920599014553j,
                                        -0.38928441605240255 + 0.31165781215201027j]),
    "exp": (lambda z, w: tf.exp(z),
        [1.390847355276329 - 1.533361070231215j, 0.29930170743237267 + 0.3518359899264186j]),
    "log": (lambda z, w: tf.math.log(z), [-0.22 + 0.26j, -1.0588235294117647 - 0.7647058823529413j]),
    "sin": (lambda z, w: tf.sin(z),
        [-1.5265115573003603 + 2.3384754446593057j, 0.37740761937282863 + 0.5983611541797748j]),
    "cos": (lambda z, w: tf.cos(z), [-2.3214542829599747 - 1.6281646468248359j,
                                      -0.036720595441682186 + 0.4309858958932477j]),
    "tanh": (lambda z, w: tf.tanh(z),
        [0.30707163515366775 - 0.3818320250327967j, 0.40880190064877703 + 0.4964602772847339j]),
    "sigmoid": (lambda z, w: tf.sigmoid(z), [-0.25223615352274265 + 0.22483764921055555j,
                                             0.08423826420937333 + 0.16224614859119216j]),
    "reciprocal": (lambda z, w: tf.math.reciprocal(z), [0.148 + 0.036j, -2.2318339100346023 - 0.19031141868512125j]),
    "rsqrt": (lambda z, w: tf.math.rsqrt(z), [0.10828017886367473 - 0.03527884826279609j,
                                              -0.2974848952370539 + 0.801806561446253j]),
    "pow": (lambda z, w: tf.pow(z, w),
        [-2.557171824885946 - 0.6412924900209802j, 0.03978798503098553 - 0.246155677804639j]),
    "conj": (lambda z, w: tf.math.conj(z), [0.3 - 0.7j, 0.3 - 0.7j]),
    "matmul": (lambda z, w: tf.matmul(tf.reshape(z, (2, 1)), tf.reshape(w, (1, 2))), [0.39 + 2.07j, 0.39 + 2.07j]),
    "matmul_t": (lambda z, w: tf.matmul(tf.reshape(z, (1, 2)), tf.reshape(w, (1, 2)), transpose_b=True),
                 [-0.56 + 0.82j, 0.95 + 1.25j]),
    "prod": (lambda z, w: tf.reduce_prod(z), [0.06 - 0.44j, 1.7 + 0.1j]),
    "mean": (lambda z, w: tf.reduce_mean(z), [0.15 + 0.35j, 0.15 + 0.35j]),
    "tan": (lambda z, w: tf.tan(z),
        [0.039439423220322255 - 0.040651767344969544j, 0.07866639091215732 + 0.8790826953310485j]),
    "log1p": (lambda z, w: tf.math.log1p(z), [-0.1 + 0.25j, -0.1764705882352941 + 1.2941176470588236j]),
}


@pytest.mark.parametrize("case", sorted(_GRADS))
def test_gradient_convention_pinned_from_tf(case):
    fn, want = _GRADS[case]
    z = tf.Variable(Z, dtype=tf.complex128)
    w = tf.constant(W, dtype=tf.complex128)
    with tf.GradientTape() as tape:
        y = fn(z, w)
        loss = tf.reduce_sum(tf.math.real(y) * 0.3 + tf.math.imag(y) * 0.7)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), want, rtol=1e-12)


def test_gradients_of_abs_angle_real_imag_pinned_from_tf():
    z = tf.Variable(Z, dtype=tf.complex128)
    w = tf.constant(W, dtype=tf.complex128)
    with tf.GradientTape(persistent=True) as tape:
        sq = tf.reduce_sum(tf.abs(z) ** 2)
        ab = tf.reduce_sum(tf.abs(z))
        an = tf.reduce_sum(tf.math.angle(z))
        re = tf.reduce_sum(tf.math.real(z * w))
        im = tf.reduce_sum(tf.math.imag(z * w))
        cx = tf.reduce_sum(z * w)  # a complex target: TF sums it with implicit ones
    np.testing.assert_allclose(tape.gradient(sq, z).numpy(), [2 + 4j, -1 + 0.6j])
    np.testing.assert_allclose(tape.gradient(ab, z).numpy(), [0.4472136 + 0.89442719j, -0.85749293 + 0.51449576j],
                               rtol=1e-7)
    np.testing.assert_allclose(tape.gradient(an, z).numpy(), [-0.4 + 0.2j, -0.88235294 - 1.47058824j], rtol=1e-7)
    np.testing.assert_allclose(tape.gradient(re, z).numpy(), [0.7 + 1.1j, 2 - 0.5j])
    np.testing.assert_allclose(tape.gradient(im, z).numpy(), [-1.1 + 0.7j, 0.5 + 2j])
    np.testing.assert_allclose(tape.gradient(cx, z).numpy(), [0.7 + 1.1j, 2 - 0.5j])
    assert tape.gradient(tf.abs(tf.complex(0.0, 0.0)), tf.constant(0j)) is None
    zero = tf.constant([0j, 1j])
    with tf.GradientTape() as t2:
        t2.watch(zero)
        r = tf.reduce_sum(tf.abs(zero))
    np.testing.assert_array_equal(t2.gradient(r, zero).numpy(), [0j, 1j])  # 0 at z == 0 (div_no_nan)


def test_gradient_through_tf_complex_to_float_variables():
    x, y = tf.Variable([1.0, 2.0]), tf.Variable([3.0, -1.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.abs(tf.complex(x, y) * tf.complex(x, y)))
    gx, gy = tape.gradient(loss, [x, y])
    assert gx.dtype == tf.float32
    np.testing.assert_array_equal(gx.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(gy.numpy(), [6.0, -2.0])


def test_matmul_adjoint_of_complex():
    a = tf.constant([[1 + 1j, 2], [0, 1j]])
    b = tf.constant([[1j, 1], [2, 1 - 1j]])
    np.testing.assert_array_equal(tf.matmul(a, b, adjoint_a=True, adjoint_b=True).numpy(),
                                  np.conj(a.numpy()).T @ np.conj(b.numpy()).T)


def test_einsum_tensordot_and_conjugate_transposes_pinned_from_tf():
    z = tf.Variable([[1 + 2j, -0.5 + 0.3j], [0.2 - 1j, 2 + 0j]], dtype=tf.complex128)
    w = tf.constant([[0.7 - 1.1j, 2 + 0.5j], [1j, -1]], dtype=tf.complex128)
    for f in (lambda: tf.einsum("ij,jk->ik", z, w), lambda: tf.tensordot(z, w, 1)):
        with tf.GradientTape() as tape:
            y = f()
            loss = tf.reduce_sum(tf.math.real(y) * 0.3 + tf.math.imag(y) * 0.7)
        np.testing.assert_allclose(tape.gradient(loss, z).numpy(),
                                   [[0.39 + 2.07j, 0.4 - 1j], [0.39 + 2.07j, 0.4 - 1j]])
    zt = tf.transpose(z, conjugate=True)
    np.testing.assert_array_equal(zt.numpy(), np.conj(z.numpy()).T)
    np.testing.assert_array_equal(tf.linalg.adjoint(z).numpy(), zt.numpy())
    with tf.GradientTape() as tape:
        y = tf.transpose(z, conjugate=True) * w
        loss = tf.reduce_sum(tf.math.real(y) * 0.3 + tf.math.imag(y) * 0.7)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(),
                               [[-0.56 - 0.82j, 0.7 + 0.3j], [0.95 - 1.25j, -0.3 + 0.7j]])
    # cumprod: the true gradient (TF 2.21's misses the conjugates: [[-0.06+0.44j, -1.1+1.3j], ...])
    with tf.GradientTape() as tape:
        y = tf.math.cumprod(z, axis=1)
        loss = tf.reduce_sum(tf.math.real(y) * 0.3 + tf.math.imag(y) * 0.7)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(),
                               [[0.36 + 0.26j, 1.7 + 0.1j], [0.9 + 2.1j, -0.64 + 0.44j]])
