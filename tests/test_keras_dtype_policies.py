"""tf.keras.dtype_policies against Keras 3.15's answers (pinned from real Keras)."""

import pytest

import tapeflow as tf

dp = tf.keras.dtype_policies


def _entry(name, cls="DTypePolicy"):
    return {"module": "keras", "class_name": cls, "config": {"name": name}, "registered_name": None}


def test_policies_serialize_and_get():
    assert dp.serialize(dp.DTypePolicy("float16")) == _entry("float16")
    assert dp.serialize(dp.FloatDTypePolicy("mixed_float16")) == _entry("mixed_float16", "FloatDTypePolicy")
    assert repr(dp.FloatDTypePolicy("float64")) == '<DTypePolicy "float64">'
    assert dp.FloatDTypePolicy("float64") == dp.DTypePolicy("float64")
    assert tf.keras.FloatDTypePolicy is dp.FloatDTypePolicy and tf.keras.DTypePolicy is dp.DTypePolicy
    assert repr(dp.get("float16")) == '<DTypePolicy "float16">'
    assert repr(dp.get(None)) == '<DTypePolicy "float32">'
    assert dp.get({"class_name": "DTypePolicy", "config": {"name": "float64"}}).name == "float64"
    assert type(dp.get({"class_name": "FloatDTypePolicy", "config": {"name": "float64"}})) is dp.FloatDTypePolicy
    assert dp.deserialize(_entry("float16")).name == "float16"
    assert dp.get(tf.float64).name == "float64"
    assert dp.DTypePolicy("int32").compute_dtype == "int32"
    assert dp.DTypePolicy("float32").quantization_mode is None
    with pytest.raises(ValueError, match=r"Cannot interpret `dtype` argument. Expected a string or an instance of "
                                         r"DTypePolicy. Received: dtype=5"):
        dp.get(5)
    with pytest.raises(ValueError, match="Cannot convert 'foo' to a mixed precision DTypePolicy"):
        dp.DTypePolicy("foo")
    with pytest.raises(TypeError, match="'name' must be a string"):
        dp.DTypePolicy(3)


def test_quantized_policies_are_not_implemented():
    with pytest.raises(NotImplementedError, match="QuantizedDTypePolicy"):
        dp.QuantizedDTypePolicy  # noqa: B018
    assert not hasattr(dp, "Int4DTypePolicy")
    with pytest.raises(NotImplementedError, match="int8_from_float32"):
        dp.get("int8_from_float32")


def _map():
    m = dp.DTypePolicyMap(default_policy=dp.DTypePolicy("float32"))
    m["encoder/layer_0/dense"] = dp.DTypePolicy("float16")
    m["encoder/.*"] = dp.DTypePolicy("float64")
    m["decoder"] = "float16"
    return m


def test_policy_map_lookup():
    m = _map()
    assert m["encoder/layer_0/dense"].name == "float16"  # exact key first
    assert m["encoder/attention/query"].name == "float64"  # then a full regex match
    assert m["decoder/attention"].name == "float32"  # no prefix matching: the default
    assert (m.name, m.compute_dtype, m.variable_dtype, len(m), list(m), "decoder" in m) == (
        "map_float32", "float32", "float32", 3, ["encoder/layer_0/dense", "encoder/.*", "decoder"], True)
    assert repr(m).startswith("<DTypePolicyMap at 0x") and repr(m).endswith(
        "default_policy=float32, mapping=[('encoder/layer_0/dense', 'float16'), ('encoder/.*', 'float64'), "
        "('decoder', 'float16')]>")
    m["encoder/attention/.*"] = dp.DTypePolicy("float16")
    with pytest.raises(ValueError, match=r"Path 'encoder/attention/query' matches multiple dtype policy "
                                         r"specification keys: \['encoder/.\*', 'encoder/attention/.\*'\]"):
        m["encoder/attention/query"]  # noqa: B018
    with pytest.raises(ValueError, match='decoder already exist in the DTypePolicyMap with value <DTypePolicy '
                                         '"float16">. Please make sure to not use duplicated keys.'):
        m["decoder"] = dp.DTypePolicy("float16")
    with pytest.raises(ValueError, match="Cannot interpret the assigned value by `keras.dtype_policies.get`. "
                                         "Received: 5 of type <class 'int'>"):
        m["x"] = 5
    del m["decoder"]
    assert list(m) == ["encoder/layer_0/dense", "encoder/.*", "encoder/attention/.*"]
    assert dp.DTypePolicyMap().default_policy.name == "float32"
    assert dp.DTypePolicyMap(default_policy="float16").name == "map_float16"
    with pytest.raises(ValueError, match="`default_policy` cannot be a `DTypePolicyMap`."):
        dp.DTypePolicyMap(default_policy=dp.DTypePolicyMap())
    with pytest.raises(TypeError, match="If specified, `policy_map` must be a dict"):
        dp.DTypePolicyMap(policy_map=[1])


def test_policy_map_config_round_trip():
    m = _map()
    config = m.get_config()
    assert config["default_policy"] == dp.DTypePolicy("float32")
    assert config["policy_map"] == {"encoder/layer_0/dense": _entry("float16"), "encoder/.*": _entry("float64"),
                                    "decoder": _entry("float16")}
    assert dp.serialize(m) == {"module": "keras.dtype_policies", "class_name": "DTypePolicyMap",
                               "config": {"default_policy": _entry("float32"), "policy_map": config["policy_map"]},
                               "registered_name": None}
    again = dp.DTypePolicyMap.from_config(config)
    assert again.get_config()["policy_map"] == config["policy_map"]
    back = dp.deserialize(dp.serialize(m))
    assert type(back) is dp.DTypePolicyMap and back["encoder/x"].name == "float64"


def test_layers_take_the_policies():
    layer = tf.keras.layers.Dense(2, dtype=dp.FloatDTypePolicy("float64"))
    assert layer(tf.ones((1, 3), tf.float64)).dtype == tf.float64
