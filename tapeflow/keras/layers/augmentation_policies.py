"""Keras 3's augmentation policies ``RandAugment`` and ``AugMix``: layers made of other augmentation layers
(shear, translation, rotation, brightness, colour degeneration, contrast, sharpness, posterization,
solarization, auto-contrast, equalization), as Keras 3.15 with the TF backend.

Their sub-layers draw from the policy's own seed state, in Keras's order: ``RandAugment`` draws ``num_ops``
layer indices, then every sub-layer's transformation, and applies to each image the chosen ones in turn;
``AugMix`` draws Dirichlet chain weights (normalized ``keras.random.gamma``) and a Beta mixing weight, picks
each chain's layers with Python's ``random.choice`` (as Keras: ``tf.keras.utils.set_random_seed`` repeats
them), and blends the chains with the image. So after ``set_random_seed`` or with ``seed=`` the pixels are
Keras's."""

from __future__ import annotations

import contextlib
import random as _pyrandom
from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras import backend as _backend
from tapeflow.keras.layers.augmentation_more import (
    _factor, _ImagePreprocessing, AutoContrast, RandomColorDegeneration, RandomPosterization, RandomSharpness,
    Solarization,
)
from tapeflow.keras.layers.augmentation_equalization import Equalization
from tapeflow.keras.layers.augmentation_shear import RandomShear
from tapeflow.keras.layers.image_augmentation import (
    _next_seed, RandomBrightness, RandomContrast, RandomRotation, RandomTranslation,
)
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo
from tapeflow.ops import random_ops

__all__ = ["AugMix", "RandAugment"]


@contextlib.contextmanager
def _drawing_from(layer: Any, source: Any):
    """``layer.get_random_transformation(data, seed=source's generator)``: its draws from ``source``'s state."""
    previous = layer.__dict__.get("_seed_source")
    object.__setattr__(layer, "_seed_source", source)
    try:
        yield
    finally:
        object.__setattr__(layer, "_seed_source", previous)


class _Policy(_ImagePreprocessing):
    """The sub-layers of Keras's policies, made in Keras's order (each unseeded one takes a Python-random seed
    as it is made, as Keras's ``SeedGenerator``)."""

    _FACTOR_BOUNDS = (0, 1)

    def _make_layers(self, names: list, interpolation: str, data_format: Any, kwargs: dict) -> None:
        f, vr, seed = self.factor, self.value_range, self.seed
        makers = {
            "random_shear": lambda: RandomShear(x_factor=f, y_factor=f, interpolation=interpolation, seed=seed,
                                                data_format=data_format, **kwargs),
            "random_translation": lambda: RandomTranslation(height_factor=f, width_factor=f,
                                                            interpolation=interpolation, seed=seed,
                                                            data_format=data_format, **kwargs),
            "random_rotation": lambda: RandomRotation(factor=f, interpolation=interpolation, seed=seed,
                                                      data_format=data_format, **kwargs),
            "solarization": lambda: Solarization(addition_factor=f, threshold_factor=f, value_range=vr, seed=seed,
                                                 data_format=data_format, **kwargs),
            "random_posterization": lambda: RandomPosterization(factor=max(1, int(8 * f[1])), value_range=vr,
                                                                seed=seed, data_format=data_format, **kwargs),
            "auto_contrast": lambda: AutoContrast(value_range=vr, data_format=data_format, **kwargs),
            "equalization": lambda: Equalization(value_range=vr, data_format=data_format, **kwargs),
            "random_brightness": lambda: RandomBrightness(factor=f, value_range=vr, seed=seed,
                                                          data_format=data_format, **kwargs),
            "random_color_degeneration": lambda: RandomColorDegeneration(factor=f, value_range=vr, seed=seed,
                                                                         data_format=data_format, **kwargs),
            "random_contrast": lambda: RandomContrast(factor=f, value_range=vr, seed=seed, data_format=data_format,
                                                      **kwargs),
            "random_sharpness": lambda: RandomSharpness(factor=f, value_range=vr, seed=seed,
                                                        data_format=data_format, **kwargs),
        }
        for name in names:
            setattr(self, name, makers[name]())

    def _sub_transformation(self, name: str, images: Tensor, training: bool = True) -> Any:
        layer = getattr(self, name)
        with _drawing_from(layer, self):
            return layer.get_random_transformation(images, training=training)

    def build(self, input_shape: Any) -> None:
        for name in self._names:
            getattr(self, name).build(input_shape)
        super().build(input_shape)

    def transform_labels(self, labels: Any, transformation: Any = None, training: bool = True) -> Tensor:
        return labels


