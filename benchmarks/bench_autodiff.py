"""Advanced-autodiff benchmarks: Jacobian, Hessian, HVP, 4th derivative.

Run by hand (never by CI)::

    python benchmarks/bench_autodiff.py [--quick]

Each figure is the ratio of tapeflow's time to the analytic NumPy result
computed in the same run (best of several repeats, so background load
matters less; NumPy and tapeflow rounds are interleaved). Functions, as in issue 4:

    f(x) = tanh(W x + b)            full Jacobian (n = 64, 256)
    g(x) = sum(tanh(W x)^2)         full Hessian (n = 64), Hessian-vector product (n = 64)
    h(x) = tanh(x) * exp(sin(x))    4th derivative by four nested tapes

Every tapeflow result is checked against the analytic one before timing.
"""

from __future__ import annotations

import argparse
import sys
import timeit

import numpy as np

import tapeflow as tf


def best(fn, number: int, repeat: int) -> float:
    """Best time per call, in seconds."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


# -- Jacobian of f(x) = tanh(W x + b) ----------------------------------------------

def jacobian_case(n: int, rng):
    wn, bn, xn = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n), rng.standard_normal(n)
    w, b, x = tf.constant(wn), tf.constant(bn), tf.constant(xn)

    def numpy_jac():
        y = np.tanh(wn @ xn + bn)
        return (1.0 - y * y)[:, None] * wn

    def tapeflow_jac():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.linalg.matvec(w, x) + b)
        return tape.jacobian(y, x)

    np.testing.assert_allclose(tapeflow_jac().numpy(), numpy_jac(), rtol=1e-10, atol=1e-12)
    return numpy_jac, tapeflow_jac


# -- Hessian and HVP of g(x) = sum(tanh(W x)^2) -------------------------------------

def _g(w, x):
    return tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(w, x))))


def hessian_case(n: int, rng):
    wn, xn = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)
    w, x = tf.constant(wn), tf.constant(xn)

    def numpy_hess():
        u = np.tanh(wn @ xn)
        d = 2.0 * (1.0 - u * u) * (1.0 - 3.0 * u * u)
        return wn.T @ (d[:, None] * wn)

    def tapeflow_hess():
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = _g(w, x)
            grad = inner.gradient(y, x)
        return outer.jacobian(grad, x)

    np.testing.assert_allclose(tapeflow_hess().numpy(), numpy_hess(), rtol=1e-9, atol=1e-12)
    return numpy_hess, tapeflow_hess


def hvp_case(n: int, rng):
    wn, xn, vn = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n), rng.standard_normal(n)
    w, x, v = tf.constant(wn), tf.constant(xn), tf.constant(vn)

    def numpy_hvp():
        u = np.tanh(wn @ xn)
        d = 2.0 * (1.0 - u * u) * (1.0 - 3.0 * u * u)
        return wn.T @ (d * (wn @ vn))

    def forward_over_backward():
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = _g(w, x)
            grad = tape.gradient(y, x)
        return acc.jvp(grad)

    def backward_over_backward():
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = _g(w, x)
            grad = inner.gradient(y, x)
        return outer.gradient(grad, x, output_gradients=v)

    for fn in (forward_over_backward, backward_over_backward):
        np.testing.assert_allclose(fn().numpy(), numpy_hvp(), rtol=1e-9, atol=1e-12)
    return numpy_hvp, forward_over_backward, backward_over_backward


# -- 4th derivative of h(x) = tanh(x) exp(sin(x)) ------------------------------------

def fourth_case():
    xn = np.float64(0.7)
    x = tf.constant(xn)

    def closed_form():
        # Leibniz: h'''' = sum_k C(4,k) tanh^(k) * exp(sin)^(4-k)
        t = np.tanh(xn)
        s, c = np.sin(xn), np.cos(xn)
        e = np.exp(s)
        sech2 = 1.0 - t * t
        a = (t, sech2, -2.0 * t * sech2, (6.0 * t * t - 2.0) * sech2, (16.0 * t - 24.0 * t ** 3) * sech2)
        cc = c * c
        b = (e, c * e, (cc - s) * e, (cc * c - 3.0 * c * s - c) * e,
             (cc * cc - 6.0 * cc * s - 4.0 * cc + 3.0 * s * s + s) * e)
        return a[0] * b[4] + 4.0 * a[1] * b[3] + 6.0 * a[2] * b[2] + 4.0 * a[3] * b[1] + a[4] * b[0]

    def nested_tapes():
        with tf.GradientTape() as t4:
            t4.watch(x)
            with tf.GradientTape() as t3:
                t3.watch(x)
                with tf.GradientTape() as t2:
                    t2.watch(x)
                    with tf.GradientTape() as t1:
                        t1.watch(x)
                        y = tf.tanh(x) * tf.exp(tf.sin(x))
                    d1 = t1.gradient(y, x)
                d2 = t2.gradient(d1, x)
            d3 = t3.gradient(d2, x)
        return t4.gradient(d3, x)

    np.testing.assert_allclose(nested_tapes().numpy(), closed_form(), rtol=1e-10)
    return closed_form, nested_tapes


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer repeats")
    args = p.parse_args(argv)
    repeat = 3 if args.quick else 7
    rng = np.random.default_rng(0)
    rows = []

    def measure(label, target, numpy_fn, tf_fn, number):
        # Interleaved rounds, best of each: background load hits both alike.
        t_np = t_tf = float("inf")
        for _ in range(repeat):
            t_np = min(t_np, best(numpy_fn, number * 10, 1))
            t_tf = min(t_tf, best(tf_fn, number, 1))
        rows.append((label, t_np, t_tf, t_tf / t_np, target))

    for n, number in ((64, 200), (256, 20)):
        np_fn, tf_fn = jacobian_case(n, rng)
        measure(f"Jacobian of tanh(Wx+b), n={n}", 10, np_fn, tf_fn, number)
    np_fn, tf_fn = hessian_case(64, rng)
    measure("Hessian of sum(tanh(Wx)^2), n=64 (nested tapes + jacobian)", 20, np_fn, tf_fn, 100)
    np_fn, fob, bob = hvp_case(64, rng)
    measure("HVP, n=64, forward-over-backward", 8, np_fn, fob, 200)
    measure("HVP, n=64, backward-over-backward", 8, np_fn, bob, 200)
    np_fn, tf_fn = fourth_case()
    measure("4th derivative of tanh(x)exp(sin(x)), 4 nested tapes", 60, np_fn, tf_fn, 50)

    print(f"{'benchmark':62s} {'NumPy':>10s} {'tapeflow':>10s} {'ratio':>8s} {'target':>7s}")
    for label, t_np, t_tf, ratio, target in rows:
        flag = "" if ratio <= target else "  (over target)"
        print(f"{label:62s} {t_np * 1e6:8.1f}us {t_tf * 1e6:8.1f}us {ratio:7.1f}x {target:6d}x{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
