"""tf.keras.utils.Config as Keras 3.15 (values and messages pinned from TF 2.21's Keras)."""

import copy

import pytest

import tapeflow as tf


def test_config_attributes_items_and_freezing():
    c = tf.keras.utils.Config(learning_rate=0.1, momentum=0.9)
    c.use_ema = True
    c["seed"] = 123
    assert repr(c) == "<Config {'learning_rate': 0.1, 'momentum': 0.9, 'use_ema': True, 'seed': 123}>"
    assert c.seed == 123 and c["learning_rate"] == 0.1 and len(c) == 4 and c.get("x", 5) == 5
    assert list(c) == ["learning_rate", "momentum", "seed", "use_ema"]  # sorted, as Keras iterates
    assert list(c.keys()) == ["learning_rate", "momentum", "use_ema", "seed"]
    assert c.to_json() == '{"learning_rate": 0.1, "momentum": 0.9, "use_ema": true, "seed": 123}'
    assert c.as_dict() == {"learning_rate": 0.1, "momentum": 0.9, "use_ema": True, "seed": 123}
    c.freeze()
    assert c.frozen
    for change in (lambda: setattr(c, "foo", 1), lambda: c.__setitem__("a", 1), lambda: c.pop("seed"),
                   lambda: c.update(a=1), lambda: c.__delitem__("seed")):
        with pytest.raises(ValueError, match="Cannot mutate attribute\\(s\\) because the config is frozen."):
            change()
    with pytest.raises(AttributeError, match="Unknown attribute: 'learnin_rate'. Did you mean 'learning_rate'\\?"):
        c.learnin_rate  # noqa: B018
    with pytest.raises(AttributeError, match="^Unknown attribute: 'zzz'.$"):
        c.zzz  # noqa: B018
    c.unfreeze()
    del c["seed"]
    assert "seed" not in c and copy.copy(c).as_dict() == c.as_dict()
