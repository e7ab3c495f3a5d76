"""Mixing datasets: ``choose_from_datasets``, ``sample_from_datasets`` and ``rejection_resample``.

``sample_from_datasets`` is TF's: a selector that draws each choice with
``stateless_multinomial`` seeded by two ``Dataset.random`` words (Philox, as
TF's RandomDataset), read by a directed interleave; a seeded run gives TF's
order. ``rejection_resample`` follows TF's algorithm with NumPy's stream, so
its accepted elements differ from TF's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapeflow.data.dataset import Dataset, _call, _common_spec, _to_tensors
from tapeflow.framework import errors
from tapeflow.framework.tensor import Tensor


def _rng_factory(seed: int | None) -> Callable[[], np.random.Generator]:
    from tapeflow.ops import random_ops

    g, o = random_ops.get_seed(seed)
    epoch = [0]

    def make() -> np.random.Generator:
        epoch[0] += 1
        if g is None:
            return np.random.default_rng()
        return np.random.default_rng([int(g) & 0xFFFFFFFF, int(o) & 0xFFFFFFFF, epoch[0]])

    return make


def _check_datasets(datasets: Any, what: str) -> list:
    datasets = list(datasets)
    if not datasets:
        raise ValueError(f"Invalid `datasets`. `datasets` should not be empty ({what}).")
    for d in datasets:
        if not isinstance(d, Dataset):
            raise TypeError(f"Invalid `datasets`. `datasets` must be a list of `tf.data.Dataset`s, got "
                            f"{type(d).__name__} ({what}).")
    return datasets


def _spec_of_all(datasets: list) -> Any:
    spec = datasets[0].element_spec
    for d in datasets[1:]:
        spec = _common_spec(spec, d.element_spec)
    return spec


def _data_seeds(seed: int | None) -> tuple:
    """tf.data's seeds for a kernel: ``get_seed``'s pair, or a random pair where TF passes (0, 0)."""
    from tapeflow.ops import random_ops

    g, o = random_ops.get_seed(seed)
    if g is None:
        return tuple(int(v) for v in np.random.SeedSequence().generate_state(2, np.uint64))
    return int(g), int(o)


class _Random(Dataset):
    """TF's RandomDataset: int64 scalars, the uint32 words of one Philox stream; each iteration starts the same
    stream again unless ``rerandomize_each_iteration`` (then the next seed pair of TF's seed generator)."""

    _tf_name = "_RandomDataset"

    def __init__(self, seed: int | None, rerandomize: bool) -> None:
        from tapeflow.ops import philox

        self._seeds = _data_seeds(seed)
        self._pairs = philox.seed_pairs(*self._seeds) if rerandomize else None

    def _cardinality(self) -> int:
        return -1

    def _words(self) -> Iterator[int]:
        from tapeflow.ops import philox

        stream = philox.WordStream(*(next(self._pairs) if self._pairs is not None else self._seeds))
        while True:
            yield stream()

    def _elements(self) -> Iterator:
        for w in self._words():
            yield np.int64(w)

    def _template(self) -> Any:
        return np.int64(0)

    @property
    def element_spec(self) -> Any:
        from tapeflow.framework import dtypes
        from tapeflow.framework.tensor_spec import TensorSpec

        return TensorSpec([], dtypes.int64)


def random(seed: int | None = None, rerandomize_each_iteration: bool | None = None) -> Dataset:
    return _Random(seed, bool(rerandomize_each_iteration))


class _Choose(Dataset):
    """TF's DirectedInterleave: each selector value names the input to read; an exhausted input is skipped
    (or ends the dataset with ``stop_on_empty``), and the dataset ends when every input is exhausted."""

    def __init__(self, datasets: list, choices: Dataset, stop_on_empty: bool) -> None:
        self._datasets, self._choices, self._stop = datasets, choices, stop_on_empty

    def _elements(self) -> Iterator:
        yield from self._interleave(self._choices._elements())

    def _interleave(self, choices: Iterator) -> Iterator:
        its = [iter(d._elements()) for d in self._datasets]
        live = [True] * len(its)
        active = len(its)
        for c in choices:
            i = int(c)
            if not 0 <= i < len(its):
                raise errors.InvalidArgumentError(
                    f"choose_from_datasets: selector index {i} is out of range [0, {len(its)}). "
                    "[Op:DirectedInterleaveDataset]")
            if not live[i]:
                continue
            try:
                e = next(its[i])
            except StopIteration:
                live[i] = False
                active -= 1
                if self._stop or not active:
                    return
                continue
            yield e

    @property
    def element_spec(self) -> Any:
        return _spec_of_all(self._datasets)


def choose_from_datasets(datasets: Any, choice_dataset: Dataset, stop_on_empty_dataset: bool = True) -> Dataset:
    from tapeflow.framework import dtypes
    from tapeflow.framework.tensor_spec import TensorSpec

    datasets = _check_datasets(datasets, "choose_from_datasets")
    if not isinstance(choice_dataset, Dataset) or choice_dataset.element_spec != TensorSpec([], dtypes.int64):
        raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar `tf.int64` tensors, "
                        f"got {getattr(choice_dataset, 'element_spec', choice_dataset)}.")
    return _Choose(datasets, choice_dataset, bool(stop_on_empty_dataset))


