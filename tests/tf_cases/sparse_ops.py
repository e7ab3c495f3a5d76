"""Cases of tf.sparse, eager and inside tf.function (a SparseTensor built from traced tensors, or passed in by
its SparseTensorSpec), each ``fn(tf)``; recorded from real TF by tools/tf_api/record.py, replayed by
tests/test_tf_cases.py. A SparseTensor result is given as ``[indices, values, dense_shape]``."""

import numpy as np

X = np.array([[0.0, 1.5, 0.0, -2.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 4.0, 1.0]], np.float32)


def _parts(sp):
    return [sp.indices, sp.values, sp.dense_shape]


def _from(tf, x):
    idx = tf.where(tf.not_equal(x, 0))
    return tf.SparseTensor(idx, tf.gather_nd(x, idx), tf.shape(x, out_type=tf.int64))


def _st(tf, indices, values, shape):
    return tf.SparseTensor(np.array(indices, np.int64).reshape(-1, len(shape)), values, shape)


def _graph(body, sparse_out=True):
    """``body(tf, sp)`` on the SparseTensor of X's non-zeros, built inside a tf.function of unknown batch size."""
    def fn(tf):
        f = tf.function(lambda x: body(tf, _from(tf, x)), input_signature=[tf.TensorSpec([None, 4], tf.float32)])
        out = f(tf.constant(X))
        return _parts(out) if sparse_out else out
    return fn


def _eager(body, sparse_out=True):
    def fn(tf):
        out = body(tf, _from(tf, tf.constant(X)))
        return _parts(out) if sparse_out else out
    return fn


def _both(name, body, sparse_out=True):
    return {f"{name}": _eager(body, sparse_out), f"{name}_in_function": _graph(body, sparse_out)}


def _grad(body):
    """The gradient w.r.t. X of sum(body(sp) * weights), through a SparseTensor built from X (eager)."""
    def fn(tf):
        x = tf.constant(X)
        with tf.GradientTape() as t:
            t.watch(x)
            out = body(tf, _from(tf, x))
            out = out if not isinstance(out, tf.SparseTensor) else tf.sparse.to_dense(tf.sparse.reorder(out))
            loss = tf.reduce_sum(out * tf.cos(tf.range(tf.size(out), dtype=tf.float32)[:1] + tf.cast(
                tf.reshape(tf.range(tf.size(out)), tf.shape(out)), tf.float32)))
        return t.gradient(loss, x)
    return fn


def _spec_arg(tf):
    f = tf.function(lambda s: tf.sparse.reduce_sum(s, axis=0),
                    input_signature=[tf.SparseTensorSpec([None, 3], tf.float32)])
    a = f(_st(tf, [[0, 1], [1, 0]], [1.0, 2.0], [2, 3]))
    b = f(_st(tf, [[0, 1], [1, 0], [2, 2]], [1.0, 2.0, 5.0], [3, 3]))
    return [a, b]


def _retrace_count(tf):
    f = tf.function(lambda s: tf.sparse.to_dense(tf.sparse.reorder(s)))
    outs = [f(_st(tf, [[1, 0], [0, 1]], [1.0, 2.0], [2, 2])), f(_st(tf, [[1, 1], [0, 0], [0, 1]], [1.0, 2.0, 3.0],
                                                                 [2, 2]))]
    return outs + [tf.constant(f.experimental_get_tracing_count())]


_SEG_DATA = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)

