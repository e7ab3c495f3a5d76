"""Node names of traced graphs as TF 2.21 gives them (literals from TF): op names from the Python API
(``add``, ``MatMul``, ``Greater``), the Python values ops convert (``add/y``), ``tf.constant``'s ``Const``,
name scopes, case-insensitive uniquifying (``Add_1`` after ``add``) and an ``Identity`` per output."""

import pytest

import tapeflow as tf


def _nodes(f, *args):
    return [(n.name, n.op, list(n.input)) for n in f.get_concrete_function(*args).graph.as_graph_def().node]


def test_operator_and_api_names_scopes_and_constants():
    scopes = []

    @tf.function
    def h(x):
        with tf.name_scope("blk") as s1:
            y = x - 1.0
        with tf.name_scope("blk") as s2:
            z = tf.matmul(y, y) @ y
        scopes.append((s1, s2))
        c = tf.constant(3.0, name="three")
        return 1.0 / z[0], tf.add(x, c), x + c, tf.greater(x, 0.5)

    names = [(n, op, ins) for n, op, ins in _nodes(h, tf.TensorSpec([2, 2], tf.float32))]
    # TF's, except that tapeflow's one matmul op is BatchMatMulV2 and its strided slice takes no stack consts
    assert names == [
        ("x", "Placeholder", []), ("blk/sub/y", "Const", []), ("blk/sub", "Sub", ["x", "blk/sub/y"]),
        ("blk_1/MatMul", "BatchMatMulV2", ["blk/sub", "blk/sub"]),
        ("blk_1/matmul_1", "BatchMatMulV2", ["blk_1/MatMul", "blk/sub"]), ("three", "Const", []),
        ("strided_slice", "StridedSlice", ["blk_1/matmul_1"]), ("truediv/x", "Const", []),
        ("truediv", "RealDiv", ["truediv/x", "strided_slice"]), ("Add", "AddV2", ["x", "three"]),
        ("add_1", "AddV2", ["x", "three"]), ("Greater/y", "Const", []), ("Greater", "Greater", ["x", "Greater/y"]),
        ("Identity", "Identity", ["truediv"]), ("Identity_1", "Identity", ["Add"]),
        ("Identity_2", "Identity", ["add_1"]), ("Identity_3", "Identity", ["Greater"]),
    ]
    assert scopes == [("blk/", "blk_1/")]


def test_unrolled_python_loop_names_and_node_count():
    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)
        return loss

    assert _nodes(train, [(1, 1)] * 2) == [
        ("Const", "Const", []), ("Abs/x", "Const", []), ("Abs", "Abs", ["Abs/x"]), ("add", "AddV2", ["Const", "Abs"]),
        ("Abs_1/x", "Const", []), ("Abs_1", "Abs", ["Abs_1/x"]), ("add_1", "AddV2", ["add", "Abs_1"]),
        ("Identity", "Identity", ["add_1"]),
    ]
    # the tf.function guide's measure_graph_size: TF counts 11 and 32 nodes
    assert len(train.get_concrete_function([(1, 1)] * 3).graph.as_graph_def().node) == 11
    assert len(train.get_concrete_function([(1, 1)] * 10).graph.as_graph_def().node) == 32


def test_guide_graph_inputs_and_leaked_tensor_name():
    @tf.function
    def double(a):
        return a + a

    graph = double.get_concrete_function(tf.constant("a")).graph
    assert [f"{n.input} -> {n.name}" for n in graph.as_graph_def().node] == [
        "[] -> a", "['a', 'a'] -> add", "['add'] -> Identity"]
    leaked = []

    @tf.function
    def leaky(a):
        leaked.append(a + 1)
        return leaked[-1]

    leaky(tf.constant(1))
    assert repr(leaked[0]) == "<tf.Tensor 'add:0' shape=() dtype=int32>"
    assert str(leaked[0]) == 'Tensor("add:0", shape=(), dtype=int32)'

    @tf.function
    def captures_leaked_tensor(b):
        return b + leaked[0]

    with pytest.raises(TypeError) as e:  # raised as it is (TF finds it after tracing), TF's text
        captures_leaked_tensor(tf.constant(2))
    text = str(e.value)
    assert text.startswith(
        "<tf.Tensor 'add:0' shape=() dtype=int32> is out of scope and cannot be used here. Use return values, "
        "explicit Python locals or TensorFlow collections to access it.\nPlease see https://www.tensorflow.org/"
        "guide/function#all_outputs_of_a_tffunction_must_be_return_values for more information.\n")
    assert text.endswith("cannot be accessed from here, because it was defined in FuncGraph(name=leaky, id="
                         f"{id(leaky.get_concrete_function(tf.constant(1)).graph)}), which is out of scope.")


def test_errors_while_tracing_say_in_user_code_as_tf():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v

    line = f.python_function.__code__.co_firstlineno + 2
    with pytest.raises(ValueError) as e:
        f(1.0)
    assert str(e.value) == (  # TF 2.21's message, this file's frame
        f'in user code:\n\n    File "{__file__}", line {line}, in f  *\n        v = tf.Variable(1.0)\n\n'
        "    ValueError: tf.function only supports singleton tf.Variables created on the first call. Make sure the "
        "tf.Variable is only created once or created outside tf.function. See "
        "https://www.tensorflow.org/guide/function#creating_tfvariables for more information.\n")

    @tf.function
    def h(x):
        raise KeyError("k")

    with pytest.raises(KeyError) as e:
        h(1)
    assert str(e.value).endswith(", in h  *\n        raise KeyError(\"k\")\n\n    KeyError: 'k'\n")

    @tf.function(autograph=False)
    def plain(x):
        return x.nonexistent

    with pytest.raises(AttributeError) as e:
        plain(tf.constant(1))
    assert str(e.value) == "'SymbolicTensor' object has no attribute 'nonexistent'"
