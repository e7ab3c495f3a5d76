"""``tf.saved_model.save`` / ``tf.saved_model.load`` in tapeflow's own on-disk format.

``save(obj, export_dir, signatures=None)`` writes

* ``export_dir/saved_model.tapeflow`` — the object tree (attribute names as the checkpoint sees
  them), every traced concrete function of its ``tf.function`` attributes and the signatures, as
  serialized graphs (the traced ``FuncGraph``s, ops referred to by name);
* ``export_dir/variables/variables.safetensors`` — the variable values, keyed by checkpoint path.

``load(export_dir)`` rebuilds an object with the same attributes, whose functions are callable,
differentiable (``GradientTape`` sees through them to the restored variables) and restorable from a
``tf.train.Checkpoint`` of the original, without the original Python class. ``loaded.signatures``
maps names (``"serving_default"``) to functions taking keyword tensors and returning a dict, as TF.

TF's protobuf SavedModel (``saved_model.pb``) is **not** produced or read: TensorFlow cannot load
these directories, and tapeflow cannot load TF's. The graph file is Python's pickle format: load only
directories you trust (as with any pickle).
"""

from __future__ import annotations

import io
import os
import pickle
from typing import Any

import numpy as np

__all__ = ["save", "load", "SaveOptions", "LoadOptions", "contains_saved_model",
           "DEFAULT_SERVING_SIGNATURE_DEF_KEY", "SERVING", "TRAINING", "GPU", "TPU"]

# TF's signature and tag constants (tf.saved_model.signature_constants / tag_constants)
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
CLASSIFY_INPUTS, CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES = "inputs", "classes", "scores"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
PREDICT_INPUTS, PREDICT_OUTPUTS, PREDICT_METHOD_NAME = "inputs", "outputs", "tensorflow/serving/predict"
REGRESS_INPUTS, REGRESS_OUTPUTS, REGRESS_METHOD_NAME = "inputs", "outputs", "tensorflow/serving/regress"
SERVING, TRAINING, GPU, TPU = "serve", "train", "gpu", "tpu"
# TF's file-name constants (tf.saved_model.*): the names of a TF SavedModel's files (tapeflow's own format
# writes its graph to saved_model.tapeflow)
ASSETS_DIRECTORY, ASSETS_KEY, DEBUG_DIRECTORY = "assets", "saved_model_assets", "debug"
DEBUG_INFO_FILENAME_PB, SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT = (
    "saved_model_debug_info.pb", "saved_model.pb", "saved_model.pbtxt")
SAVED_MODEL_SCHEMA_VERSION, VARIABLES_DIRECTORY, VARIABLES_FILENAME = 1, "variables", "variables"

_GRAPH_FILE = "saved_model.tapeflow"
_VARIABLES = os.path.join("variables", "variables.safetensors")
_FORMAT_VERSION = 1


class SaveOptions:
    """Accepted for TF compatibility; of its options tapeflow reads ``experimental_custom_gradients``
    (custom gradients are saved, as TF's default)."""

    def __init__(self, **kwargs: Any) -> None:
        self.options = kwargs


class LoadOptions(SaveOptions):
    """Accepted for TF compatibility; tapeflow's format has no options."""


def contains_saved_model(export_dir: Any) -> bool:
    """Whether ``export_dir`` holds a SavedModel written by tapeflow."""
    return os.path.isfile(os.path.join(os.fspath(export_dir), _GRAPH_FILE))


# -- pickling graphs ------------------------------------------------------------------------------
def _make(cls: type, state: dict) -> Any:
    obj = cls.__new__(cls)
    for k, v in state.items():
        object.__setattr__(obj, k, v)
    return obj


def _slots_state(obj: Any) -> dict:
    names: list = []
    for klass in type(obj).__mro__:
        names += [s for s in getattr(klass, "__slots__", ()) if s != "__weakref__"]
    return {n: getattr(obj, n) for n in names if hasattr(obj, n)}


