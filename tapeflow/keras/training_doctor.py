"""``tf.keras.callbacks.TrainingDoctor`` (a tapeflow extension): the Keras
callback of ``tf.debugging.diagnose_training_step``. It lives with Keras, above
tf.debugging, and is loaded on first use of its name."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tapeflow.debugging._doctor_passes import _value
from tapeflow.debugging.doctor import diagnose_training_step
from tapeflow.keras.callbacks import Callback


class TrainingDoctor(Callback):
    """``tf.keras.callbacks.TrainingDoctor()`` (a tapeflow extension): runs
    ``tf.debugging.diagnose_training_step`` on the first batch of ``fit`` and
    again on the first batch whose loss is NaN/Inf (diagnosing that batch with
    the weights from before its step), printing the report.

    ``print_fn`` receives the report text (default ``print``); the reports
    are kept in ``.reports``. With ``stop_on_error=True`` training stops after
    a report with errors.

    >>> model.fit(x, y, callbacks=[tf.keras.callbacks.TrainingDoctor()])  # doctest: +SKIP
    """

    def __init__(
        self,
        print_fn: Callable | None = print,
        on_nonfinite: bool = True,
        stop_on_error: bool = False,
        finite_difference_entries: int = 12,
    ) -> None:
        super().__init__()
        self.print_fn = print_fn
        self.on_nonfinite = on_nonfinite
        self.stop_on_error = stop_on_error
        self.finite_difference_entries = finite_difference_entries
        self.reports: list = []
        self._first_done = False
        self._nonfinite_done = False
        self._before: list | None = None

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._first_done = False
        self._nonfinite_done = False

    def _batch(self):
        return getattr(self.model, "_current_train_batch", None)

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        model = self.model
        if not self._first_done:
            self._first_done = True
            self._run("first batch")
        if self.on_nonfinite and not self._nonfinite_done:
            self._before = [(v, _value(v).copy()) for v in model.variables]

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        loss = (logs or {}).get("loss")
        if not self.on_nonfinite or self._nonfinite_done or loss is None or np.isfinite(loss):
            return
        self._nonfinite_done = True
        after = [(v, _value(v).copy()) for v in self.model.variables]
        for v, val in self._before or []:
            v.assign(val)
        try:
            self._run(f"batch {batch}: the loss became {loss}")
        finally:
            for v, val in after:
                v.assign(val)

    def _run(self, when: str) -> None:
        model = self.model
        data = self._batch()
        if data is None or model is None or getattr(model, "optimizer", None) is None:
            return
        xb, yb = data[0], data[1] if len(data) > 1 else None
        if yb is None:
            return

        def loss_fn(y_true, y_pred):
            return model.compute_loss(y=y_true, y_pred=y_pred)

        report = diagnose_training_step(
            model, loss_fn, model.optimizer, xb, yb, finite_difference_entries=self.finite_difference_entries
        )
        self.reports.append(report)
        if self.print_fn is not None:
            self.print_fn(f"TrainingDoctor ({when}):\n{report}")
        if self.stop_on_error and not report.ok:
            model.stop_training = True
