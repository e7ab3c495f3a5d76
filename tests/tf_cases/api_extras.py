"""Cases of top-level and tf.compat.v1 names real programs call: tf.compat.v1.ConfigProto / GPUOptions / ...
(construction, text format, wire bytes, errors), tf.CriticalSection, tf.variable_creator_scope, tf.bitcast,
tf.guarantee_const, tf.parallel_stack, tf.grad_pass_through, tf.type_spec_from_value,
tf.strings.unsorted_segment_join and tf.compat.v1.distribute / saved_model names, each ``fn(tf)``; recorded from
real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py (a Python value by its repr)."""

import numpy as np

from tests.tf_cases import raises as _err


def _config(tf):
    c = tf.compat.v1.ConfigProto(allow_soft_placement=True, log_device_placement=False)
    c.gpu_options.allow_growth = True
    c.gpu_options.per_process_gpu_memory_fraction = 0.4
    c.intra_op_parallelism_threads = 4
    c.inter_op_parallelism_threads = 2
    c.device_count["GPU"] = 0
    return c


def _jit(tf):
    c = tf.compat.v1.ConfigProto()
    c.graph_options.optimizer_options.global_jit_level = tf.compat.v1.OptimizerOptions.ON_1
    return c


def _creators(tf):
    log = []

    def outer(next_creator, **kwargs):
        log.append(("outer", sorted(kwargs), kwargs["trainable"], kwargs["name"], str(kwargs["aggregation"]),
                    str(kwargs["synchronization"]), kwargs["validate_shape"], kwargs["shape"],
                    kwargs["experimental_enable_variable_lifting"]))
        kwargs["trainable"] = False
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        log.append(("inner", kwargs["trainable"]))
        kwargs["name"] = "renamed"
        return next_creator(**kwargs)

    with tf.variable_creator_scope(outer):
        with tf.variable_creator_scope(inner):
            v = tf.Variable(1.0, name="x")
    after = tf.Variable(2.0)
    return repr((log, v.name, v.trainable, after.trainable))


def _creator_replaces(tf):
    with tf.variable_creator_scope(lambda next_creator, **kwargs: "not a variable"):
        return repr(tf.Variable(2.0))


def _critical(tf):
    cs = tf.CriticalSection()
    v = tf.Variable(0)
    a = cs.execute(lambda: v.assign_add(1))
    b = cs.execute(lambda: (v.read_value(), tf.constant(2.0)))
    c = cs.execute(lambda: 3)
    d = cs.execute(lambda: {"a": tf.constant(1), "b": [tf.constant(2)]})
    f = tf.function(lambda: cs.execute(lambda: v.assign_add(2)))
    e = f()
    return [a, b[0], b[1], c, d["a"], d["b"][0], e, tf.constant(v.numpy()), repr(cs.execute(lambda: None))]


def _nested_critical(tf):
    cs = tf.CriticalSection()
    try:
        cs.execute(lambda: cs.execute(lambda: 1))
    except ValueError as e:
        return str(e).split(" (signature")[0] + " ... " + str(e).split(")) ")[1]


def _pass_through(tf):
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.grad_pass_through(lambda z: tf.round(z))(x * 1.7)
    return [y, t.gradient(y, x)]


def _pass_through_variable(tf):
    w = tf.Variable(3.0)
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.grad_pass_through(lambda z: tf.round(z * w))(x)
    gx, gw = t.gradient(y, [x, w])
    return [y, gx, repr(gw)]


def _bitcast_grad(tf):
    x = tf.constant([2.0], tf.float64)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.bitcast(x, tf.float32)
    return t.gradient(y, x)


def _guarantee_grad(tf):
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.guarantee_const(x) * 2.0
    return t.gradient(y, x)


