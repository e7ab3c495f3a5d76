"""Introduction to Tensors and tf.data basics: dtypes, broadcasting, reshapes, indexing, reprs,
exceptions; from_tensor_slices/from_tensors/range, map, filter, batch, repeat, shuffle, zip,
padded_batch, take/skip, enumerate, as_numpy_iterator, reduce, and iteration in training."""
import numpy as np

from _common import exc, r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    rank_0 = tf.constant(4)
    rank_1 = tf.constant([2.0, 3.0, 4.0])
    rank_2 = tf.constant([[1, 2], [3, 4], [5, 6]], dtype=tf.float16)
    rank_3 = tf.constant([[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], [[10, 11, 12, 13, 14], [15, 16, 17, 18, 19]],
                          [[20, 21, 22, 23, 24], [25, 26, 27, 28, 29]]])
    out["reprs"] = [repr(rank_0), repr(rank_1), str(rank_1), repr(rank_2)]
    out["np_array"] = r(np.array(rank_2))
    a = tf.constant([[1, 2], [3, 4]])
    b = tf.constant([[1, 1], [1, 1]])
    out["ops"] = [r(tf.add(a, b)), r(tf.multiply(a, b)), r(tf.matmul(a, b)), r(a + b), r(a * b), r(a @ b)]
    c = tf.constant([[4.0, 5.0], [10.0, 1.0]])
    out["reduce"] = [r(tf.reduce_max(c)), r(tf.math.argmax(c)), r(tf.nn.softmax(c))]
    out["convert"] = [r(tf.convert_to_tensor([1, 2, 3])), r(tf.reduce_max([1, 2, 3])),
                      r(tf.reduce_max(np.array([1, 2, 3])))]
    out["shape_info"] = [str(rank_3.dtype), rank_3.ndim, str(rank_3.shape), rank_3.shape[0], rank_3.shape[-1],
                         int(tf.size(rank_3)), r(tf.rank(rank_3)), r(tf.shape(rank_3))]
    out["index"] = [r(rank_1[0]), r(rank_1[-1]), r(rank_1[1:]), r(rank_1[::-1]), r(rank_2[1, 1]), r(rank_2[:, 1]),
                    r(rank_2[-1, :]), r(rank_3[:, :, 4]), r(rank_3[..., 1:3]), r(rank_3[:, None, 0].shape)]
    x = tf.constant([[1], [2], [3]])
    out["reshape"] = [r(tf.reshape(x, [1, 3])), r(tf.reshape(rank_3, [-1])), r(tf.reshape(rank_3, [3 * 2, 5])),
                      r(tf.reshape(rank_3, [3, -1])), list(tf.transpose(rank_3, [1, 0, 2]).shape)]
    out["reshape_error"] = exc(lambda: tf.reshape(rank_3, [7, -1]))
    the_f64_tensor = tf.constant([2.2, 3.3, 4.4], dtype=tf.float64)
    the_f16_tensor = tf.cast(the_f64_tensor, dtype=tf.float16)
    the_u8_tensor = tf.cast(the_f16_tensor, dtype=tf.uint8)
    out["cast"] = [str(the_f16_tensor.dtype), r(the_u8_tensor), str(the_u8_tensor.dtype)]
    y = tf.constant([1, 2, 3])
    out["broadcast"] = [r(tf.multiply(y, 2)), r(y * [1, 2, 3]), r(tf.reshape(x, [3, 1]) * tf.range(1, 5)),
                        r(tf.broadcast_to(tf.constant([1, 2, 3]), [3, 3]))]
    out["dtype_mismatch"] = exc(lambda: tf.constant(1.0) + tf.constant(1.0, tf.float64))
    out["int_float_mix"] = exc(lambda: tf.constant(1) + tf.constant(1.0))
    out["python_types"] = [str(tf.constant(1).dtype), str(tf.constant(1.0).dtype), str(tf.constant(True).dtype),
                           str(tf.constant(np.arange(3)).dtype), str(tf.constant(np.ones(2)).dtype),
                           str(tf.constant("hi").dtype), str(tf.constant(1 + 2j).dtype)]
    out["strings"] = [repr(tf.constant("Gray wolf")), repr(tf.constant(["a", "bc"]))]
    out["sparse_not_needed_range"] = r(tf.range(1, 10, delta=3))
    out["linspace"] = r(tf.linspace(0.0, 1.0, 5))
    out["concat_stack"] = [r(tf.concat([x, x], axis=0).shape), r(tf.stack([y, y], axis=1)), r(tf.squeeze(x))]
    out["tensor_bool_error"] = exc(lambda: bool(tf.constant([1, 2])))
    out["item_assign_error"] = exc(lambda: rank_1.__setitem__(0, 1.0))
    out["tensor_equality"] = [r(tf.constant([1, 2]) == tf.constant([1, 3])), r(tf.equal(y, 2))]

    # -- tf.data
    dataset = tf.data.Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
    out["ds_repr"] = repr(dataset)
    out["ds_iter"] = [int(e) for e in dataset]
    out["ds_reduce"] = int(dataset.reduce(0, lambda state, value: state + value))
    out["ds_numpy_iter"] = [int(v) for v in dataset.as_numpy_iterator()]
    ds2 = tf.data.Dataset.from_tensor_slices({"a": np.arange(6.0, dtype="float32"), "b": np.arange(6)})
    out["ds_dict_spec"] = repr(ds2.element_spec)
    out["ds_dict_batch"] = [{k: r(v) for k, v in e.items()} for e in ds2.batch(4)]
    rng = tf.data.Dataset.range(10)
    out["range_spec"] = repr(rng.element_spec)
    out["map_filter"] = [int(v) for v in rng.map(lambda v: v * 2).filter(lambda v: v % 3 == 0)]
    out["batch_drop"] = [r(v) for v in rng.batch(4, drop_remainder=True)]
    out["batch_spec"] = [repr(rng.batch(4).element_spec), repr(rng.batch(4, drop_remainder=True).element_spec)]
    out["repeat_batch"] = [r(v) for v in rng.take(3).repeat(2).batch(4)]
    out["skip_take"] = [int(v) for v in rng.skip(7)] + [int(v) for v in rng.take(2)]
    out["zip"] = [[int(a), int(b)] for a, b in tf.data.Dataset.zip((rng.take(3), rng.skip(5)))]
    out["enumerate"] = [[int(i), int(v)] for i, v in rng.skip(4).take(2).enumerate()]
    out["from_tensors"] = [r(v) for v in tf.data.Dataset.from_tensors([1, 2, 3])]
    out["padded_batch"] = [r(v) for v in rng.skip(1).take(4).map(lambda v: tf.fill([v], v)).padded_batch(2)]
    out["cardinality"] = [int(rng.cardinality()), int(rng.repeat().cardinality()), int(rng.batch(3).cardinality()),
                          int(rng.filter(lambda v: v > 2).cardinality())]
    shuffled = [int(v) for v in rng.shuffle(10, seed=1)]
    out["shuffle_is_permutation"] = sorted(shuffled) == list(range(10))
    out["shuffle_batch_shapes"] = [list(v.shape) for v in rng.shuffle(4).batch(3)]
    out["unbatch"] = [int(v) for v in rng.batch(3).unbatch()][:5]
    out["prefetch_cache"] = [int(v) for v in rng.take(3).cache().prefetch(tf.data.AUTOTUNE)]
    out["from_slices_mismatch"] = exc(lambda: tf.data.Dataset.from_tensor_slices((np.ones(3), np.ones(4))))

    # iterate a dataset in a training loop (tf.function over the dataset)
    feats = np.linspace(-1, 1, 20, dtype="float32").reshape(10, 2)
    targ = feats @ np.array([[2.0], [-1.0]], "float32") + 0.5
    train = tf.data.Dataset.from_tensor_slices((feats, targ)).batch(4)
    w = tf.Variable(tf.zeros([2, 1]))
    bias = tf.Variable(0.0)
    opt = tf.keras.optimizers.SGD(0.3)

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(xb @ w + bias - yb))
        opt.apply_gradients(zip(tape.gradient(loss, [w, bias]), [w, bias]))
        return loss

    def train_epoch(ds):
        # (TF also allows `for xb, yb in ds` inside the tf.function; tapeflow raises NotImplementedError)
        total = tf.constant(0.0)
        for xb, yb in ds:
            total += train_step(xb, yb)
        return total

    out["data_loop_losses"] = [r(train_epoch(train)) for _ in range(4)]
    out["data_loop_w"] = [r(w), r(bias)]
    out["data_loop_traces"] = train_step.experimental_get_tracing_count()
    return out
