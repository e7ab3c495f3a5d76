"""Specs for the graph-mode ops: the function call (tapeflow/graph/functional_ops.py)
and control flow (tapeflow/graph/control_flow.py).

A tf.function called under a tape is one StatefulPartitionedCall op whose
gradient is its backward function (2nd order: the full backward). The
control-flow ops exist only in graphs, so their specs trace a small graph
and replay it eagerly, op by op, where the tapes record If/Case/While.
"""

import tapeflow as tf
from tapeflow.framework import nest
from tapeflow.framework.execute import execute
from tapeflow.graph import control_flow
from tapeflow.graph.function import replay
from tapeflow.graph import tensor_array
from tapeflow.graph import functional_ops
from tapeflow.graph.graph import FuncGraph, graph_scope
from tests.op_specs import Arg, OpSpec


@tf.function
def _f(x, y):
    return tf.sin(x) * y + x * x


@tf.function
def _pair(x):
    return tf.tanh(x), tf.reduce_sum(x * x)


def _graph_op(build):
    """fn(*tensors): traces ``build`` on placeholders, replays it eagerly."""
    def fn(*xs):
        g = FuncGraph("spec")
        with graph_scope(g):
            phs = [g.add_placeholder(x.shape.as_list(), x.dtype) for x in xs]
            out = build(*phs)
        m = replay(g, {p._id: x for p, x in zip(phs, xs)})
        outs = [m[o._id] for o in nest.flatten(out)]
        return outs if len(outs) > 1 else outs[0]

    return fn


def _cond(x, y):
    return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * y, lambda: x - y)


def _case(i, x):
    return tf.switch_case(i, [lambda: x * x, lambda: tf.exp(x) * 2.0, lambda: -x])


def _while(x, y):
    _, a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.sin(a) * x + y), [tf.constant(0), x])
    return a


_K = tf.constant(1)


def _py(x, y):
    return execute(functional_ops.EAGER_PY_FUNC, (x, y),
                   {"func": lambda a, b: (tf.sin(a) * b, a * a), "touts": [tf.float64, tf.float64]})

SPECS = [
    OpSpec("StatefulPartitionedCall", _f, [Arg((3, 4)), Arg((4,))], name="broadcast"),
    OpSpec("StatefulPartitionedCall", lambda x: list(_pair(x)), [Arg((2, 3))], name="two_outputs"),
    OpSpec("If", _graph_op(_cond), [Arg((2, 3), low=0.5, high=2.0), Arg((3,))], name="true"),
    OpSpec("If", _graph_op(_cond), [Arg((2, 3), low=-2.0, high=-0.5), Arg((3,))], name="false"),
    OpSpec("Case", _graph_op(_case), [Arg(value=1, dtype=None, diff=False), Arg((2, 2))], name="branch1"),
    OpSpec("Case", _graph_op(_case), [Arg(value=7, dtype=None, diff=False), Arg((2, 2))], name="default"),
    OpSpec("While", _graph_op(_while), [Arg((3,), low=-1.0, high=1.0), Arg((3,))]),
    OpSpec("WhileHistoryGet", lambda h: execute(control_flow.HISTORY_GET, (h, _K)), [Arg((3, 2))]),
    OpSpec("WhileHistoryPut", lambda h, g: execute(control_flow.HISTORY_PUT, (h, _K, g)),
           [Arg((3, 2), diff=False), Arg((2,))]),
    OpSpec("TensorListSetItem", lambda b, v: execute(tensor_array.SET_ITEM, (b, _K, v), {"grow": False}),
           [Arg((3, 2)), Arg((2,))]),
    OpSpec("TensorListSetItem", lambda b, v: execute(tensor_array.SET_ITEM, (b, tf.constant(4), v), {"grow": True}),
           [Arg((3, 2)), Arg((2,))], name="grow"),
    OpSpec("EagerPyFunc", _py, [Arg((3,)), Arg((3,))]),
    OpSpec("TensorListGetItem", lambda b: execute(tensor_array.GET_ITEM, (b, _K)), [Arg((3, 2))]),
    OpSpec("TensorListResizeLike", lambda g, b: execute(tensor_array.PAD_LIKE, (g, b)),
           [Arg((2, 2)), Arg((3, 2), diff=False)], name="pad"),
    OpSpec("TensorListResizeLike", lambda g, b: execute(tensor_array.PAD_LIKE, (g, b)),
           [Arg((4, 2)), Arg((3, 2), diff=False)], name="cut"),
]
