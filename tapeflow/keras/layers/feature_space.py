"""``tf.keras.utils.FeatureSpace``: Keras 3's one-stop preprocessing of structured (tabular) data.

A ``FeatureSpace`` maps a dict of named features (a row or a batch of a table, from a ``tf.data`` dataset or
arrays) to one encoded vector (``output_mode="concat"``) or a dict of encoded features (``"dict"``): each
feature has a preprocessor (``Normalization``, ``Rescaling``, ``Discretization``, ``IntegerLookup``,
``StringLookup``, ``Hashing`` or the identity) and an output mode (``"float"``, ``"int"`` or ``"one_hot"``,
which is ``CategoryEncoding(output_mode="multi_hot")``), and ``crosses`` hash pairs of features together
(``HashedCrossing``). ``adapt(dataset)`` learns the vocabularies, statistics and bins; ``get_inputs()`` and
``get_encoded_features()`` give the symbolic inputs and outputs to build models around; ``save`` writes a
``.keras`` file that ``tf.keras.saving.load_model`` reads back. As Keras 3.15, features are sorted by name in
the output (crosses after them)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras.layers.base import Layer, unique_name

__all__ = ["Cross", "Feature", "FeatureSpace"]

_MODULE = "keras.src.layers.preprocessing.feature_space"  # where Keras's saved configs name these classes


def _layers() -> Any:
    from tapeflow.keras import layers

    return layers


def _auto_name(prefix: str) -> str:
    from tapeflow.keras.layers.base import to_snake_case

    return unique_name(to_snake_case(prefix))


class Cross:
    """A crossing of features (``FeatureSpace.cross``): their values hashed together into ``crossing_dim``
    bins, one-hot encoded (``output_mode="one_hot"``) or as bin indices (``"int"``)."""

    _keras_module_name = _MODULE
    _keras_registered_name = "Cross"

    def __init__(self, feature_names: Any, crossing_dim: int, output_mode: str = "one_hot") -> None:
        if output_mode not in {"int", "one_hot"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot'}. "
                             f"Received: output_mode={output_mode}")
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self) -> str:
        return "_X_".join(self.feature_names)

    def get_config(self) -> dict:
        return {"feature_names": self.feature_names, "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config: dict) -> Cross:
        return cls(**config)


class Feature:
    """One feature of a ``FeatureSpace``: its input ``dtype``, its ``preprocessor`` layer and its
    ``output_mode`` (``"float"``, ``"int"`` or ``"one_hot"``)."""

    _keras_module_name = _MODULE
    _keras_registered_name = "Feature"

    def __init__(self, dtype: str, preprocessor: Any, output_mode: str) -> None:
        if output_mode not in {"int", "one_hot", "float"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot', "
                             f"'float'}}. Received: output_mode={output_mode}")
        self.dtype = dtype
        if isinstance(preprocessor, dict):
            from tapeflow.keras.saving.serialization import deserialize_keras_object

            preprocessor = deserialize_keras_object(preprocessor)
        self.preprocessor = preprocessor
        self.output_mode = output_mode

    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import serialize_keras_object

        return {"dtype": self.dtype, "preprocessor": serialize_keras_object(self.preprocessor),
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config: dict) -> Feature:
        return cls(**config)


class TFDIdentity(Layer):
    """The preprocessor of a ``"float"`` feature: its values as they are."""

    _keras_module_name = _MODULE
    _keras_registered_name = "TFDIdentity"
    _data_layer = True

    def call(self, x: Any) -> Any:
        return x

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class TFDConcat(Layer):
    """The concatenation of the encoded features (``output_mode="concat"``)."""

    _keras_module_name = _MODULE
    _keras_registered_name = "TFDConcat"
    _data_layer = True

    def __init__(self, axis: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, xs: Any) -> Any:
        from tapeflow.ops import array_ops

        return array_ops.concat(list(xs), axis=self.axis)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


def _dtype_name(x: Any) -> str:
    from tapeflow.framework import nest
    from tapeflow.keras import backend

    if isinstance(x, (dict, list, tuple)):
        x = nest.flatten(x)[0]
    return backend.standardize_dtype(x.dtype)


class FeatureSpace(Layer):
    """Keras 3's ``FeatureSpace`` (see the module docstring).

    >>> fs = tf.keras.utils.FeatureSpace({"x": "float", "c": "integer_categorical"})
    >>> fs.adapt({"x": [1.0, 2.0], "c": [3, 4]})
    >>> fs({"x": [1.0], "c": [4]}).shape
    TensorShape([1, 4])
    """

    _keras_module_name = "keras.utils"

    @classmethod
    def cross(cls, feature_names: Any, crossing_dim: int, output_mode: str = "one_hot") -> Cross:
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype: str, preprocessor: Any, output_mode: str) -> Feature:
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name: str | None = None) -> Feature:
        name = name or _auto_name("float")
        return Feature("float32", TFDIdentity(dtype="float32", name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_rescaled(cls, scale: float = 1.0, offset: float = 0.0, name: str | None = None) -> Feature:
        name = name or _auto_name("float_rescaled")
        return Feature("float32", _layers().Rescaling(scale=scale, offset=offset, name=f"{name}_preprocessor"),
                       "float")

    @classmethod
    def float_normalized(cls, name: str | None = None) -> Feature:
        name = name or _auto_name("float_normalized")
        return Feature("float32", _layers().Normalization(axis=-1, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_discretized(cls, num_bins: int, bin_boundaries: Any = None, output_mode: str = "one_hot",
                          name: str | None = None) -> Feature:
        name = name or _auto_name("float_discretized")
        layer = _layers().Discretization(num_bins=num_bins, bin_boundaries=bin_boundaries,
                                         name=f"{name}_preprocessor")
        return Feature("float32", layer, output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens: int | None = None, num_oov_indices: int = 1,
                            output_mode: str = "one_hot", name: str | None = None) -> Feature:
        name = name or _auto_name("integer_categorical")
        layer = _layers().IntegerLookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                        num_oov_indices=num_oov_indices)
        return Feature("int32", layer, output_mode)

    @classmethod
    def string_categorical(cls, max_tokens: int | None = None, num_oov_indices: int = 1,
                           output_mode: str = "one_hot", name: str | None = None) -> Feature:
        name = name or _auto_name("string_categorical")
        layer = _layers().StringLookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                       num_oov_indices=num_oov_indices)
        return Feature("string", layer, output_mode)

    @classmethod
    def string_hashed(cls, num_bins: int, output_mode: str = "one_hot", name: str | None = None) -> Feature:
        name = name or _auto_name("string_hashed")
        return Feature("string", _layers().Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    @classmethod
    def integer_hashed(cls, num_bins: int, output_mode: str = "one_hot", name: str | None = None) -> Feature:
        name = name or _auto_name("integer_hashed")
        return Feature("int32", _layers().Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    def __init__(self, features: dict, output_mode: str = "concat", crosses: Any = None, crossing_dim: int = 32,
                 hashing_dim: int = 32, num_discretization_bins: int = 32, name: str | None = None) -> None:
        super().__init__(name=name)
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        self.crossing_dim = crossing_dim
        self.hashing_dim = hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {key: self._standardize_feature(key, value) for key, value in features.items()}
        self.crosses = []
        if crosses:
            known = set(features.keys())
            for cross in crosses:
                if isinstance(cross, dict):
                    from tapeflow.keras.saving.serialization import deserialize_keras_object

                    cross = deserialize_keras_object(cross)
                if isinstance(cross, Cross):
                    self.crosses.append(cross)
                    continue
                if not crossing_dim:
                    raise ValueError("When specifying `crosses`, the argument `crossing_dim` (dimensionality of "
                                     "the crossing space) should be specified as well.")
                for key in cross:
                    if key not in known:
                        raise ValueError("All features referenced in the `crosses` argument should be present in "
                                         f"the `features` dict. Received unknown features: {cross}")
                self.crosses.append(Cross(cross, crossing_dim=crossing_dim))
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        if output_mode not in {"dict", "concat"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'dict', 'concat'}. "
                             f"Received: output_mode={output_mode}")
        self.output_mode = output_mode
        self.inputs = {key: _layers().Input(shape=(1,), dtype=value.dtype, name=key)
                       for key, value in self.features.items()}
        self.preprocessors = {key: value.preprocessor for key, value in self.features.items()}
        self.encoded_features = None
        self.crossers = {cross.name: _layers().HashedCrossing(cross.crossing_dim, name=cross.name)
                         for cross in self.crosses}
        self.one_hot_encoders: dict = {}
        self._is_adapted = False
        self.concat = None
        self._preprocessed_features_names = None
        self._crossed_features_names = None
        self._sublayers_built = False

    def _standardize_feature(self, name: str, feature: Any) -> Feature:
        if isinstance(feature, Feature):
            return feature
        if isinstance(feature, dict):
            from tapeflow.keras.saving.serialization import deserialize_keras_object

            return deserialize_keras_object(feature)
        makers = {
            "float": lambda: self.float(name=name),
            "float_normalized": lambda: self.float_normalized(name=name),
            "float_rescaled": lambda: self.float_rescaled(name=name),
            "float_discretized": lambda: self.float_discretized(name=name, num_bins=self.num_discretization_bins),
            "integer_categorical": lambda: self.integer_categorical(name=name),
            "string_categorical": lambda: self.string_categorical(name=name),
            "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=name),
            "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=name),
        }
        if not isinstance(feature, str) or feature not in makers:
            raise ValueError(f"Invalid feature type: {feature}")
        return makers[feature]()

    def _list_adaptable_preprocessors(self) -> list:
        layers = _layers()
        names = []
        for name in self.features:
            preprocessor = self.preprocessors[name]
            if isinstance(preprocessor, layers.Normalization) and preprocessor.input_mean is not None:
                continue  # a Normalization with its mean and variance given
            if (isinstance(preprocessor, layers.TextVectorization)
                    and getattr(preprocessor, "_has_input_vocabulary", False)):
                continue
            if hasattr(preprocessor, "adapt"):
                names.append(name)
        return names

    def adapt(self, dataset: Any) -> None:
        """Adapts each preprocessor that learns (lookups, ``Normalization``, ``Discretization``) on its feature
        of ``dataset`` (a ``tf.data.Dataset`` of feature dicts, or a dict of arrays); unbatched scalars are
        batched by 32 and every feature gets a trailing axis, as Keras."""
        from tapeflow.data import Dataset
        from tapeflow.ops import array_ops

        if not isinstance(dataset, Dataset):
            if not isinstance(dataset, dict):
                raise ValueError("`adapt()` can only be called on a tf.data.Dataset or a dict of arrays/lists. "
                                 f"Received instead: {dataset} (of type {type(dataset)})")
            dataset = Dataset.from_tensor_slices(dataset)
        for name in self._list_adaptable_preprocessors():
            feature_dataset = dataset.map(lambda x, name=name: x[name])
            first = next(iter(feature_dataset))
            if len(first.shape) == 0:
                feature_dataset = feature_dataset.batch(32)
            if len(first.shape) in (0, 1):
                feature_dataset = feature_dataset.map(lambda x: array_ops.expand_dims(x, -1))
            self.preprocessors[name].adapt(feature_dataset)
        self._is_adapted = True
        self.get_encoded_features()
        self.built = True
        self._sublayers_built = True

    def get_inputs(self) -> dict:
        """The symbolic inputs (``tf.keras.Input(shape=(1,))`` per feature, named by it)."""
        self._check_if_built()
        return self.inputs

    def get_encoded_features(self) -> Any:
        """The symbolic encoded features of ``get_inputs()`` (one tensor, or a dict in ``"dict"`` mode)."""
        self._check_if_adapted()
        if self.encoded_features is None:
            preprocessed = self._preprocess_features(self.inputs)
            crossed = self._cross_features(preprocessed)
            self.encoded_features = self._merge_features(preprocessed, crossed)
        return self.encoded_features

    def _preprocess_features(self, features: dict) -> dict:
        return {name: self.preprocessors[name](features[name]) for name in features}

    def _cross_features(self, features: dict) -> dict:
        return {cross.name: self.crossers[cross.name]([features[n] for n in cross.feature_names])
                for cross in self.crosses}

    def _merge_features(self, preprocessed: dict, crossed: dict) -> Any:
        if not self._preprocessed_features_names:
            self._preprocessed_features_names = sorted(preprocessed.keys())
            self._crossed_features_names = sorted(crossed.keys())
        names = self._preprocessed_features_names + self._crossed_features_names
        values = ([preprocessed[n] for n in self._preprocessed_features_names]
                  + [crossed[n] for n in self._crossed_features_names])
        if self._sublayers_built:  # the encoders exist: apply them
            out = {}
            for name, value in zip(names, values):
                encoder = self.one_hot_encoders.get(name)
                out[name] = encoder(value) if encoder else value
            return out if self.output_mode == "dict" else self.concat(list(out.values()))
        layers = _layers()
        specs = ([self.features[n] for n in self._preprocessed_features_names]
                 + [self.crosses_by_name[n] for n in self._crossed_features_names])
        out = {}
        for name, value, spec in zip(names, values, specs):
            dtype = _dtype_name(value)
            if spec.output_mode == "one_hot":
                preprocessor = self.preprocessors.get(name) or self.crossers.get(name)
                if not dtype.startswith("int"):
                    raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. Thus its preprocessor should "
                                     f"return an integer dtype. Instead it returns a {dtype} dtype.")
                if isinstance(preprocessor, (layers.IntegerLookup, layers.StringLookup)):
                    cardinality = preprocessor.vocabulary_size()
                elif isinstance(preprocessor, layers.CategoryEncoding):
                    cardinality = preprocessor.num_tokens
                elif isinstance(preprocessor, (layers.Discretization, layers.HashedCrossing, layers.Hashing)):
                    cardinality = preprocessor.num_bins
                else:
                    raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a standard "
                                     "feature and the dimensionality of its output space is not known, thus it "
                                     "cannot be one-hot encoded. Try using `output_mode='int'`.")
                if cardinality is not None:
                    encoder = layers.CategoryEncoding(num_tokens=cardinality, output_mode="multi_hot")
                    self.one_hot_encoders[name] = encoder
                    value = encoder(value)
            if self.output_mode == "concat":
                dtype = _dtype_name(value)
                if dtype.startswith("int") or dtype == "string":
                    raise ValueError(f"Cannot concatenate features because feature '{name}' has not been encoded "
                                     f"(it has dtype {dtype}). Consider using `output_mode='dict'`.")
            out[name] = value
        if self.output_mode == "concat":
            self.concat = TFDConcat(axis=-1)
            return self.concat(list(out.values()))
        return out

    def _check_if_adapted(self) -> None:
        if not self._is_adapted:
            if self._list_adaptable_preprocessors():
                raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace before you can start "
                                 "using it.")
            self._is_adapted = True

    def _check_if_built(self) -> None:
        if not self._sublayers_built:
            self._check_if_adapted()
            self.get_encoded_features()
            self._sublayers_built = True

    def __call__(self, data: Any) -> Any:
        """Encodes a dict of features (a batch, one row of scalars, or one row of length-1 vectors)."""
        from tapeflow.framework import nest
        from tapeflow.framework.tensor import Tensor, convert_to_tensor
        from tapeflow.ops import array_ops

        self._check_if_built()
        if not isinstance(data, dict):
            raise ValueError(f"A FeatureSpace can only be called with a dict. Received: data={data} (of type "
                             f"{type(data)}")

        def tensor(x: Any) -> Any:
            return x if isinstance(x, Tensor) or hasattr(x, "_type_spec") else convert_to_tensor(x)

        data = {key: tensor(value) for key, value in data.items()}
        rebatched = False
        for name, x in data.items():
            if len(x.shape) == 0:
                data[name] = array_ops.reshape(x, (1, 1))
                rebatched = True
            elif len(x.shape) == 1:
                data[name] = array_ops.expand_dims(x, -1)
        preprocessed = nest.map_structure(tensor, self._preprocess_features(data))
        crossed = nest.map_structure(tensor, self._cross_features(preprocessed))
        merged = self._merge_features(preprocessed, crossed)
        if rebatched:
            if self.output_mode == "concat":
                if merged.shape[0] != 1:
                    raise ValueError(f"Expected rebatched data to have batch size 1. Received: shape={merged.shape}")
                merged = array_ops.squeeze(merged, [0])
            else:
                for name, x in merged.items():
                    if len(x.shape) == 2 and x.shape[0] == 1:
                        merged[name] = array_ops.squeeze(x, [0])
        return merged

    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import serialize_keras_object

        return {"features": serialize_keras_object(self.features), "output_mode": self.output_mode,
                "crosses": serialize_keras_object(self.crosses), "crossing_dim": self.crossing_dim,
                "hashing_dim": self.hashing_dim, "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config: dict) -> FeatureSpace:
        return cls(**config)

    def get_build_config(self) -> dict:
        return {name: feature.preprocessor.get_build_config() for name, feature in self.features.items()}

    def build_from_config(self, config: dict) -> None:
        for name in config:
            preprocessor = self.features[name].preprocessor
            if not preprocessor.built:
                preprocessor.build_from_config(config[name])
        self._is_adapted = True

    def save(self, filepath: Any) -> None:
        """Writes the feature space (its config, statistics and vocabularies) to a ``.keras`` file."""
        from tapeflow.keras.saving.saving_lib import save_model

        save_model(self, filepath)

    def save_own_variables(self, store: dict) -> None:
        return

    def load_own_variables(self, store: dict) -> None:
        return