class _GraphPickler(pickle.Pickler):
    """Pickles traced graphs: ops by registry name, symbolic tensors by their fields, variables as
    references to the variables file (by checkpoint path)."""

    def __init__(self, file: Any, var_keys: dict[int, str], grad_fns: dict | None = None) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._var_keys = var_keys
        self._grad_fns = grad_fns or {}  # id(custom gradient closure) -> its traced _SavedGradFn

    def persistent_id(self, obj: Any) -> Any:
        from tapeflow.framework.variables import Variable

        if isinstance(obj, Variable):
            key = self._var_keys.get(id(obj))
            if key is None:
                raise ValueError(
                    f"tf.saved_model.save: a function reads variable '{obj.name}', which is not "
                    f"reachable from the saved object; assign it to an attribute of the object."
                )
            return ("variable", key)
        return None

    def reducer_override(self, obj: Any) -> Any:
        from tapeflow.graph.function import GraphFunction
        from tapeflow.graph.graph import Operation, SymbolicTensor
        from tapeflow.ops.registry import OpDef, get_op

        saved = self._grad_fns.get(id(obj))
        if saved is not None:
            return _SavedGradFn, (saved.function,)
        if isinstance(obj, OpDef):
            return get_op, (obj.name,)
        if isinstance(obj, SymbolicTensor):
            return _make, (type(obj), _slots_state(obj))
        if isinstance(obj, GraphFunction):  # its backward functions too: compiled callables are rebuilt on use
            return _make, (GraphFunction, {**obj.__dict__, "_compiled": None, "_compiled_saved": None})
        if isinstance(obj, Operation) and obj.attrs.get("instance") is not None:
            return _load_stateful_op, (_slots_state(obj),)
        return NotImplemented


_LOADED_INSTANCES: dict = {}  # while loading: a saved random op's stream number -> the loaded op's


def _load_stateful_op(state: dict) -> Any:
    """A random op of a loaded function owns a fresh stream, as a TF kernel created by loading does (it draws
    from its seeds' start, not on from where the saved function's op had got to); ops that shared one still do."""
    from tapeflow.graph.graph import Operation
    from tapeflow.ops import random_ops

    old = state["attrs"]["instance"]
    if old not in _LOADED_INSTANCES:
        random_ops._state.instances += 1
        _LOADED_INSTANCES[old] = random_ops._state.instances
    return _make(Operation, {**state, "attrs": {**state["attrs"], "instance": _LOADED_INSTANCES[old]}})


class _SavedGradFn:
    """A ``@tf.custom_gradient``'s gradient function traced into a concrete function when saved
    (TF's ``experimental_custom_gradients``): a loaded function is differentiated with it."""

    def __init__(self, function: Any) -> None:
        self.function = function

    def __call__(self, op: Any, *result_grads: Any) -> list:
        out = self.function(*result_grads)
        return list(out) if isinstance(out, (list, tuple)) else [out]


def _trace_custom_gradients(functions: list) -> dict:
    """``{id(grad_fn): _SavedGradFn}`` for the custom gradients traced into ``functions``' graphs: each
    gradient function is traced on the output gradients' specs. One that reads tensors of the forward
    graph cannot be traced on its own: saving raises NotImplementedError."""
    from tapeflow.framework.tensor_spec import TensorSpec
    from tapeflow.graph.function import function as tf_function

    found: dict = {}
    for cf in functions:
        for _pos, name, _inputs, outputs, grad_fn in getattr(cf._gf.graph, "custom_gradients", ()):
            if id(grad_fn) in found or isinstance(grad_fn, _SavedGradFn):
                continue
            specs = [TensorSpec(o.shape, o.dtype) for o in outputs]
            try:
                traced = tf_function(lambda *gs, _f=grad_fn: _f(None, *gs)).get_concrete_function(*specs)
            except (TypeError, ValueError) as e:
                raise NotImplementedError(
                    f"tf.saved_model.save: the gradient function of @tf.custom_gradient '{name}' reads tensors of "
                    f"the forward pass; saving such a gradient is not implemented in tapeflow ({e}). Compute "
                    "what it needs from its upstream gradient and the function's inputs instead.") from None
            found[id(grad_fn)] = _SavedGradFn(traced)
    return found


class _GraphUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, variables: dict[str, Any]) -> None:
        super().__init__(file)
        self._variables = variables

    def persistent_load(self, pid: Any) -> Any:
        kind, key = pid
        if kind != "variable" or key not in self._variables:
            raise pickle.UnpicklingError(f"SavedModel refers to an unknown variable {key!r}")
        return self._variables[key]


