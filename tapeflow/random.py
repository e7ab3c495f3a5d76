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

from typing import Any

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


from tapeflow.framework.missing import NotBuilt as _NotBuilt  # noqa: E402
from tapeflow.framework.missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("tf.random", frozenset({
    "all_candidate_sampler", "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler",
    "stateless_parameterized_truncated_normal",
}))


def create_rng_state(seed: Any, alg: Any) -> Any:
    """``tf.random.create_rng_state``: the int64 state a ``tf.random.Generator`` of algorithm ``alg`` starts from
    (Philox: 3 words, ThreeFry: 2): an int is cut into 64-bit words, lowest first; a vector is cut to the state
    size or left-padded with zeros."""
    import numpy as np

    from tapeflow.framework.tensor import Tensor, convert_to_tensor

    names = {"philox": 1, "threefry": 2, "auto_select": 3}
    a = names.get(alg.lower(), alg) if isinstance(alg, str) else int(getattr(alg, "value", alg))
    if a not in (1, 2, 3):
        raise ValueError(f"Unsupported algorithm id: {alg}")
    size = 2 if a == 2 else 3
    if isinstance(seed, Tensor):
        seed = seed.numpy()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed, words = int(seed), []
        for _ in range(size):
            words.append(seed & ((1 << 64) - 1))
            seed >>= 64
    else:
        words = [int(x) & ((1 << 64) - 1) for x in np.asarray(seed).reshape(-1)[:size]]
        words = [0] * (size - len(words)) + words
    return convert_to_tensor(np.asarray(words, dtype=np.uint64).view(np.int64))


class experimental:  # noqa: N801 - TF's namespace name
    """``tf.random.experimental``: the stateless seed helpers and Generator under their experimental names."""

    stateless_split = staticmethod(split)
    create_rng_state = staticmethod(create_rng_state)
    index_shuffle = _NotBuilt("tf.random.experimental.index_shuffle")
    stateless_shuffle = _NotBuilt("tf.random.experimental.stateless_shuffle")
    stateless_fold_in = staticmethod(fold_in)
    Generator = Generator
    get_global_generator = staticmethod(get_global_generator)
    set_global_generator = staticmethod(set_global_generator)
    Algorithm = Algorithm
