"""Eager autodiff: the tape, GradientTape, forward mode, custom gradients."""
