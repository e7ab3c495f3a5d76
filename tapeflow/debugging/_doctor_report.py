"""The training doctor's findings and report: the kinds of finding, severities, thresholds,
``Finding`` and ``TrainingReport`` (see ``doctor.py``)."""

from __future__ import annotations

import dataclasses



# The kinds of finding (stable strings: tests and tools match on them).
NONE_GRADIENT = "none_gradient"
ZERO_GRADIENT = "zero_gradient"
NONFINITE_GRADIENT = "nonfinite_gradient"
EXPLODING_GRADIENT = "exploding_gradient"
VANISHING_GRADIENT = "vanishing_gradient"
NOT_IN_VAR_LIST = "not_in_var_list"
FOREIGN_VARIABLE = "foreign_variable"
ZERO_LEARNING_RATE = "zero_learning_rate"
LOSS_NOT_CONNECTED = "loss_not_connected"
SUM_REDUCTION = "sum_reduction"
GRADIENT_MISMATCH = "gradient_mismatch"

KINDS = (
    NONE_GRADIENT,
    ZERO_GRADIENT,
    NONFINITE_GRADIENT,
    EXPLODING_GRADIENT,
    VANISHING_GRADIENT,
    NOT_IN_VAR_LIST,
    FOREIGN_VARIABLE,
    ZERO_LEARNING_RATE,
    LOSS_NOT_CONNECTED,
    SUM_REDUCTION,
    GRADIENT_MISMATCH,
)

ERROR = "error"
WARNING = "warning"

# Thresholds (documented in the messages that use them).
EXPLODING_RATIO = 1e3  # global gradient norm / global weight norm above this: exploding
VANISHING_RATIO = 1e-10  # a variable's gradient norm / its weight norm below this: vanishing
SUM_RATIO = 1.5  # gradient norm on the batch repeated twice / on the batch, above this: a sum
FD_RTOL = 0.03  # autodiff vs central difference, relative (where the loss is smooth at the step size)


@dataclasses.dataclass
class Finding:
    """One problem the doctor found.

    ``kind`` is one of ``KINDS``; ``variables`` names the variables concerned
    (their Keras paths, e.g. ``"dense_1/kernel"``); ``message`` says what is
    wrong and why; ``fix`` what to change; ``severity`` is ``"error"`` (the
    step is broken) or ``"warning"`` (likely a problem). ``op`` names the op
    involved where one is known; ``details`` holds supporting lines."""

    kind: str
    variables: list
    message: str
    fix: str
    severity: str = ERROR
    op: str | None = None
    details: list = dataclasses.field(default_factory=list)

    def __str__(self) -> str:
        head = f"{self.kind} ({self.severity})"
        if self.variables:
            shown = ", ".join(self.variables[:8]) + (
                f", ... ({len(self.variables)} in all)" if len(self.variables) > 8 else ""
            )
            head += f": {shown}"
        lines = [head, f"  {self.message}"]
        lines += [f"  {d}" for d in self.details]
        lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


@dataclasses.dataclass
class TrainingReport:
    """What ``diagnose_training_step`` found: ``print()`` it, or read
    ``.findings`` (``Finding`` objects); ``.ok`` is True when no finding is an
    error. ``.loss`` is the loss of the diagnosed step, ``.notes`` says which
    checks were skipped and why, ``.stats`` holds the norms measured."""

    findings: list
    loss: float | None
    notes: list = dataclasses.field(default_factory=list)
    stats: dict = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    @property
    def kinds(self) -> list:
        return [f.kind for f in self.findings]

    def __getitem__(self, i: int) -> Finding:
        return self.findings[i]

    def __len__(self) -> int:
        return len(self.findings)

    def __str__(self) -> str:
        n_err = sum(f.severity == ERROR for f in self.findings)
        n_warn = len(self.findings) - n_err
        loss = "?" if self.loss is None else f"{self.loss:.6g}"
        nv = self.stats.get("variables", 0)
        if not self.findings:
            head = f"Training-step report: no problems found (loss {loss}, {nv} variable(s) in var_list"
            if "gradient_norm" in self.stats:
                head += (
                    f", gradient norm {self.stats['gradient_norm']:.3g}, weight norm {self.stats['weight_norm']:.3g}"
                )
            head += ")."
        else:
            parts = []
            if n_err:
                parts.append(f"{n_err} error(s)")
            if n_warn:
                parts.append(f"{n_warn} warning(s)")
            head = f"Training-step report: {', '.join(parts)} (loss {loss}, {nv} variable(s) in var_list)."
        out = [head]
        for k, f in enumerate(self.findings, 1):
            text = str(f).replace("\n", "\n ")
            out.append(f"{k}. {text}")
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    __repr__ = __str__