CASES = {
    "config_text": lambda tf: str(_config(tf)),
    "config_bytes": lambda tf: repr(_config(tf).SerializeToString()),
    "config_from_bytes": lambda tf: str(tf.compat.v1.ConfigProto.FromString(_config(tf).SerializeToString())),
    "config_equal": lambda tf: repr((
        tf.compat.v1.ConfigProto.FromString(_config(tf).SerializeToString()) == _config(tf),
        _config(tf) == tf.compat.v1.ConfigProto())),
    "config_fields": lambda tf: repr((_config(tf).allow_soft_placement, _config(tf).gpu_options.allow_growth,
                                      _config(tf).gpu_options.per_process_gpu_memory_fraction,
                                      _config(tf).intra_op_parallelism_threads, _config(tf).operation_timeout_in_ms,
                                      dict(_config(tf).device_count), _config(tf).gpu_options.visible_device_list,
                                      _config(tf).HasField("gpu_options"), _config(tf).HasField("graph_options"))),
    "config_gpu_options_kwarg": lambda tf: str(tf.compat.v1.ConfigProto(
        gpu_options=tf.compat.v1.GPUOptions(per_process_gpu_memory_fraction=0.333, visible_device_list="0,1"))),
    "config_gpu_options_dict": lambda tf: str(tf.compat.v1.ConfigProto(gpu_options={"allow_growth": True})),
    "config_touched_submessage": lambda tf: _touched(tf),
    "config_jit_text": lambda tf: str(_jit(tf)),
    "config_jit_bytes": lambda tf: repr(_jit(tf).SerializeToString()),
    "config_negative_int64": lambda tf: repr(tf.compat.v1.ConfigProto(operation_timeout_in_ms=-5).SerializeToString()),
    "config_doubles": lambda tf: [str(tf.compat.v1.GPUOptions(per_process_gpu_memory_fraction=v)) for v in
                                  (1.0, 0.1, 1e-7, 123456789.0, 1e20, 0.30000000000000004)].__repr__(),
    "config_filters": lambda tf: _filters(tf),
    "run_options": lambda tf: repr((str(tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)),
                                    tf.compat.v1.RunOptions(trace_level=3, timeout_in_ms=10).SerializeToString())),
    "config_bad_kwarg": _err(lambda tf: tf.compat.v1.ConfigProto(bogus=1)),
    "config_bad_attribute": _err(lambda tf: setattr(tf.compat.v1.ConfigProto(), "bogus", 1)),
    "config_assign_message": _err(lambda tf: setattr(tf.compat.v1.ConfigProto(), "gpu_options",
                                                     tf.compat.v1.GPUOptions())),
    "config_bad_int": _err(lambda tf: setattr(tf.compat.v1.ConfigProto(), "intra_op_parallelism_threads", "x")),
    "config_float_int": _err(lambda tf: setattr(tf.compat.v1.ConfigProto(), "intra_op_parallelism_threads", 2.0)),
    "config_bool_int": _err(lambda tf: setattr(tf.compat.v1.ConfigProto(), "intra_op_parallelism_threads", True)),
    "config_int_range": _err(lambda tf: setattr(tf.compat.v1.ConfigProto(), "intra_op_parallelism_threads", 2**40)),
    "config_bad_double": _err(lambda tf: setattr(tf.compat.v1.GPUOptions(), "per_process_gpu_memory_fraction", "a")),
    "config_bad_string": _err(lambda tf: setattr(tf.compat.v1.GPUOptions(), "visible_device_list", 3)),
    "config_bad_bool": _err(lambda tf: setattr(tf.compat.v1.ConfigProto(), "allow_soft_placement", "x")),
    "config_bad_message_kwarg": _err(lambda tf: tf.compat.v1.ConfigProto(gpu_options=3)),
    "config_has_field_scalar": _err(lambda tf: tf.compat.v1.ConfigProto().HasField("allow_soft_placement")),
    "config_session": lambda tf: repr(type(tf.compat.v1.Session(config=_config(tf))).__name__),
    "creator_scope": _creators,
    "creator_scope_replaces": _creator_replaces,
    "critical_section": _critical,
    "critical_section_nested": _nested_critical,
    "critical_section_not_callable": _err(lambda tf: tf.CriticalSection().execute(5)),
    "bitcast_float_int": lambda tf: tf.bitcast(tf.constant([1.0, 2.0]), tf.int32),
    "bitcast_narrower": lambda tf: tf.bitcast(tf.constant([1, 2], tf.int64), tf.int32),
    "bitcast_wider": lambda tf: tf.bitcast(tf.constant([[1, 2], [3, 4]], tf.int32), tf.int64),
    "bitcast_bytes": lambda tf: tf.bitcast(tf.constant(1.0, tf.float64), tf.uint8),
    "bitcast_uint16_float16": lambda tf: tf.bitcast(tf.constant([15360, 49152], tf.uint16), tf.float16),
    "bitcast_bad_last_dim": lambda tf: tf.bitcast(tf.constant([1, 2, 3], tf.int32), tf.int64),
    "bitcast_scalar_wider": lambda tf: tf.bitcast(tf.constant(1, tf.int32), tf.int64),
    "bitcast_string": lambda tf: tf.bitcast(tf.constant([1.0]), tf.string),
    "bitcast_gradient": _bitcast_grad,
    "guarantee_const": lambda tf: tf.guarantee_const(tf.constant([1.0, 2.0])),
    "guarantee_const_gradient": _guarantee_grad,
    "parallel_stack_eager": lambda tf: tf.parallel_stack([tf.constant([1, 2]), tf.constant([3, 4])]),
    "parallel_stack_function": lambda tf: tf.function(lambda: tf.parallel_stack([tf.constant([1, 2]),
                                                                                 tf.constant([3, 4])]))(),
    "grad_pass_through": _pass_through,
    "grad_pass_through_variable": _pass_through_variable,
    "type_spec_tensor": lambda tf: repr(tf.type_spec_from_value(tf.constant([1, 2]))),
    "type_spec_ragged": lambda tf: repr(tf.type_spec_from_value(tf.ragged.constant([[1], [2, 3]]))),
    "type_spec_sparse": lambda tf: repr(tf.type_spec_from_value(tf.SparseTensor([[0, 0]], [1.0], [2, 2]))),
    "type_spec_numpy": lambda tf: repr(tf.type_spec_from_value(np.zeros((2, 3)))),
    "type_spec_list": lambda tf: repr(tf.type_spec_from_value([1, 2])),
    "type_spec_string": lambda tf: repr(tf.type_spec_from_value("x")),
    "segment_join": lambda tf: tf.strings.unsorted_segment_join(["this", "is", "a", "test"], [0, 0, 1, 1], 2,
                                                                separator=":"),
    "segment_join_rows": lambda tf: tf.strings.unsorted_segment_join(
        [["Y", "q", "c"], ["Y", "6", "6"], ["p", "G", "a"]], [1, 0, 1], 2),
    "segment_join_empty": lambda tf: tf.strings.unsorted_segment_join(["a", "b", "c"], [2, 0, 2], 4, separator="-"),
    "segment_join_negative": lambda tf: tf.strings.unsorted_segment_join(["a", "b", "c"], [2, -1, 2], 4),
    "segment_join_out_of_range": lambda tf: tf.strings.unsorted_segment_join(["a", "b"], [0, 3], 2),
    "v1_distribute_names": lambda tf: repr((tf.compat.v1.distribute.ReduceOp.SUM,
                                            tf.compat.v1.distribute.get_loss_reduction(),
                                            tf.compat.v1.distribute.get_strategy().num_replicas_in_sync,
                                            tf.compat.v1.distribute.has_strategy(),
                                            tf.compat.v1.distribute.in_cross_replica_context())),
    "v1_mirrored": lambda tf: repr(tf.compat.v1.distribute.MirroredStrategy().num_replicas_in_sync),
    "v1_saved_model_constants": lambda tf: repr((
        tf.compat.v1.saved_model.tag_constants.SERVING, tf.compat.v1.saved_model.tag_constants.TRAINING,
        tf.compat.v1.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY,
        tf.compat.v1.saved_model.signature_constants.PREDICT_METHOD_NAME, tf.compat.v1.saved_model.SERVING,
        tf.compat.v1.saved_model.SAVED_MODEL_FILENAME_PB, tf.compat.v1.saved_model.VARIABLES_DIRECTORY,
        tf.compat.v1.saved_model.ASSETS_KEY, tf.compat.v1.saved_model.MAIN_OP_KEY,
        tf.saved_model.SAVED_MODEL_SCHEMA_VERSION, tf.saved_model.VARIABLES_FILENAME,
        tf.saved_model.DEBUG_INFO_FILENAME_PB)),
}