# -- saving -----------------------------------------------------------------------------------------
def _concrete_functions(fn: Any) -> list:
    """Every concrete function a ``tf.function`` has traced (its input_signature's one, traced now if needed)."""
    from tapeflow.graph.function import ConcreteFunction

    if isinstance(fn, ConcreteFunction):
        return [fn]
    if fn.input_signature is not None and not fn._cache:
        fn.get_concrete_function()
    out: list = []
    for cf in fn._cache.values():
        if not any(cf is x for x in out):
            out.append(cf)
    for cf in out:
        _retrace_for_save(fn, cf)
    return out


def _retrace_for_save(fn: Any, cf: Any) -> None:
    """As TF, saving traces each concrete function's Python function once more (TF keys traces by the save
    context too), so its Python side effects (a ``print``) run again; the graph saved is the one traced before,
    which this trace equals, and a later save does not trace it again. Only signatures of tensors and Python
    constants are traced again."""
    from tapeflow.framework import nest
    from tapeflow.framework.tensor_spec import TensorSpec
    from tapeflow.graph.function import _key

    args, kwargs = cf.structured_input_signature
    leaves = nest.flatten((args, kwargs))
    if not all(isinstance(x, (TensorSpec, bool, int, float, str, bytes, type(None))) for x in leaves):
        return
    specs = [TensorSpec(x.shape, x.dtype) if isinstance(x, TensorSpec) else x for x in leaves]
    args, kwargs = nest.pack_sequence_as((args, kwargs), specs)
    key = _key((tuple(args), kwargs), [])
    if ("save", key) in fn._cache:  # traced for an earlier save already: as TF, that trace is cached
        return
    fn._trace(tuple(args), kwargs, key)
    fn._cache[("save", key)] = cf


def _functions_of(obj: Any) -> dict[str, Any]:
    from tapeflow.graph.function import Function

    found: dict[str, Any] = {}
    for name in sorted(set(dir(type(obj))) | set(vars(obj))):
        if name.startswith("__") and name != "__call__":
            continue
        raw = vars(obj).get(name, getattr(type(obj), name, None))
        if isinstance(raw, Function):
            found[name] = getattr(obj, name)
    return found


def _keras_serving_function(model: Any) -> Any:
    """TF's default signature of a Keras model: ``serving_default(inputs=...)`` -> ``{"output_0": ...}``."""
    from tapeflow.keras.models import Model

    if not isinstance(model, Model):
        return None
    inputs = model.inputs if model._functional is not None or hasattr(model, "_input_tensor") else None
    if hasattr(model, "_input_tensor") and model._input_tensor is not None:
        inputs = [model._input_tensor]
    if not inputs and not model.built:
        return None  # TF: a model never called has no input signature, so no serving signature is saved
    if not inputs:
        raise NotImplementedError(
            f"tf.saved_model.save of Keras model '{model.name}' without known inputs: start "
            f"it with tf.keras.Input, or pass signatures=tf.function(..., input_signature=...)."
        )
    if len(inputs) != 1:
        raise NotImplementedError(
            f"tf.saved_model.save of a Keras model with {len(inputs)} inputs needs "
            f"signatures=...; tapeflow builds the default signature for one input only."
        )
    from tapeflow.graph.function import TensorSpec, function

    kt = inputs[0]
    spec = TensorSpec(kt.shape, kt.dtype, name="inputs")
    return function(lambda inputs: model(inputs, training=False), input_signature=[spec])


def _signature_outputs(value: Any) -> dict:
    from tapeflow.framework import nest

    if isinstance(value, dict):
        return dict(value)
    flat = nest.flatten(value)
    return {f"output_{i}": t for i, t in enumerate(flat)}


def _signature_specs(cf: Any) -> list[tuple[str, Any]]:
    """(keyword, TensorSpec) of each flat input of a concrete function, TF's signature names."""
    from tapeflow.framework import nest

    args, kwargs = cf.structured_input_signature
    specs = nest.flatten((args, kwargs))
    names = []
    params = []
    if cf._arg_template is not None:
        try:
            import inspect

            fn = getattr(cf, "_python_function", None)
            params = list(inspect.signature(fn).parameters) if fn is not None else []
        except (TypeError, ValueError):
            params = []
    for i, spec in enumerate(specs):
        name = getattr(spec, "name", None) or (params[i] if i < len(params) else f"input_{i}")
        names.append((name.split(":")[0], spec))
    return names


