"""``tf.autodiff``: forward-mode accumulation and the gradient tape."""

from tapeflow.eager.backprop import GradientTape
from tapeflow.eager.forwardprop import ForwardAccumulator

__all__ = ["ForwardAccumulator", "GradientTape"]