def _touched(tf):
    c = tf.compat.v1.ConfigProto()
    c.gpu_options.allow_growth = False
    return repr((str(c), c.SerializeToString(), c.HasField("gpu_options")))


def _filters(tf):
    c = tf.compat.v1.ConfigProto(device_filters=["/job:ps"])
    c.device_filters.append("/job:worker/task:1")
    return repr((str(c), c.SerializeToString(), list(c.device_filters)))


# -- tf.data.FixedLengthRecordDataset, tf.nn.embedding_lookup_sparse / safe_embedding_lookup_sparse, ctc unique


def _records_files(compress=None):
    import gzip
    import os
    import tempfile
    import zlib

    d = tempfile.mkdtemp()
    paths = []
    for name, body in (("a", bytes(range(12))), ("b", bytes(range(100, 112)))):
        data = b"HH" + body + b"F"
        data = gzip.compress(data) if compress == "GZIP" else (zlib.compress(data) if compress == "ZLIB" else data)
        paths.append(os.path.join(d, name + ".bin"))
        with open(paths[-1], "wb") as f:
            f.write(data)
    return paths


def _records(record_bytes, compress=None, **kw):
    def case(tf):
        ds = tf.data.FixedLengthRecordDataset(_records_files(compress), record_bytes, header_bytes=2, footer_bytes=1,
                                              compression_type=compress, **kw)
        return [repr(r.numpy()) for r in ds] + [repr(ds.element_spec)]
    return case