def save(obj: Any, export_dir: Any, signatures: Any = None, options: Any = None) -> None:
    """Writes ``obj`` (a ``tf.Module``), its variables and the concrete functions of its
    ``tf.function``s to ``export_dir`` in tapeflow's format (see the module docstring)."""
    from tapeflow.graph.function import ConcreteFunction, Function
    from tapeflow.train import checkpoint

    export_dir = os.fspath(export_dir)
    if not checkpoint._is_trackable(obj):
        raise ValueError(f"Expected a Trackable object for export, got {obj}.")
    variables, nodes = checkpoint._walk(obj)
    var_keys = {id(v): k for k, v in variables.items()}

    def describe(node: Any, seen: dict) -> dict:
        if id(node) in seen:
            return {"ref": seen[id(node)]}
        seen[id(node)] = len(seen)
        entry: dict = {"id": seen[id(node)], "children": {}, "functions": {}}
        for name, child in checkpoint._children(node) or []:
            from tapeflow.framework.variables import Variable

            if isinstance(child, Variable):
                entry["children"][name] = {"variable": var_keys[id(child)]}
            elif checkpoint._children(child) is not None:
                entry["children"][name] = describe(child, seen)
        if not isinstance(node, (list, tuple, dict)):
            for name, fn in _functions_of(node).items():
                entry["functions"][name] = _concrete_functions(fn)
        entry["kind"] = "list" if isinstance(node, (list, tuple)) else "dict" if isinstance(node, dict) else "object"
        return entry

    tree = describe(obj, {})
    sigs: dict[str, Any] = {}
    if signatures is None:
        # as TF's find_function_to_export: the one tf.function with an input_signature that has outputs
        with_sig = [fn for fn in _functions_of(obj).values()
                    if fn.input_signature is not None and fn.get_concrete_function().outputs]
        if len(with_sig) == 1:
            signatures = with_sig[0]
        elif not with_sig:
            signatures = _keras_serving_function(obj)
    if signatures is not None:
        if isinstance(signatures, (Function, ConcreteFunction)):
            signatures = {"serving_default": signatures}
        if not isinstance(signatures, dict):
            raise ValueError(
                f"signatures must be a tf.function with an input_signature, a concrete function or a "
                f"dict of them; got {type(signatures).__name__}"
            )
        for key, fn in signatures.items():
            if isinstance(fn, Function):
                if fn.input_signature is None:
                    raise ValueError(
                        f"Function {fn._name} used as signature '{key}' has no input_signature: pass "
                        f"tf.function(..., input_signature=[...]) or fn.get_concrete_function(specs)."
                    )
                fn = fn.get_concrete_function()
            if not isinstance(fn, ConcreteFunction):
                raise ValueError(f"signature '{key}' must be a tf.function or a concrete function, got {fn!r}")
            sigs[key] = fn
    for cf in sigs.values():
        cf._gf._compiled = None
    buf = io.BytesIO()
    payload = {
        "version": _FORMAT_VERSION,
        "tree": tree,
        "variables": {k: (v.name, bool(v.trainable)) for k, v in variables.items()},
        "signatures": {k: (cf, [n for n, _ in _signature_specs(cf)]) for k, cf in sigs.items()},
    }
    _strip_compiled(payload)
    functions = list(_all_concrete(payload))
    if not getattr(options, "options", {}).get("experimental_custom_gradients", True) and any(
            getattr(cf._gf.graph, "custom_gradients", None) for cf in functions):
        raise NotImplementedError("tf.saved_model.SaveOptions(experimental_custom_gradients=False) with a "
                                  "@tf.custom_gradient is not implemented in tapeflow (the gradient is always saved)")
    grad_fns = _trace_custom_gradients(functions)
    for saved in grad_fns.values():
        saved.function._gf._compiled = saved.function._gf._compiled_saved = None
    _GraphPickler(buf, var_keys, grad_fns).dump(payload)
    os.makedirs(os.path.join(export_dir, "variables"), exist_ok=True)
    checkpoint._write_file(
        os.path.join(export_dir, _VARIABLES), {k: checkpoint._to_array(v) for k, v in variables.items()}
    )
    checkpoint._atomic_write(os.path.join(export_dir, _GRAPH_FILE), buf.getvalue())


def _all_concrete(payload: dict):
    def cfs(tree: dict):
        for fns in tree.get("functions", {}).values():
            yield from fns
        for child in tree.get("children", {}).values():
            if "children" in child:
                yield from cfs(child)

    yield from cfs(payload["tree"])
    for cf, _ in payload["signatures"].values():
        yield cf


