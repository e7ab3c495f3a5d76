"""``tf.test``: the gradient checker and a TestCase with TF's assertions."""

from tapeflow.test.gradient_checker import compute_gradient, max_error  # noqa: F401
from tapeflow.test.test_case import TestCase, main  # noqa: F401