CASES = {
    **_both("to_dense", lambda tf, sp: tf.sparse.to_dense(sp), sparse_out=False),
    **_both("to_dense_default", lambda tf, sp: tf.sparse.to_dense(sp, default_value=-1.0), sparse_out=False),
    **_both("reduce_sum", lambda tf, sp: tf.sparse.reduce_sum(sp), sparse_out=False),
    **_both("reduce_sum_axis1", lambda tf, sp: tf.sparse.reduce_sum(sp, axis=1), sparse_out=False),
    **_both("reduce_sum_keepdims", lambda tf, sp: tf.sparse.reduce_sum(sp, axis=0, keepdims=True), sparse_out=False),
    **_both("reduce_sum_sparse", lambda tf, sp: tf.sparse.reduce_sum(sp, axis=1, output_is_sparse=True)),
    **_both("reduce_sum_sparse_keepdims",
            lambda tf, sp: tf.sparse.reduce_sum(sp, axis=0, keepdims=True, output_is_sparse=True)),
    **_both("reduce_max_axis0", lambda tf, sp: tf.sparse.reduce_max(sp, axis=0), sparse_out=False),
    **_both("reduce_max_axis1", lambda tf, sp: tf.sparse.reduce_max(sp, axis=-1), sparse_out=False),
    **_both("reduce_max_sparse", lambda tf, sp: tf.sparse.reduce_max(sp, axis=1, output_is_sparse=True)),
    **_both("reduce_max_sparse_all", lambda tf, sp: tf.sparse.reduce_max(sp, output_is_sparse=True)),
    **_both("add_sparse", lambda tf, sp: tf.sparse.add(sp, tf.sparse.map_values(tf.negative, sp))),
    **_both("add_threshold", lambda tf, sp: tf.sparse.add(sp, tf.sparse.transpose(sp), threshold=1.6)),
    **_both("add_dense", lambda tf, sp: tf.sparse.add(sp, tf.ones([4, 4])), sparse_out=False),
    **_both("concat_0", lambda tf, sp: tf.sparse.concat(0, [sp, sp])),
    **_both("concat_1", lambda tf, sp: tf.sparse.concat(1, [sp, tf.sparse.slice(sp, [0, 0], [4, 2])])),
    **_both("reshape", lambda tf, sp: tf.sparse.reshape(sp, [2, 8])),
    **_both("reshape_minus_one", lambda tf, sp: tf.sparse.reshape(sp, [-1, 2])),
    **_both("transpose", lambda tf, sp: tf.sparse.transpose(sp)),
    **_both("reorder", lambda tf, sp: tf.sparse.reorder(tf.sparse.concat(1, [sp, sp], expand_nonconcat_dims=True))),
    **_both("retain", lambda tf, sp: tf.sparse.retain(sp, sp.values > 0.7)),
    **_both("slice", lambda tf, sp: tf.sparse.slice(sp, [1, 0], [2, 3])),
    **_both("slice_past_end", lambda tf, sp: tf.sparse.slice(sp, [2, 1], [5, 5])),
    **_both("sparse_dense_matmul", lambda tf, sp: tf.sparse.sparse_dense_matmul(
        sp, tf.reshape(tf.range(8, dtype=tf.float32), [4, 2])), sparse_out=False),
    **_both("sparse_dense_matmul_adjoint", lambda tf, sp: tf.sparse.sparse_dense_matmul(
        sp, tf.ones([3, 4]), adjoint_a=True, adjoint_b=True), sparse_out=False),
    **_both("maximum", lambda tf, sp: tf.sparse.maximum(sp, tf.sparse.transpose(sp))),
    **_both("minimum", lambda tf, sp: tf.sparse.minimum(sp, tf.sparse.transpose(sp))),
    **_both("fill_empty_rows", lambda tf, sp: _parts(tf.sparse.fill_empty_rows(sp, -7.0)[0]) + [
        tf.sparse.fill_empty_rows(sp, -7.0)[1]], sparse_out=False),
    **_both("reset_shape", lambda tf, sp: tf.sparse.reset_shape(tf.sparse.slice(sp, [0, 0], [2, 4]))),
    **_both("expand_dims", lambda tf, sp: tf.sparse.expand_dims(sp, 1)),
    **_both("from_dense", lambda tf, sp: tf.sparse.from_dense(tf.sparse.to_dense(sp) * 2.0)),
    **_both("map_values", lambda tf, sp: tf.sparse.map_values(tf.multiply, sp, sp)),
    **_both("times_dense", lambda tf, sp: sp * tf.constant([1.0, 2.0, 3.0, 4.0])),
    **_both("softmax", lambda tf, sp: tf.sparse.softmax(sp)),
    **_both("to_indicator", lambda tf, sp: tf.sparse.to_indicator(tf.sparse.map_values(
        lambda v: tf.cast(tf.abs(v) * 2.0, tf.int64), sp), 9), sparse_out=False),
    **_both("split", lambda tf, sp: [p for s in tf.sparse.split(sp_input=sp, num_split=3, axis=1) for p in _parts(s)],
            sparse_out=False),
    **_both("bincount_of_sparse", lambda tf, sp: tf.sparse.bincount(tf.sparse.map_values(
        lambda v: tf.cast(tf.abs(v) * 2.0, tf.int32), sp), axis=-1)),
    "spec_argument": _spec_arg,
    "spec_argument_one_trace": _retrace_count,
    "grad_to_dense": _grad(lambda tf, sp: tf.sparse.to_dense(sp)),
    "grad_reduce_sum": _grad(lambda tf, sp: tf.sparse.reduce_sum(sp, axis=1)),
    "grad_reduce_max": _grad(lambda tf, sp: tf.sparse.reduce_max(sp, axis=0)),
    "grad_softmax": _grad(lambda tf, sp: tf.sparse.softmax(sp)),
    "grad_add": _grad(lambda tf, sp: tf.sparse.add(sp, tf.sparse.transpose(sp))),
    "grad_concat_slice": _grad(lambda tf, sp: tf.sparse.concat(1, [sp, tf.sparse.slice(sp, [0, 1], [4, 2])])),
    "grad_split": _grad(lambda tf, sp: tf.sparse.split(sp_input=sp, num_split=2, axis=0)[1]),
    "grad_fill_empty_rows": _grad(lambda tf, sp: tf.sparse.fill_empty_rows(sp, 0.0)[0]),
    "grad_matmul": _grad(lambda tf, sp: tf.sparse.sparse_dense_matmul(sp, tf.ones([4, 2]))),
    # errors
    "to_dense_out_of_bounds": lambda tf: tf.sparse.to_dense(_st(tf, [[0, 5]], [1.0], [2, 2])),
    "to_dense_negative": lambda tf: tf.sparse.to_dense(_st(tf, [[0, -1]], [1.0], [2, 2])),
    "to_dense_out_of_order": lambda tf: tf.sparse.to_dense(_st(tf, [[1, 0], [0, 1]], [1.0, 2.0], [2, 2])),
    "to_dense_repeated": lambda tf: tf.sparse.to_dense(_st(tf, [[1, 0], [1, 0]], [1.0, 2.0], [2, 2])),
    "to_dense_unvalidated": lambda tf: tf.sparse.to_dense(_st(tf, [[1, 0], [0, 1]], [1.0, 2.0], [2, 2]),
                                                          validate_indices=False),
    "add_shapes_differ": lambda tf: tf.sparse.add(_st(tf, [[0, 1]], [1.0], [2, 2]), _st(tf, [[0, 1]], [1.0], [2, 3])),
    "maximum_shapes_differ": lambda tf: tf.sparse.maximum(_st(tf, [[0, 1]], [1.0], [2, 2]),
                                                          _st(tf, [[0, 1]], [1.0], [3, 2])),
    "concat_shapes_differ": lambda tf: tf.sparse.concat(0, [_st(tf, [[0, 1]], [1.0], [2, 2]),
                                                            _st(tf, [[0, 1]], [1.0], [2, 3])]),
    "reshape_bad_size": lambda tf: tf.sparse.reshape(_st(tf, [[0, 1]], [1.0], [2, 2]), [3, 2]),
    "reshape_two_unknown": lambda tf: tf.sparse.reshape(_st(tf, [[0, 1]], [1.0], [2, 2]), [-1, -1]),
    "reshape_not_a_multiple": lambda tf: tf.sparse.reshape(_st(tf, [[0, 1]], [1.0], [2, 3]), [-1, 4]),
    "retain_wrong_length": lambda tf: tf.sparse.retain(_st(tf, [[0, 1]], [1.0], [2, 2]), [True, False]),
    "softmax_rank_1": lambda tf: tf.sparse.softmax(_st(tf, [[0]], [1.0], [2])),
    "reset_shape_smaller": lambda tf: tf.sparse.reset_shape(_st(tf, [[0, 1]], [1.0], [2, 2]), [1, 1]),
    "to_indicator_out_of_range": lambda tf: tf.sparse.to_indicator(
        _st(tf, [[0, 0]], tf.constant([7], tf.int64), [3, 4]), 5),
    "matmul_inner_mismatch": lambda tf: tf.sparse.sparse_dense_matmul(_st(tf, [[0, 1]], [1.0], [2, 2]),
                                                                      tf.ones([3, 1])),
    # more eager values
    "reset_shape_empty": lambda tf: _parts(tf.sparse.reset_shape(_st(tf, [], tf.zeros([0]), [3, 4]))),
    "fill_empty_rows_unordered": lambda tf: _parts(tf.sparse.fill_empty_rows(
        _st(tf, [[2, 1], [0, 3], [2, 0]], [1.0, 2.0, 3.0], [4, 4]), -1.0)[0]),
    "transpose_unordered": lambda tf: _parts(tf.sparse.transpose(_st(tf, [[1, 2], [0, 1]], [1.0, 2.0], [2, 3]))),
    "concat_unordered": lambda tf: _parts(tf.sparse.concat(1, [_st(tf, [[1, 0], [0, 1]], [1.0, 2.0], [2, 2]),
                                                                _st(tf, [[0, 0]], [3.0], [2, 1])])),
    "reduce_max_empty": lambda tf: tf.sparse.reduce_max(_st(tf, [], tf.zeros([0]), [3, 4]), axis=1),
    "reduce_sum_int": lambda tf: tf.sparse.reduce_sum(_st(tf, [[0, 1], [1, 1]], [3, 4], [2, 2]), axis=0),
    "eye": lambda tf: _parts(tf.sparse.eye(3, 4, dtype=tf.int32)),
    "split_keeps_order": lambda tf: [p for s in tf.sparse.split(
        sp_input=_st(tf, [[0, 1], [1, 4], [1, 2], [0, 3]], [1.0, 2.0, 3.0, 4.0], [2, 5]), num_split=2, axis=1)
        for p in _parts(s)],
    "segment_sum": lambda tf: tf.sparse.segment_sum(_SEG_DATA, [0, 2, 1], [0, 0, 2]),
    "segment_sum_num_segments": lambda tf: tf.sparse.segment_sum(_SEG_DATA, [0, 2, 1], [0, 0, 2], num_segments=4),
    "segment_mean": lambda tf: tf.sparse.segment_mean(_SEG_DATA, [0, 2, 1], [0, 0, 2]),
    "segment_sqrt_n": lambda tf: tf.sparse.segment_sqrt_n(_SEG_DATA, [0, 2, 1], [0, 0, 2]),
    "segment_mean_num_segments": lambda tf: tf.sparse.segment_mean(_SEG_DATA, [0, 2], [1, 1], num_segments=3),
    "segment_not_increasing": lambda tf: tf.sparse.segment_sum(_SEG_DATA, [0, 2, 1], [1, 0, 2]),
    "segment_index_out_of_range": lambda tf: tf.sparse.segment_sum(_SEG_DATA, [0, 7, 1], [0, 0, 2]),
    "segment_sum_grad": lambda tf: _segment_grad(tf),
    "mask": lambda tf: [tf.sparse.mask(tf.IndexedSlices(tf.constant([[1.0], [2.0], [3.0]]), tf.constant([4, 0, 2])),
                                       [2, 9]).indices,
                        tf.sparse.mask(tf.IndexedSlices(tf.constant([[1.0], [2.0], [3.0]]), tf.constant([4, 0, 2])),
                                       [2, 9]).values],
    "bincount": lambda tf: _parts(tf.sparse.bincount(tf.constant([[1, 2, 2], [5, 1, 1]]))),
    "bincount_rows": lambda tf: _parts(tf.sparse.bincount(tf.constant([[1, 2, 2], [5, 1, 1]]), axis=-1)),
    "bincount_weights": lambda tf: _parts(tf.sparse.bincount(tf.constant([[1, 2, 2], [5, 1, 1]]), weights=tf.constant(
        [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), axis=-1)),
    "bincount_binary": lambda tf: _parts(tf.sparse.bincount(tf.constant([[1, 2, 2], [5, 1, 1]]), axis=-1,
                                                            binary_output=True)),
    "bincount_min_max": lambda tf: _parts(tf.sparse.bincount(tf.constant([[1, 2, 2], [5, 1, 1]]), minlength=8,
                                                             maxlength=3)),
    "bincount_int64": lambda tf: _parts(tf.sparse.bincount(tf.constant([1, 2, 2], tf.int64))),
    "bincount_minlength": lambda tf: _parts(tf.sparse.bincount(tf.constant([1, 2, 2]), minlength=6)),
    "cross": lambda tf: _parts(tf.sparse.cross([tf.constant([["a", "b"], ["c", "d"]]), tf.constant(
        [["x", "y"], ["z", "w"]]), tf.constant([[1], [2]], tf.int64)])),
    "cross_separator": lambda tf: _parts(tf.sparse.cross([tf.constant([["a", "b"], ["c", "d"]]), tf.constant(
        [[1], [2]], tf.int64)], separator="|")),
    "cross_sparse_first": lambda tf: _parts(tf.sparse.cross([tf.constant([["x"], ["y"], ["z"]]), _st(
        tf, [[0, 0], [0, 1], [2, 0]], tf.constant(["p", "q", "r"]), [3, 2]), tf.constant([["u"], ["v"], ["w"]])])),
    "cross_int32": lambda tf: _parts(tf.sparse.cross([tf.constant([[1, 2]], tf.int32)])),
    "cross_batch_mismatch": lambda tf: tf.sparse.cross([tf.constant([["a"]]), tf.constant([["a"], ["b"]])]),
    "cross_hashed": lambda tf: _parts(tf.sparse.cross_hashed([tf.constant([["a", "b"], ["c", "d"]]), tf.constant(
        [[1], [2]], tf.int64)], num_buckets=100)),
    "cross_hashed_key": lambda tf: _parts(tf.sparse.cross_hashed([tf.constant([["a", "b"], ["c", "d"]])],
                                                                 num_buckets=100, hash_key=7)),
    "cross_hashed_sparse": lambda tf: _parts(tf.sparse.cross_hashed([_st(
        tf, [[0, 0], [0, 1]], tf.constant(["p", "q"]), [3, 2]), tf.constant([["x"], ["y"], ["z"]])], num_buckets=10)),
    "sampled_addmm": lambda tf: list(tf.sparse.sampled_addmm(
        tf.constant([[0, 0], [1, 1]]), tf.constant([0.5, 0.3]), tf.constant([2, 2]),
        tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), tf.constant([[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]),
        alpha=0.75, beta=0.25)),
    "sampled_addmm_batch": lambda tf: list(tf.sparse.sampled_addmm(
        tf.constant([0, 1, 1, 0, 0, 0, 1, 0], shape=[2, 2, 2]), tf.constant([1.0, 2.0, 3.0, 4.0], shape=[2, 2]),
        tf.constant([2, 2]), tf.reshape(tf.range(12, dtype=tf.float32), [2, 2, 3]),
        tf.reshape(tf.range(12, dtype=tf.float32), [2, 3, 2]), alpha=0.5, beta=2.0)),
}


def _segment_grad(tf):
    x = tf.constant(_SEG_DATA)
    with tf.GradientTape() as t:
        t.watch(x)
        loss = tf.reduce_sum(tf.sparse.segment_sqrt_n(x, [0, 2, 1, 0], [0, 0, 2, 2]) * tf.constant([[1.0, -2.0]]))
    return tf.convert_to_tensor(t.gradient(loss, x))
