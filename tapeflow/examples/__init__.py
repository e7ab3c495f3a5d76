"""Runnable example programs (``python -m tapeflow.examples.<name>``)."""
