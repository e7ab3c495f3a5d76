"""``tf.keras.utils.Config``: Keras 3's attribute-style configuration dict that can be frozen."""

from __future__ import annotations

import copy
import difflib
import json
from typing import Any

__all__ = ["Config"]

_OWN = frozenset(("_config", "_frozen"))


class Config:
    """A dict whose keys are also attributes (``config.lr = 0.1``, ``config["lr"]``); ``freeze()`` makes every
    change raise; ``as_dict()``, ``to_json()``; iterating gives the keys sorted, as Keras."""

    def __init__(self, **kwargs: Any) -> None:
        object.__setattr__(self, "_config", dict(kwargs))
        object.__setattr__(self, "_frozen", False)

    @property
    def frozen(self) -> bool:
        return self._frozen

    def freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self) -> None:
        object.__setattr__(self, "_frozen", False)

    def _raise_if_frozen(self) -> None:
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def as_dict(self) -> dict:
        return copy.copy(self._config)

    def to_json(self) -> str:
        return json.dumps(self._config)

    def keys(self) -> Any:
        return self._config.keys()

    def values(self) -> Any:
        return self._config.values()

    def items(self) -> Any:
        return self._config.items()

    def get(self, keyname: str, value: Any = None) -> Any:
        return self._config.get(keyname, value)

    def pop(self, *args: Any) -> Any:
        self._raise_if_frozen()
        return self._config.pop(*args)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._raise_if_frozen()
        self._config.update(*args, **kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN:
            object.__setattr__(self, name, value)
            return
        self._raise_if_frozen()
        self._config[name] = value

    def __getattr__(self, name: str) -> Any:
        config = object.__getattribute__(self, "_config")
        if name in config:
            return config[name]
        msg = f"Unknown attribute: '{name}'."
        close = difflib.get_close_matches(name, config.keys(), n=1, cutoff=0.7)
        if close:
            msg += f" Did you mean '{close[0]}'?"
        raise AttributeError(msg)

    def __setitem__(self, key: str, item: Any) -> None:
        self._raise_if_frozen()
        self._config[key] = item

    def __getitem__(self, key: str) -> Any:
        return self._config[key]

    def __delitem__(self, key: str) -> None:
        self._raise_if_frozen()
        del self._config[key]

    def __contains__(self, item: Any) -> bool:
        return item in self._config

    def __iter__(self) -> Any:
        return iter(sorted(self._config))

    def __len__(self) -> int:
        return len(self._config)

    def __repr__(self) -> str:
        return f"<Config {self._config}>"