def _records_error(tf):
    ds = tf.data.FixedLengthRecordDataset(_records_files()[1:], 5, header_bytes=2, footer_bytes=1)
    msg = None
    try:
        list(ds)
    except tf.errors.InvalidArgumentError as e:
        text = str(e)[str(e).index("Excluding"):]
        msg = text.split(" input file ")[0] + " ... " + text.split(".bin\" ")[1].split(" [Op")[0]
    return msg


_TABLE = np.arange(12, dtype=np.float32).reshape(6, 2) * 0.5 - 1


def _sp_ids(tf):
    return tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]], tf.constant([1, 4, 2, 5, 1, 1], tf.int64),
                           [5, 3])


def _sp_weights(tf):
    return tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]], [2.0, 0.5, 1.0, -1.0, 3.0, 0.0], [5, 3])


def _emb(combiner, weights=False, **kw):
    return lambda tf: tf.nn.embedding_lookup_sparse(_TABLE, _sp_ids(tf), _sp_weights(tf) if weights else None,
                                                    combiner=combiner, **kw)


def _emb_grad(combiner, weights):
    def case(tf):
        table = tf.Variable(_TABLE)
        w = _sp_weights(tf)
        with tf.GradientTape(persistent=True) as t:
            t.watch(w.values)
            out = tf.nn.embedding_lookup_sparse(table, _sp_ids(tf), w if weights else None, combiner=combiner)
            loss = tf.reduce_sum(out * tf.cos(tf.reshape(tf.range(tf.size(out), dtype=tf.float32), tf.shape(out))))
        g = t.gradient(loss, table)
        return [tf.convert_to_tensor(g)] + ([t.gradient(loss, w.values)] if weights else [])
    return case