class _Sample(_Choose):
    """TF's sample_from_datasets: choice ``k`` is ``stateless_multinomial(log(weights), 1, seed=(r[2k], r[2k+1]))``
    over the words ``r`` of ``Dataset.random(seed)``, read by a directed interleave (no renormalization when
    an input runs out: its draws are skipped)."""

    _tf_name = "_DirectedInterleaveDataset"

    def __init__(self, datasets: list, logits: Any, seed: int | None, stop_on_empty: bool,
                 rerandomize: bool) -> None:
        self._datasets, self._logits, self._stop = datasets, logits, stop_on_empty
        self._random = _Random(seed, rerandomize)

    def _logit_stream(self) -> Iterator:
        if isinstance(self._logits, Dataset):
            for w in self._logits._elements():
                w = np.asarray(getattr(w, "_value", w))
                with np.errstate(divide="ignore"):
                    yield np.log(w).reshape(1, -1)
        else:
            while True:
                yield self._logits

    def _selector(self) -> Iterator:
        from tapeflow.ops import philox

        words = self._random._words()
        for logits in self._logit_stream():
            key, counter = philox.stateless_key_counter(next(words), next(words))
            yield int(philox.categorical(counter, key, logits, 1, np.int64)[0, 0])

    def _elements(self) -> Iterator:
        yield from self._interleave(self._selector())


def sample_from_datasets(datasets: Any, weights: Any = None, seed: int | None = None,
                         stop_on_empty_dataset: bool = False, rerandomize_each_iteration: Any = None) -> Dataset:
    datasets = _check_datasets(datasets, "sample_from_datasets")
    if weights is None:
        logits: Any = np.ones((1, len(datasets)), np.float32)
    elif isinstance(weights, Dataset):
        logits = weights
    else:
        tensor = isinstance(weights, Tensor)
        w = np.asarray(getattr(weights, "_value", weights))
        if w.ndim != 1 or len(w) != len(datasets):
            raise ValueError(f"Invalid `weights`. `weights` should have the same length as `datasets` but got "
                             f"`len(weights)={len(w)}` vs. `len(datasets)={len(datasets)}`.")
        if not tensor:  # TF drops the inputs whose (python) weight is zero
            keep = [i for i in range(len(w)) if w[i] > 0]
            datasets, w = ([datasets[i] for i in keep], w[keep]) if keep else ([datasets[0].take(0)], np.ones(1))
        if isinstance(weights, (list, tuple)):  # Python numbers convert as TF's: float32 / int32
            w = w.astype(np.float32 if w.dtype.kind == "f" else np.int32 if w.dtype.kind in "iu" else w.dtype)
        if w.dtype not in (np.float32, np.float64):
            raise TypeError(f"Invalid `weights`. `weights` type must be either `tf.float32` or `tf.float64` but is "
                            f"{w.dtype}.")
        with np.errstate(divide="ignore"):
            logits = np.log(w).reshape(1, -1)
        if len(datasets) == 1:
            return datasets[0]
    return _Sample(datasets, logits, seed, bool(stop_on_empty_dataset), bool(rerandomize_each_iteration))


