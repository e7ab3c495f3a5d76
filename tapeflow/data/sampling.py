"""Mixing datasets: ``choose_from_datasets``, ``sample_from_datasets`` and ``rejection_resample``.

The choices follow TF's algorithms (a seeded run is reproducible), but the
random streams are NumPy's, so the sampled order differs from TF's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapeflow.data.dataset import Dataset, _call, _common_spec, _to_tensors
from tapeflow.framework import errors


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


class _Choose(Dataset):
    def __init__(self, datasets: list, choices: Dataset, stop_on_empty: bool) -> None:
        self._datasets, self._choices, self._stop = datasets, choices, stop_on_empty

    def _elements(self) -> Iterator:
        its = [iter(d._elements()) for d in self._datasets]
        live = [True] * len(its)
        for c in self._choices._elements():
            i = int(c)
            if not 0 <= i < len(its):
                raise errors.InvalidArgumentError(
                    f"choose_from_datasets: selector index {i} is out of range [0, {len(its)}). "
                    "[Op:DirectedInterleaveDataset]")
            if not live[i]:
                continue
            try:
                yield next(its[i])
            except StopIteration:
                live[i] = False
                if self._stop:
                    return

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


class _Sample(Dataset):
    def __init__(self, datasets: list, weights: Any, seed: int | None, stop_on_empty: bool) -> None:
        self._datasets, self._weights, self._stop = datasets, weights, stop_on_empty
        self._rng = _rng_factory(seed)

    def _weight_stream(self) -> Iterator:
        if isinstance(self._weights, Dataset):
            for w in self._weights._elements():
                yield np.asarray(w, np.float64).reshape(-1)
        else:
            while True:
                yield self._weights

    def _elements(self) -> Iterator:
        rng = self._rng()
        its = [iter(d._elements()) for d in self._datasets]
        live = np.ones(len(its), bool)
        for w in self._weight_stream():
            p = np.where(live, w, 0.0)
            if p.sum() <= 0:
                return
            i = int(rng.choice(len(its), p=p / p.sum()))
            try:
                yield next(its[i])
            except StopIteration:
                if self._stop:
                    return
                live[i] = False

    @property
    def element_spec(self) -> Any:
        return _spec_of_all(self._datasets)


def sample_from_datasets(datasets: Any, weights: Any = None, seed: int | None = None,
                         stop_on_empty_dataset: bool = False) -> Dataset:
    datasets = _check_datasets(datasets, "sample_from_datasets")
    if weights is None:
        weights = np.full(len(datasets), 1.0 / len(datasets))
    elif not isinstance(weights, Dataset):
        weights = np.asarray(getattr(weights, "_value", weights), np.float64).reshape(-1)
        if len(weights) != len(datasets):
            raise ValueError(f"Invalid `weights`. The shape of `weights` should be compatible with `[len(datasets)]` "
                             f"but is ({len(weights)},), expected ({len(datasets)},).")
        if (weights < 0).any():
            raise errors.InvalidArgumentError("sample_from_datasets: weights must be non-negative.")
    return _Sample(datasets, weights, seed, bool(stop_on_empty_dataset))


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