class RandAugment(_Policy):
    """RandAugment (Cubuk et al. 2019): ``num_ops`` augmentations, each chosen at random among eleven (shear,
    translation, rotation, brightness, colour degeneration, contrast, sharpness, posterization, solarization,
    auto-contrast, equalization), of strength ``factor`` in [0, 1], applied to the batch in turn, when
    training."""

    _AUGMENT_LAYERS = ["random_shear", "random_translation", "random_rotation", "random_brightness",
                       "random_color_degeneration", "random_contrast", "random_sharpness", "random_posterization",
                       "solarization", "auto_contrast", "equalization"]

    def __init__(self, value_range: Any = (0, 255), num_ops: int = 2, factor: Any = 0.5,
                 interpolation: str = "bilinear", seed: int | None = None, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value_range = value_range
        self.num_ops = num_ops
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.interpolation = interpolation
        self._setup(data_format, seed)
        self._names = list(self._AUGMENT_LAYERS)
        self._make_layers(self._names, interpolation, data_format, kwargs)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else convert_to_tensor(data)
        indices = random_ops.stateless_uniform([self.num_ops], _next_seed(self), 0, len(self._names), dtype="int32")
        transforms = {name: self._sub_transformation(name, images, training) for name in self._names}
        return {"transforms": transforms, "layer_idxes": indices}

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> Tensor:
        images = mo.cast(convert_to_tensor(images), self.compute_dtype)
        if training:
            indices = transformation["layer_idxes"]
            for i in range(self.num_ops):
                for idx, (name, value) in enumerate(transformation["transforms"].items()):
                    out = getattr(self, name).transform_images(images, value)
                    images = mo.where(mo.equal(indices[i], idx), out, images)
        return mo.cast(images, self.compute_dtype)

    def get_config(self) -> dict:
        return self._config(value_range=self.value_range, num_ops=self.num_ops, factor=self.factor,
                            interpolation=self.interpolation, seed=self.seed)


class AugMix(_Policy):
    """AugMix (Hendrycks et al. 2020): ``num_chains`` chains of up to ``chain_depth`` augmentations each
    (chosen at random, the same for the whole batch), blended with Dirichlet(``alpha``) weights and mixed with
    the image by a Beta(``alpha``, ``alpha``) weight, clipped to ``value_range``, when training. ``all_ops``
    adds brightness, colour degeneration, contrast and sharpness to the seven base augmentations."""

    AUGMENT_LAYERS = ["random_shear", "random_translation", "random_rotation", "random_posterization",
                      "solarization", "auto_contrast", "equalization"]
    AUGMENT_LAYERS_ALL = AUGMENT_LAYERS + ["random_brightness", "random_color_degeneration", "random_contrast",
                                           "random_sharpness"]

    def __init__(self, value_range: Any = (0, 255), num_chains: int = 3, chain_depth: int = 3, factor: Any = 0.3,
                 alpha: float = 1.0, all_ops: bool = True, interpolation: str = "bilinear", seed: int | None = None,
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value_range = value_range
        self.num_chains = num_chains
        self.chain_depth = chain_depth
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = interpolation
        self._setup(data_format, seed)
        self._names = list(self.AUGMENT_LAYERS_ALL if all_ops else self.AUGMENT_LAYERS)
        order = [n for n in ("random_shear", "random_translation", "random_rotation", "solarization",
                             "random_posterization", "auto_contrast", "equalization", "random_brightness",
                             "random_color_degeneration", "random_contrast", "random_sharpness")
                 if n in self._names]  # Keras's order of construction
        self._make_layers(order, interpolation, data_format, kwargs)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        from tapeflow.keras.random import beta_of_seed

        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else convert_to_tensor(data)
        floatx = _backend.floatx()
        gamma = random_ops.stateless_gamma([self.num_chains], _next_seed(self), alpha=self.alpha, dtype=floatx)
        chain_weights = gamma / mo.reduce_sum(gamma, axis=-1, keepdims=True)
        weight = beta_of_seed((), self.alpha, self.alpha, floatx, _next_seed(self))
        chains = []
        for _ in range(self.num_chains):
            depth = []
            for _ in range(self.chain_depth):
                name = _pyrandom.choice(self._names + [None])
                if name is None:
                    continue
                depth.append({"layer_name": name, "transformation": self._sub_transformation(name, images)})
            chains.append(depth)
        return {"chain_mixing_weights": chain_weights, "weight_sample": weight, "chain_transforms": chains}

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> Tensor:
        images = mo.cast(convert_to_tensor(images), self.compute_dtype)
        if training:
            weights = mo.cast(transformation["chain_mixing_weights"], self.compute_dtype)
            weight = mo.cast(transformation["weight_sample"], self.compute_dtype)
            mixed = ao.zeros_like(images)
            for idx, chain in enumerate(transformation["chain_transforms"]):
                copied = ao.identity(images)
                for step in chain:
                    copied = getattr(self, step["layer_name"]).transform_images(copied, step["transformation"])
                mixed = mixed + copied * weights[idx]
            images = weight * images + (1 - weight) * mixed
            images = mo.clip_by_value(images, self.value_range[0], self.value_range[1])
        return mo.cast(images, self.compute_dtype)

    def get_config(self) -> dict:
        return self._config(value_range=self.value_range, num_chains=self.num_chains, chain_depth=self.chain_depth,
                            factor=self.factor, alpha=self.alpha, all_ops=self.all_ops,
                            interpolation=self.interpolation, seed=self.seed)
