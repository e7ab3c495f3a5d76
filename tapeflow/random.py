"""``tf.random``: seeded random ops with TF's global/op seed rules.

The seeding semantics are TF's (see ``tapeflow.ops.random_ops``); the
numbers come from NumPy's Philox generator and are not bit-equal to TF's.

For other tapeflow modules (Keras initializers, dropout):
``tapeflow.random._generator_for(seed)`` returns the ``numpy.random.Generator``
a random op with op seed ``seed`` would use, following the same rules, and
``tapeflow.random.get_seed(op_seed)`` returns TF's ``(seed, seed2)`` pair.
A new random *op* (one that must also draw fresh numbers on every call of a
``tf.function``) carries ``tapeflow.ops.random_ops.seed_attrs(seed)`` as attrs
and draws in its kernel from ``random_ops.stream(seed, seed2, instance)``.
"""

from tapeflow.ops.random_ops import (  # noqa: F401
    DEFAULT_GRAPH_SEED, Generator, _generator_for, categorical, fold_in, gamma, get_global_generator, get_seed, normal,
    poisson,
    set_global_generator, set_seed, shuffle, split, stateless_binomial, stateless_categorical, stateless_gamma,
    stateless_poisson,
    stateless_normal,
    stateless_truncated_normal, stateless_uniform, stream, truncated_normal, uniform,
)
from tapeflow.ops.candidate_sampling_ops import log_uniform_candidate_sampler, uniform_candidate_sampler  # noqa: F401


class Algorithm:
    """``tf.random.Algorithm``: the RNG algorithm ids (tapeflow always uses Philox)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


class experimental:  # noqa: N801 - TF's namespace name
    """``tf.random.experimental``: the stateless seed helpers and Generator under their experimental names."""

    stateless_split = staticmethod(split)
    stateless_fold_in = staticmethod(fold_in)
    Generator = Generator
    get_global_generator = staticmethod(get_global_generator)
    set_global_generator = staticmethod(set_global_generator)
    Algorithm = Algorithm
