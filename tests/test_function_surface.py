"""tf.function surface pinned against TF 2.21 (the tf.function guide): strings, literals, leaks, trace order,
tf.Variable arguments keyed by their spec."""

import pytest

import tapeflow as tf


def test_string_tensors_through_tf_function():
    @tf.function
    def double(a):
        return a + a

    assert str(double(tf.constant("a"))) == "tf.Tensor(b'aa', shape=(), dtype=string)"
    cf = double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.string))
    assert cf(tf.constant("c")).numpy() == b"cc"
    assert cf(a=tf.constant("b")).numpy() == b"bb"
    with pytest.raises(tf.errors.InvalidArgumentError):
        cf(tf.constant(1))


def test_concrete_function_rejects_another_python_literal():
    @tf.function
    def pow_(a, b):
        return a ** b

    square = pow_.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    assert float(square(tf.constant(10.0))) == 100.0
    assert float(square(tf.constant(3.0), b=2)) == 9.0
    with pytest.raises(TypeError, match="Literal\\[2\\]"):
        square(tf.constant(10.0), b=3)


def test_leaked_tensors():
    leaked = []

    @tf.function
    def leaky(a):
        leaked.append(a + 1)
        return a + 2

    assert int(leaky(tf.constant(1))) == 3
    with pytest.raises(AttributeError) as e:
        leaked[0].numpy()
    assert str(e.value) == "'SymbolicTensor' object has no attribute 'numpy'"

    @tf.function
    def uses_leak(b):
        return b + leaked[0]

    with pytest.raises(TypeError, match="is out of scope and cannot be used here"):
        uses_leak(tf.constant(2))


def test_cond_traces_the_true_branch_first():
    order = []

    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: order.append("true") or x, lambda: order.append("false") or -x)

    assert float(f(tf.constant(-2.0))) == 2.0
    assert order == ["true", "false"]


def test_variables_of_one_spec_share_a_trace():
    traces = []

    @tf.function
    def inc(v, x):
        traces.append(1)
        v.assign_add(x)
        return v * 2.0

    a, b = tf.Variable(1.0), tf.Variable(10.0)
    assert float(inc(a, 1.0)) == 4.0  # (x: a Python literal, part of the trace's key)
    assert float(inc(b, 1.0)) == 22.0
    assert (a.numpy(), b.numpy()) == (2.0, 11.0)
    assert len(traces) == 1 and inc.experimental_get_tracing_count() == 1
    with tf.GradientTape() as tape:
        y = inc(b, 1.0)
    assert float(tape.gradient(y, b)) == 2.0
    inc(tf.Variable([1.0, 2.0]), tf.constant([1.0, 1.0]))  # other specs: another trace
    assert len(traces) == 2

    @tf.function
    def loop(v):
        for _ in tf.range(3):
            v.assign_add(1.0)
        return v.read_value()

    assert float(loop(a)) == 5.0 and float(loop(b)) == 15.0  # b: 10 + 1 + 1, then + 3


def test_custom_trace_types_and_tf_types():
    class FruitTraceType(tf.types.experimental.TraceType):
        def __init__(self, fruit):
            self.fruit_type, self.fruit_value = type(fruit), fruit

        def is_subtype_of(self, other):
            return type(other) is FruitTraceType and self.fruit_type is other.fruit_type

        def most_specific_common_supertype(self, others):
            return self if all(self == o for o in others) else None

        def placeholder_value(self, placeholder_context=None):
            return self.fruit_value

        def __eq__(self, other):
            return type(other) is FruitTraceType and self.fruit_type == other.fruit_type

        def __hash__(self):
            return hash(self.fruit_type)

    class Apple:
        flavor = tf.constant([1, 2])

        def __tf_tracing_type__(self, context):
            return FruitTraceType(self)

    @tf.function
    def flavor(fruit):
        return fruit.flavor + 1

    assert flavor(Apple()).numpy().tolist() == [2, 3]
    assert flavor(Apple()).numpy().tolist() == [2, 3]
    assert flavor.experimental_get_tracing_count() == 1
    assert isinstance(flavor, tf.types.experimental.GenericFunction)
    cf = flavor.get_concrete_function(Apple())
    assert isinstance(cf, tf.types.experimental.ConcreteFunction)
    assert isinstance(cf.function_type, tf.types.experimental.FunctionType)


