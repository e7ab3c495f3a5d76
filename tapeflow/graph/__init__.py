"""Graph mode: tracing (``tf.function``), compiled execution, symbolic
gradients, control flow and AutoGraph."""