def _strip_compiled(payload: dict) -> None:
    """Drops the compiled callables (rebuilt from the graph on first call) from every function."""
    for cf in list(_all_concrete(payload)):
        gf = cf._gf
        gf._compiled = None
        gf._compiled_saved = None


# -- loading ----------------------------------------------------------------------------------------
class RestoredFunction:
    """A restored ``tf.function``: calls the concrete function whose signature matches the arguments."""

    def __init__(self, name: str, concrete_functions: list) -> None:
        self._name = name
        self.concrete_functions = list(concrete_functions)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        errors = []
        for cf in self.concrete_functions:
            try:
                return cf(*args, **kwargs)
            except (TypeError, ValueError) as e:
                errors.append(str(e))
        raise ValueError(
            f"Could not find matching concrete function to call loaded from the SavedModel. Got "
            f"{len(args)} positional and {len(kwargs)} keyword arguments for '{self._name}'; the "
            f"saved concrete functions are {[cf.pretty_printed_concrete_signature() for cf in self.concrete_functions]}"
            f" ({'; '.join(errors)})"
        )

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and len(self.concrete_functions) == 1:
            return self.concrete_functions[0]
        from tapeflow.framework import nest
        from tapeflow.graph.function import TensorSpec

        specs = [s for s in nest.flatten((args, kwargs)) if isinstance(s, TensorSpec)]
        for cf in self.concrete_functions:
            saved = [x for x in nest.flatten(cf.structured_input_signature) if isinstance(x, TensorSpec)]
            if len(saved) == len(specs) and all(a.is_compatible_with(b) for a, b in zip(saved, specs)):
                return cf
        raise ValueError(f"No saved concrete function of '{self._name}' matches {specs}.")

    def __get__(self, instance: Any, owner: Any = None) -> RestoredFunction:
        return self


class SignatureFunction:
    """A serving signature: keyword tensors in, a dict of named tensors out (TF's ``signatures[...]``)."""

    def __init__(self, cf: Any, names: list[str]) -> None:
        self._cf = cf
        self._names = names
        self.structured_input_signature = ((), {n: s for n, (_, s) in zip(names, _signature_specs(cf))})

    @property
    def structured_outputs(self) -> dict:
        """As TF's loaded signatures: a ``TensorSpec`` per output, named by its key."""
        from tapeflow.framework.tensor_spec import TensorSpec

        outputs = _signature_outputs(self._cf.structured_outputs)
        return {k: TensorSpec(t.shape, t.dtype, name=k) for k, t in outputs.items()}

    def _signature_text(self) -> str:
        from tapeflow.graph.function import _type_str

        specs = self.structured_input_signature[1]
        sig = ", ".join(f"{n}: {specs[n]!r}" for n in sorted(self._names))
        return f"(*, {sig}) -> {_type_str(self.structured_outputs)}"

    def __repr__(self) -> str:
        return f"<ConcreteFunction {self._signature_text()} at 0x{id(self):X}>"

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        from tapeflow.framework.tensor import Tensor

        if args:
            # TF binds keywords only, then falls back to the flat signature, which takes one positional tensor
            # when the signature has one input
            if len(args) == 1 and len(self._names) == 1 and not kwargs and isinstance(args[0], Tensor):
                kwargs = {self._names[0]: args[0]}
            else:
                flat = f"signature_wrapper_{self._cf.name}({', '.join(sorted(self._names))})"
                if len(args) > 1 or len(self._names) != 1:
                    why = f"{flat} takes {int(len(self._names) == 1)} positional arguments, got {len(args)}."
                elif kwargs:
                    why = f"{flat} got two values for '{self._names[0]}'."
                else:
                    why = (f"{flat}: expected argument #0(zero-based) to be a Tensor; got "
                           f"{type(args[0]).__name__} ({args[0]!r}).")
                raise TypeError(
                    f"Binding inputs to tf.function failed due to `too many positional arguments`. Received args: "
                    f"{args!r} and kwargs: {kwargs!r} for signature: {self._signature_text()}.\n"
                    f"Fallback to flat signature also failed due to: {why}")
        missing = [n for n in self._names if n not in kwargs]
        extra = [k for k in kwargs if k not in self._names]
        if missing or extra:
            raise TypeError(f"signature_wrapper: expected keyword arguments {self._names}, got {sorted(kwargs)}")
        from tapeflow.framework import nest

        args, kw = self._cf.structured_input_signature
        flat = [kwargs[n] for n in self._names]
        packed = nest.pack_sequence_as((args, kw), flat)
        return _signature_outputs(self._cf(*packed[0], **packed[1]))