def test_inference_fn_recursion_and_to_code(tmp_path):
    @tf.function
    def double(a):
        return a + a

    cf = double.get_concrete_function(tf.constant("a"))
    assert cf.inference_fn(tf.constant("x")).numpy() == b"xx"
    src = tmp_path / "rec_mod.py"
    src.write_text("import tapeflow as tf\n\n@tf.function\ndef recursive_fn(n):\n    if n > 0:\n"
                   "        return recursive_fn(n - 1)\n    else:\n        return 1\n\n"
                   "def relu(x):\n    if tf.greater(x, 0):\n        return x\n    else:\n        return 0\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("rec_mod", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from tapeflow.graph.autograph import StagingError

    with pytest.raises(StagingError, match="RecursionError"):
        mod.recursive_fn(tf.constant(5))
    assert int(mod.recursive_fn(5)) == 1  # Python recursion on Python values: one trace per value, as TF
    code = tf.autograph.to_code(mod.relu)
    assert code.startswith("def tf__relu(x):") and "ag__.if_stmt(" in code
    tf.autograph.set_verbosity(0)


def test_binding_errors_are_tf_type_errors_with_tf_text():
    @tf.function
    def f(x):
        return x + 1

    cf = f.get_concrete_function(tf.constant(1.0))
    with pytest.raises(TypeError, match="^Binding inputs to tf.function failed due to `too many positional arguments`"):
        cf(tf.constant(1.0), tf.constant(2.0))
    with pytest.raises(TypeError, match="`missing a required argument: 'x'`. Received args: \\(\\) and kwargs: "
                                        "\\{\\} for signature: \\(x: TensorSpec"):
        cf()
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        cf(tf.constant(1.0), y=2)
    with pytest.raises(TypeError) as e:
        f(1, 2)
    assert str(e.value) == ("Binding inputs to tf.function failed due to `too many positional arguments`. Received "
                            "args: (1, 2) and kwargs: {} for signature: (x).")


def test_input_signature_cast_error_is_tf_text():
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        return x

    with pytest.raises(TypeError) as e:
        next_collatz(tf.constant([1.0, 2.0]))
    assert str(e.value) == (
        "Binding inputs to tf.function failed due to `Can not cast TensorSpec(shape=(2,), dtype=tf.float32, "
        "name=None) to TensorSpec(shape=(None,), dtype=tf.int32, name=None)`. Received args: (<tf.Tensor: "
        "shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>,) and kwargs: {} for signature: "
        "(x: TensorSpec(shape=(None,), dtype=tf.int32, name=None)).")

    @tf.function(input_signature=(tf.TensorSpec([2], tf.float32), tf.TensorSpec([], tf.int32)))
    def two(a, b):
        return a

    with pytest.raises(TypeError, match=r"for signature: \(a: TensorSpec\(shape=\(2,\), dtype=tf.float32, "
                                         r"name=None\), b: TensorSpec\(shape=\(\), dtype=tf.int32, name=None\)\)\.$"):
        two(tf.constant([1.0, 2.0]), tf.constant(1.0))


def test_outputs_are_the_identity_nodes_outputs():
    # TF copies each output through an Identity node: structured_outputs/outputs show those (TF 2.21's text)
    @tf.function
    def f(x, y=2):
        i = tf.constant(0)
        while i < 3:
            i += 1
        return {"a": x * y, "b": i, "c": 1}

    cf = f.get_concrete_function(tf.TensorSpec([None, 3], tf.float32), 3)
    assert str(cf.structured_outputs) == ("{'a': <tf.Tensor 'Identity:0' shape=(None, 3) dtype=float32>, "
                                          "'b': <tf.Tensor 'Identity_1:0' shape=() dtype=int32>, "
                                          "'c': <tf.Tensor 'Identity_2:0' shape=() dtype=int32>}")
    assert str(cf.outputs[:2]) == ("[<tf.Tensor 'Identity:0' shape=(None, 3) dtype=float32>, "
                                   "<tf.Tensor 'Identity_1:0' shape=() dtype=int32>]")
    assert cf.outputs[0].op.type == "Identity" and cf.outputs[0].op.inputs[0].name == "mul:0"
    assert cf(tf.ones([1, 3]))["a"].numpy().tolist() == [[3.0, 3.0, 3.0]]
