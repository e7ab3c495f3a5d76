"""Keras 3 API that libraries built on Keras (keras_tuner among them) reach for: keras.version(),
keras.utils.legacy's Keras 2 (de)serialization with module_objects, Model.distribute_strategy. Pinned from
Keras 3.15.1 with TensorFlow 2.21."""

import pytest

import tapeflow as tf

keras = tf.keras
legacy = tf.keras.utils.legacy


def test_keras_version_is_keras_3():
    assert keras.version() == keras.__version__ == "3.15.1"


def test_legacy_round_trip_through_module_objects():
    d = legacy.serialize_keras_object(keras.layers.Dense(3, activation="relu", name="d"))
    assert d["class_name"] == "Dense" and d["config"]["units"] == 3 and d["config"]["activation"] == "relu"
    layer = legacy.deserialize_keras_object(d, module_objects={"Dense": keras.layers.Dense})
    assert type(layer) is keras.layers.Dense and layer.units == 3 and layer.name == "d"
    assert legacy.deserialize_keras_object(None) is None


def test_legacy_passive_items_and_plain_classes():
    class Cond:
        def __init__(self, name, values):
            self.name, self.values = name, values

        def get_config(self):
            return {"name": self.name, "values": self.values}

        @classmethod
        def from_config(cls, config):
            return cls(**config)

    class Holder(Cond):
        def get_config(self):
            return {"name": self.name, "values": self.values}

    outer = Holder("h", Cond("c", [1, 2]))
    d = legacy.serialize_keras_object(outer)
    assert d == {"class_name": "Holder", "config": {"name": "h", "values": {
        "class_name": "Cond", "config": {"name": "c", "values": [1, 2]}, "__passive_serialization__": True}}}
    back = legacy.deserialize_keras_object(d, module_objects={"Holder": Holder, "Cond": Cond})
    assert type(back.values) is Cond and back.values.values == [1, 2]


def test_legacy_errors_are_keras():
    with pytest.raises(ValueError, match=r"^Unknown layer: 'Nope'\. Please ensure you are using a "
                                         r"`keras\.utils\.custom_object_scope`"):
        legacy.deserialize_keras_object({"class_name": "Nope", "config": {}}, module_objects={},
                                        printable_module_name="layer")
    with pytest.raises(ValueError, match=r"^Improper config format for \{'x': 1\}\. Expecting python dict contains "
                                         r"`class_name` and `config` as keys"):
        legacy.deserialize_keras_object({"x": 1})


def test_model_distribute_strategy_is_the_creating_scope_else_the_current_one():
    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    assert m.distribute_strategy is tf.distribute.get_strategy()
    s = tf.distribute.OneDeviceStrategy("/cpu:0")
    with s.scope():
        m2 = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    assert m2.distribute_strategy is s
