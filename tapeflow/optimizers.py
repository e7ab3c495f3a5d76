"""``tf.optimizers``: an alias of ``tf.keras.optimizers``."""

from tapeflow.keras.optimizers import *  # noqa: F401,F403
from tapeflow.keras.optimizers import __all__, schedules  # noqa: F401
