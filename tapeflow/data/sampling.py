"""Mixing datasets: ``choose_from_datasets``, ``sample_from_datasets`` and ``rejection_resample``.

``sample_from_datasets`` is TF's: a selector that draws each choice with
``stateless_multinomial`` seeded by two ``Dataset.random`` words (Philox, as
TF's RandomDataset), read by a directed interleave; a seeded run gives TF's
order. ``rejection_resample`` is TF's pipeline with TF's random streams (the
filter's ``RandomUniform`` kernel and the mixing ``sample_from_datasets``), so
a seeded run accepts TF's elements in TF's order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapeflow.data.dataset import Dataset, _common_spec
from tapeflow.framework import errors
from tapeflow.framework.tensor import Tensor


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


class _Stream(Dataset):
    """An internal dataset over a generator function (a stage of rejection_resample's pipeline)."""

    def __init__(self, gen: Callable[[], Iterator], spec: Callable[[], Any]) -> None:
        self._gen, self._spec = gen, spec

    def _elements(self) -> Iterator:
        return self._gen()

    @property
    def element_spec(self) -> Any:
        return self._spec()


_TINY32 = np.finfo(np.float32).tiny
_WARN_FIRST_N = 10  # tf.Print(first_n=10) in TF's _filter_ds, once per iterator


def _print_value(a: np.ndarray) -> str:
    """A float32 array as tf.Print writes it: ``[v v v]``, each value at 6 significant digits unless that
    does not read back as the same float32 (then 9)."""
    def one(v: np.float32) -> str:
        s = f"{float(v):.6g}"
        return s if np.float32(s) == v else f"{float(v):.9g}"

    return "[" + " ".join(one(v) for v in np.asarray(a, np.float32).reshape(-1)) + "]"


class _Resample(Dataset):
    """TF's rejection_resample, stage for stage (dataset_ops.rejection_resample):

    - ``dists``: ``initial_dist`` repeated, or the estimate: the class values in batches of 32 counted from 10
      per class (float64 ratio cast to float32), each batch's estimate given to its 32 positions;
    - per position: ``ratio = t / (p + tiny)``, ``m = min(ratio)``, ``a = (ratio - m) / (max(ratio) - m)``;
    - ``filtered``: element ``j`` kept when a ``RandomUniform`` draw (its kernel's Philox stream for the
      seed, 256 counters per call, restarted per iterator) is below ``a[class_j]``;
    - the result: ``sample_from_datasets([(class, element) stream, filtered], weights=(m, 1 - m) per position,
      seed, stop_on_empty_dataset=True)``, or only one side when the given ``initial_dist`` makes ``m``
      1 or 0.
    """

    def __init__(self, parent: Dataset, class_func: Callable, target: np.ndarray, initial: np.ndarray | None,
                 seed: int | None) -> None:
        from tapeflow.ops import random_ops

        self._parent, self._target, self._initial = parent, target, initial
        self._classes = parent.map(class_func)  # traced once, as TF's self.map(class_func)
        self._uniform_seeds = random_ops.get_seed(seed)  # the filter's random_uniform(seed=seed)
        static = None
        if initial is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                static = np.min(target / initial)
        pairs = _Stream(self._pairs, self._spec)
        filtered = _Stream(self._filtered, self._spec)
        if static == 1:
            self._out: Dataset = pairs
            self._tf_name = "_MapDataset"
        elif static == 0:
            self._out = filtered
            self._tf_name = "_PrefetchDataset"
        else:
            weights = _Stream(self._mixing_weights, lambda: None)
            self._out = _Sample([pairs, filtered], weights, seed, True, False)
            self._tf_name = "_DirectedInterleaveDataset"

    def _spec(self) -> Any:
        return (self._classes.element_spec, self._parent.element_spec)

    @property
    def element_spec(self) -> Any:
        return self._spec()

    def _elements(self) -> Iterator:
        return self._out._elements()

    def _class_of(self, e: Any) -> Any:
        c = self._classes._apply(e)
        return np.asarray(getattr(c, "_value", c))

    def _check_class(self, c: Any) -> int:
        a = np.asarray(c)
        if a.shape != () or a.dtype.kind not in "iu":
            raise ValueError(f"rejection_resample: `class_func` must return a scalar integer tensor, got dtype "
                             f"{a.dtype} and shape {a.shape}.")
        k = int(a)
        if not 0 <= k < len(self._target):
            raise errors.InvalidArgumentError(
                f"rejection_resample: class {k} returned by `class_func` is not in [0, {len(self._target)}) "
                "(target_dist has one entry per class). [Op:GatherV2]")
        return k

    def _dists(self) -> Iterator[np.ndarray]:
        if self._initial is not None:
            p = self._initial
            while True:
                yield p
        k = len(self._target)
        counts = np.full(k, 10, np.int64)  # TF's smoothing constant
        batch: list = []

        def estimate() -> list:
            c = np.asarray(batch, np.int64)
            counts[:] += np.bincount(c[(c >= 0) & (c < k)], minlength=k)  # one_hot: other values count nowhere
            return [(counts / counts.sum()).astype(np.float32)] * 32  # tiled to the batch size

        for c in self._classes._elements():
            batch.append(int(np.asarray(c)))
            if len(batch) == 32:
                yield from estimate()
                batch = []
        if batch:
            yield from estimate()

    def _mixing(self, p: np.ndarray) -> tuple[np.ndarray, np.float32]:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (self._target / (p + _TINY32)).astype(np.float32)
            m = ratio.min()
            return ((ratio - m) / (ratio.max() - m)).astype(np.float32), m

    def _pairs(self) -> Iterator:
        for e in self._parent._elements():
            c = self._class_of(e)
            self._check_class(c)
            yield (c, e)

    def _mixing_weights(self) -> Iterator:
        for p in self._dists():
            m = self._mixing(p)[1]
            yield np.array([m, np.float32(1.0) - m], np.float32)

    def _filtered(self) -> Iterator:
        import sys

        from tapeflow.ops import philox

        s, s2 = self._uniform_seeds
        if s is None:
            s, s2 = (int(v) for v in np.random.SeedSequence().generate_state(2, np.uint64))
        key, counter = int(s) & 0xFFFFFFFFFFFFFFFF, (int(s2) & 0xFFFFFFFFFFFFFFFF) << 64
        warned = 0
        for p, e in zip(self._dists(), self._parent._elements()):
            c = self._class_of(e)
            accept, _ = self._mixing(p)
            rejected = np.float32(np.sum((np.float32(1) - accept) * p, dtype=np.float32))
            if not rejected < 0.5 and warned < _WARN_FIRST_N:  # TF's tf.Print on stderr
                warned += 1
                print("Proportion of examples rejected by sampler is high: "
                      f"{_print_value(rejected)}{_print_value(p)}{_print_value(accept)}", file=sys.stderr)
            u = philox.uniform(counter, key, (), np.float32)
            counter = philox.advance(counter, 1)
            if u < accept[self._check_class(c)]:
                yield (c, e)


def rejection_resample(ds: Dataset, class_func: Callable, target_dist: Any, initial_dist: Any = None,
                       seed: int | None = None) -> Dataset:
    t = np.asarray(getattr(target_dist, "_value", target_dist)).astype(np.float32).reshape(-1)  # cast as TF
    p = None if initial_dist is None else np.asarray(getattr(initial_dist, "_value", initial_dist)).astype(
        np.float32).reshape(-1)
    if p is not None and p.shape != t.shape:
        raise ValueError(f"rejection_resample: initial_dist has {p.size} classes but target_dist has {t.size}.")
    return _Resample(ds, class_func, t, p, seed)
