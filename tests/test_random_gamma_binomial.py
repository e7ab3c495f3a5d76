"""tf.random.stateless_gamma / stateless_binomial (TF's CPU kernels on Philox) and keras.random.gamma / binomial /
beta of Keras's seeds: the numbers of TF 2.21 / Keras 3.15.1, pinned."""

import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras


def _list(x):
    return np.asarray(x).tolist()


def test_stateless_gamma_values_per_alpha_branch_and_dtype():
    # alpha below 1 (extra uniform power), exactly 1 (exponential), above 1; the samples of alpha[i] in [:, i]
    assert _list(tf.random.stateless_gamma([3, 4], seed=[1, 2], alpha=[0.3, 1.0, 2.5, 7.0])) == [
        [0.0057749091647565365, 1.8935091495513916, 3.7823472023010254, 7.073713779449463],
        [0.31249719858169556, 0.22994834184646606, 2.4927735328674316, 6.156949043273926],
        [0.027091871947050095, 1.1978732347488403, 3.4828941822052, 4.061456203460693]]
    assert _list(tf.random.stateless_gamma([5], seed=[3, 4], alpha=0.7, dtype=tf.float64)) == [
        0.13134639538865495, 0.4227038655770484, 1.6631871721704572, 0.016093744165373364, 3.6938268726631502]
    assert _list(tf.random.stateless_gamma([2, 2], seed=[5, 6], alpha=[[1.0], [3.0]], beta=[[2.0, 4.0]])) == [
        [0.19861489534378052, 0.9509944915771484], [1.5551246404647827, 0.6020951867103577]]
    big = tf.random.stateless_gamma([2000], seed=[7, 8], alpha=0.4)
    assert float(tf.reduce_sum(tf.cast(big, tf.float64))) == 812.4348550726277
    assert _list(big[:3]) == [0.42188191413879395, 9.138432687905151e-06, 0.3945866525173187]


def test_stateless_binomial_values_inversion_btrs_and_edges():
    # count * p below 10: inversion; above: BTRS; p above 0.5 drawn as count - draw(1 - p)
    assert _list(tf.random.stateless_binomial([2, 3], seed=[1, 2], counts=[5., 20., 100.],
                                              probs=[0.3, 0.7, 0.45])) == [[3, 11, 40], [2, 13, 49]]
    out = tf.random.stateless_binomial([4], seed=[9, 1], counts=50, probs=0.9, output_dtype=tf.int32)
    assert out.dtype == tf.int32 and _list(out) == [45, 42, 47, 43]
    assert _list(tf.random.stateless_binomial([4], seed=[9, 1], counts=[0., 3., 3., 3.],
                                              probs=[0.5, 0.0, 1.0, 0.5])) == [0, 0, 3, 3]


def test_stateless_gamma_binomial_errors_gradient_and_tf_function():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Shape passed in must end with broadcasted shape"):
        tf.random.stateless_gamma([3, 2], seed=[1, 2], alpha=[1.0, 2.0, 3.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Shape passed in must end with broadcasted shape"):
        tf.random.stateless_binomial([3, 2], seed=[1, 2], counts=[1.0, 2.0, 3.0], probs=0.5)
    a = tf.constant([2.0])
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = tf.random.stateless_gamma([3, 1], seed=[1, 2], alpha=a)
    with pytest.raises(NotImplementedError, match="gradient of tf.random.stateless_gamma with respect to alpha"):
        tape.gradient(y, a)
    fn = tf.function(lambda s: tf.random.stateless_gamma([3, 4], seed=s, alpha=[0.3, 1.0, 2.5, 7.0]))
    np.testing.assert_array_equal(fn(tf.constant([1, 2])), tf.random.stateless_gamma(
        [3, 4], seed=[1, 2], alpha=[0.3, 1.0, 2.5, 7.0]))


def test_keras_random_gamma_beta_binomial_seeds_as_keras():
    assert _list(keras.random.gamma((2, 3), 0.5, seed=3)) == [
        [0.23709136247634888, 2.303654193878174, 0.14998821914196014],
        [0.016665469855070114, 0.0005314737791195512, 0.011179158464074135]]
    assert _list(keras.random.beta((2, 3), 0.2, 0.4, seed=3)) == [
        [0.27931421995162964, 0.7167361378669739, 0.02173698879778385],
        [0.026674270629882812, 7.198067208946668e-08, 0.0006495070410892367]]
    out = keras.random.binomial((4,), 10, 0.3, seed=3)
    assert out.dtype == tf.float32 and _list(out) == [2.0, 3.0, 4.0, 2.0]
    gen = keras.random.SeedGenerator(42)
    assert [_list(keras.random.beta((3,), 1.0, 2.0, seed=gen)) for _ in range(2)] == [
        [0.22017861902713776, 0.7568026185035706, 0.2830863296985626],
        [0.009177347645163536, 0.5267996191978455, 0.8620200157165527]]
    assert _list(keras.random.beta((2, 2), [0.5, 2.0], [1.0, 3.0], seed=4)) == [
        [0.3521007299423218, 0.29258161783218384], [0.21642380952835083, 0.18174800276756287]]
    keras.utils.set_random_seed(7)
    assert _list(keras.random.beta((2,), 0.5, 0.5)) == [0.12001396715641022, 0.16720308363437653]
    assert keras.random.gamma((2,), 0.5, dtype="float64", seed=1).dtype == tf.float64
