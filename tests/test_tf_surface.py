"""TF 2 surface programs print and introspect: concrete-function signatures, graph introspection,
tf.device, tf.version, tf.dtypes, tf.compat.v1, py_function as a decorator; texts pinned against TF 2.21."""

import pytest

import tapeflow as tf


def _f():
    @tf.function
    def f(x, y=2):
        return x * y

    return f


def test_concrete_function_prints_tf_signature_block():
    f = _f()
    cf = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    assert str(cf) == (
        "ConcreteFunction Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None,), dtype=tf.float32, name=None)\n"
        "  y (POSITIONAL_OR_KEYWORD): Literal[2]\n"
        "Output Type:\n"
        "  TensorSpec(shape=(None,), dtype=tf.float32, name=None)\n"
        "Captures:\n"
        "  None")
    assert repr(cf).startswith("<ConcreteFunction (x: TensorSpec(shape=(None,), dtype=tf.float32, name=None), "
                               "y: Literal[2]) -> TensorSpec(shape=(None,), dtype=tf.float32, name=None) at 0x")
    assert str(cf.function_type) == ("(x: TensorSpec(shape=(None,), dtype=tf.float32, name=None), y: Literal[2]) -> "
                                     "TensorSpec(shape=(None,), dtype=tf.float32, name=None)")
    f(tf.constant(1.0))
    f(tf.constant([1, 2]))
    blocks = f.pretty_printed_concrete_signatures().split("\n\n")
    assert len(blocks) == 3 and "TensorSpec(shape=(2,), dtype=tf.int32, name=None)" in blocks[2]


def test_structured_outputs_and_captures_in_the_signature():
    @tf.function
    def g(a, b):
        return {"s": a + b, "d": (a - b, None)}

    text = str(g.get_concrete_function(tf.constant(1.0), tf.constant(2.0)))
    assert ("  Dict[['s', TensorSpec(shape=(), dtype=tf.float32, name=None)], ['d', Tuple[TensorSpec(shape=(), "
            "dtype=tf.float32, name=None), Literal[None]]]]") in text
    v = tf.Variable(1.0)

    @tf.function
    def k(x):
        return x + v

    captures = str(k.get_concrete_function(tf.constant(1.0))).split("Captures:\n")[1]
    assert captures == f"  {id(v)}: TensorSpec(shape=(), dtype=tf.resource, name=None)"


def test_graph_operations_and_graph_def():
    @tf.function
    def f(x):
        return x * 2.0 + x

    g = f.get_concrete_function(tf.TensorSpec([None], tf.float32)).graph
    # TF 2.21's text
    assert str(g.get_operations()) == (
        "[<tf.Operation 'x' type=Placeholder>, <tf.Operation 'mul/y' type=Const>, <tf.Operation 'mul' type=Mul>, "
        "<tf.Operation 'add' type=AddV2>, <tf.Operation 'Identity' type=Identity>]")
    nodes = {n.name: n for n in g.as_graph_def().node}
    assert nodes["mul"].input == ["x", "mul/y"] and nodes["add"].input == ["mul", "x"]
    assert float(nodes["mul/y"].attr["value"]) == 2.0
    assert g.get_operation_by_name("x").type == "Placeholder"
    assert g.get_operation_by_name("Identity").inputs[0].name == "add:0"


def test_device_version_dtypes_compat():
    with tf.device("/GPU:0"):
        a = tf.constant(1.0)
    assert a.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert tf.version.VERSION == "2.21.0" and tf.__version__ == tf.version.VERSION  # equal, as in TF
    import pathlib
    import re
    pyproject = (pathlib.Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert tf.version.TAPEFLOW_VERSION == re.search(r'^version = "(.*)"', pyproject, re.M).group(1)
    assert tf.dtypes.as_dtype("float32") is tf.float32 and tf.dtypes.DType is tf.DType
    assert tf.dtypes.cast(tf.constant(1.7), tf.int32).numpy() == 1
    assert tf.compat.v1.enable_eager_execution() is None and tf.compat.v1.executing_eagerly()
    assert tf.compat.v2 is tf
    with pytest.raises(RuntimeError, match="tf.placeholder\\(\\) is not compatible with eager execution"):
        tf.compat.v1.placeholder(tf.float32)
    assert isinstance(tf.compat.v1.Session().graph, tf.Graph)  # TF 1 graph mode: tests/test_compat_v1_graph.py
    with pytest.raises(NotImplementedError, match="tf.compat.v1.get_default_graph"):
        tf.compat.v1.get_default_graph()


def test_py_function_as_a_decorator():
    @tf.py_function(Tout=tf.float32)
    def pf(x):
        return x * 2

    assert float(pf(tf.constant(2.0))) == 4.0
    assert float(tf.function(lambda x: pf(x) + 1)(tf.constant(1.0))) == 3.0