class _SignatureMap(dict):
    """``loaded.signatures``: signature key -> function, printed as TF's ``_SignatureMap({...})``."""

    def __repr__(self) -> str:
        return f"_SignatureMap({dict.__repr__(self)})"


class _Restored:
    """An object rebuilt from a SavedModel: its variables, sub-objects and functions as attributes."""

    def __init__(self) -> None:
        object.__setattr__(self, "_children", {})

    def _trackable_children(self, *args: Any, **kwargs: Any) -> dict:
        return dict(self._children)

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(getattr(type(self), name, None), property):  # a saved attribute of that name (Keras's
            self._children[name] = value  # export archives save `variables` lists): the property returns it
            return
        object.__setattr__(self, name, value)

    @property
    def variables(self) -> Any:
        if "variables" in self._children:
            return self._children["variables"]
        from tapeflow.train import checkpoint

        return tuple(checkpoint._walk(self)[0].values())

    @property
    def trainable_variables(self) -> Any:
        if "trainable_variables" in self._children:
            return self._children["trainable_variables"]
        return tuple(v for v in self.variables if v.trainable)


def load(export_dir: Any, tags: Any = None, options: Any = None) -> Any:
    """Loads a directory written by ``tf.saved_model.save`` (tapeflow's format)."""
    from tapeflow.framework.variables import Variable
    from tapeflow.train import checkpoint

    export_dir = os.fspath(export_dir)
    graph_file = os.path.join(export_dir, _GRAPH_FILE)
    if not os.path.isfile(graph_file):
        if os.path.isfile(os.path.join(export_dir, "saved_model.pb")):
            raise NotImplementedError(
                f"{export_dir} is a TensorFlow (protobuf) SavedModel; tapeflow reads only "
                f"the SavedModels it writes itself (tf.saved_model.save in tapeflow)."
            )
        raise OSError(f"SavedModel file does not exist at: {export_dir}/{{{_GRAPH_FILE}}}")
    arrays, _ = checkpoint._read_file(os.path.join(export_dir, _VARIABLES))
    with open(graph_file, "rb") as f:
        data = f.read()
    meta = _peek_variables(data)
    variables = {
        k: Variable(np.array(arrays[k], copy=True), name=meta[k][0].split(":")[0], trainable=meta[k][1]) for k in meta
    }
    _LOADED_INSTANCES.clear()
    try:
        payload = _GraphUnpickler(io.BytesIO(data), variables).load()
    finally:
        _LOADED_INSTANCES.clear()
    if payload.get("version") != _FORMAT_VERSION:
        raise ValueError(f"{graph_file}: unsupported tapeflow SavedModel version {payload.get('version')}")
    built: dict[int, Any] = {}

    def build(entry: dict) -> Any:
        if "ref" in entry:
            return built[entry["ref"]]
        kind = entry["kind"]
        if kind in ("list", "dict"):
            items = {
                name: (variables[c["variable"]] if "variable" in c else build(c))
                for name, c in entry["children"].items()
            }
            value = [items[k] for k in sorted(items, key=int)] if kind == "list" else items
            built[entry["id"]] = value
            return value
        functions = {name: RestoredFunction(name, cfs) for name, cfs in entry["functions"].items()}
        cls = type("_UserObject", (_Restored,), {k: v for k, v in functions.items() if k == "__call__"})
        node = cls()
        built[entry["id"]] = node
        for name, child in entry["children"].items():
            value = variables[child["variable"]] if "variable" in child else build(child)
            node._children[name] = value
            setattr(node, name, value)
        for name, fn in functions.items():
            if name != "__call__":
                setattr(node, name, fn)
        return node

    root = build(payload["tree"])
    root.signatures = _SignatureMap(
        {k: SignatureFunction(cf, names) for k, (cf, names) in payload["signatures"].items()})
    return root


class _PeekUnpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        return None


def _peek_variables(data: bytes) -> dict:
    """The ``{key: (name, trainable)}`` table of a graph file (read before the variables exist)."""
    return _PeekUnpickler(io.BytesIO(data)).load()["variables"]


from tapeflow.framework.missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("tf.saved_model", frozenset({"Asset", "experimental"}))