def _safe(combiner, weights=False, default_id=None, rank3=False):
    def case(tf):
        ids, w = _sp_ids(tf), _sp_weights(tf)
        ids = tf.SparseTensor(tf.concat([ids.indices, tf.zeros([6, 1], tf.int64)], 1) if not rank3 else
                              tf.stack([ids.indices[:, 0] // 2, ids.indices[:, 0] % 2, ids.indices[:, 1]], 1),
                              tf.where(ids.values == 5, tf.constant(-1, tf.int64), ids.values),
                              [5, 3, 1] if not rank3 else [3, 2, 3])
        w = tf.SparseTensor(ids.indices, w.values, ids.dense_shape)
        return tf.nn.safe_embedding_lookup_sparse(_TABLE, ids, w if weights else None, combiner=combiner,
                                                  default_id=default_id)
    return case


def _ctc_unique(tf):
    logits = tf.constant(np.sin(np.arange(5 * 2 * 4, dtype=np.float32).reshape(5, 2, 4)))
    labels = tf.constant([[1, 2, 1], [3, 3, 0]], tf.int32)
    with tf.GradientTape() as t:
        t.watch(logits)
        loss = tf.nn.ctc_loss(labels, logits, [3, 2], [5, 4], unique=tf.nn.ctc_unique_labels(labels))
    return [loss, t.gradient(loss, logits)]


def _ctc_unique_blank(tf):
    logits = tf.constant(np.cos(np.arange(5 * 2 * 4, dtype=np.float32).reshape(2, 5, 4)))
    labels = tf.constant([[0, 2, 0], [1, 1, 2]], tf.int32)
    with tf.GradientTape() as t:
        t.watch(logits)
        loss = tf.nn.ctc_loss(labels, logits, [3, 3], [5, 5], logits_time_major=False, blank_index=3,
                              unique=tf.nn.ctc_unique_labels(labels))
    return [loss, t.gradient(loss, logits)]


CASES.update({
    "fixed_length_records": _records(3),
    "fixed_length_records_gzip": _records(4, "GZIP"),
    "fixed_length_records_zlib": _records(6, "ZLIB"),
    "fixed_length_records_parallel": _records(2, num_parallel_reads=2),
    "fixed_length_records_not_a_multiple": _records_error,
    "fixed_length_records_decode": lambda tf: [r for r in tf.data.FixedLengthRecordDataset(
        _records_files(), 4, header_bytes=2, footer_bytes=1).map(lambda r: tf.io.decode_raw(r, tf.uint8))],
    "embedding_sparse_mean": _emb("mean"),
    "embedding_sparse_sum": _emb("sum"),
    "embedding_sparse_sqrtn": _emb("sqrtn"),
    "embedding_sparse_default_combiner": _emb(None),
    "embedding_sparse_weighted_mean": _emb("mean", True),
    "embedding_sparse_weighted_sum": _emb("sum", True),
    "embedding_sparse_weighted_sqrtn": _emb("sqrtn", True),
    "embedding_sparse_max_norm": _emb("mean", max_norm=1.0),
    "embedding_sparse_bad_combiner": _emb("max"),
    "embedding_sparse_grad_mean": _emb_grad("mean", False),
    "embedding_sparse_grad_weighted_sqrtn": _emb_grad("sqrtn", True),
    "safe_embedding_mean": _safe("mean"),
    "safe_embedding_weighted": _safe("mean", True),
    "safe_embedding_weighted_sum": _safe("sum", True),
    "safe_embedding_default_id": _safe("sqrtn", True, default_id=3),
    "safe_embedding_rank3": _safe("mean", True, rank3=True),
    "ctc_unique": _ctc_unique,
    "ctc_unique_blank_index": _ctc_unique_blank,
})