def _class_of(class_func: Callable, e: Any) -> np.ndarray:
    c = _call(class_func, _to_tensors(e))
    a = np.asarray(getattr(c, "_value", c))
    if a.shape != () or a.dtype.kind not in "iu":
        raise ValueError(f"rejection_resample: `class_func` must return a scalar integer tensor, got dtype "
                         f"{a.dtype} and shape {a.shape}.")
    return a


class _Resample(Dataset):
    """TF's rejection_resample: with probability ``m`` (= min_i t_i / p_i) an element of the original stream,
    otherwise one accepted by per-class rejection with ``a_i = (t_i/p_i - m) / (max_i t_i/p_i - m)``;
    ``p`` is ``initial_dist`` or, without it, the class frequencies seen so far."""

    def __init__(self, parent: Dataset, class_func: Callable, target: np.ndarray, initial: np.ndarray | None,
                 seed: int | None) -> None:
        self._parent, self._class, self._target, self._initial = parent, class_func, target, initial
        self._rng = _rng_factory(seed)

    @staticmethod
    def _mixing(p: np.ndarray, t: np.ndarray) -> tuple:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(p > 0, t / p, 0.0)
        hi, m = ratio.max(), ratio.min()
        accept = (ratio - m) / (hi - m) if hi > m else np.zeros_like(ratio)
        return accept, m

    def _elements(self) -> Iterator:
        rng = self._rng()
        t = self._target
        counts = np.zeros(len(t))
        original = iter(self._parent._elements())
        filtered = iter(self._parent._elements())

        def dist() -> np.ndarray:
            if self._initial is not None:
                return self._initial
            return counts / counts.sum() if counts.sum() else np.full(len(t), 1.0 / len(t))

        while True:
            accept, m = self._mixing(dist(), t)
            try:
                if m >= 1.0 or rng.random() < m:
                    e = next(original)
                    c = _class_of(self._class, e)
                    counts[int(c)] += 1
                    yield (c, e)
                    continue
                while True:
                    e = next(filtered)
                    c = _class_of(self._class, e)
                    counts[int(c)] += 1
                    accept, _ = self._mixing(dist(), t)
                    if rng.random() < accept[int(c)]:
                        yield (c, e)
                        break
            except StopIteration:
                return

    @property
    def element_spec(self) -> Any:
        from tapeflow.framework import dtypes
        from tapeflow.framework.tensor_spec import TensorSpec

        for e in self._parent._elements():
            return (TensorSpec([], dtypes.as_dtype(_class_of(self._class, e).dtype)), self._parent.element_spec)
        return (TensorSpec([], dtypes.int32), self._parent.element_spec)


def rejection_resample(ds: Dataset, class_func: Callable, target_dist: Any, initial_dist: Any = None,
                       seed: int | None = None) -> Dataset:
    t = np.asarray(getattr(target_dist, "_value", target_dist), np.float64).reshape(-1)
    p = None if initial_dist is None else np.asarray(getattr(initial_dist, "_value", initial_dist),
                                                     np.float64).reshape(-1)
    if p is not None and p.shape != t.shape:
        raise ValueError(f"rejection_resample: initial_dist has {p.size} classes but target_dist has {t.size}.")
    out = _Resample(ds, class_func, t, p, seed)
    if p is not None:  # TF's static shortcuts: only the original stream, or only the rejection sampler
        m = _Resample._mixing(p, t)[1]
        out._tf_name = "_MapDataset" if m >= 1 else "_PrefetchDataset" if m == 0 else "_DirectedInterleaveDataset"
    else:
        out._tf_name = "_DirectedInterleaveDataset"
    return out
