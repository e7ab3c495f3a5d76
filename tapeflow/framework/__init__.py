"""Framework objects: dtypes, shapes, Tensor, Variable, errors, execution."""
