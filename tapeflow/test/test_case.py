"""``tf.test.TestCase`` with the assertions TF tests use most."""

from __future__ import annotations

import unittest
from typing import Any

import numpy as np


def _np(x: Any):
    if hasattr(x, "numpy"):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return [_np(v) for v in x]
    return x


class TestCase(unittest.TestCase):
    def evaluate(self, tensors: Any):
        from tapeflow.framework import nest

        return nest.map_structure(_np, tensors)

    def assertAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: str | None = None):
        np.testing.assert_allclose(np.asarray(_np(a), dtype=np.float64), np.asarray(_np(b), dtype=np.float64),
                                   rtol=rtol, atol=atol, err_msg=msg or "")

    def assertAllEqual(self, a: Any, b: Any, msg: str | None = None):
        np.testing.assert_array_equal(np.asarray(_np(a)), np.asarray(_np(b)), err_msg=msg or "")

    def assertAllLessEqual(self, a: Any, comparison_target: Any):
        self.assertTrue(np.all(np.asarray(_np(a)) <= comparison_target))

    def assertAllGreaterEqual(self, a: Any, comparison_target: Any):
        self.assertTrue(np.all(np.asarray(_np(a)) >= comparison_target))

    def assertShapeEqual(self, np_array: Any, tf_tensor: Any):
        self.assertEqual(tuple(np.shape(np_array)), tuple(tf_tensor.shape.as_list()))

    def assertDTypeEqual(self, target: Any, expected_dtype: Any):
        self.assertEqual(np.asarray(_np(target)).dtype, np.dtype(expected_dtype))


def main() -> None:
    unittest.main()
