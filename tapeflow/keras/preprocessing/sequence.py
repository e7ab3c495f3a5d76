"""``tf.keras.preprocessing.sequence``: Keras 3.15 keeps only ``pad_sequences`` here (``keras.utils``'s)."""

from tapeflow.keras.sequence_utils import pad_sequences

__all__ = ["pad_sequences"]
