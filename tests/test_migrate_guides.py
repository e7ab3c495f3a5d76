"""What TF's migration and tf.data guides rely on (values and exception types pinned from TF 2.21 / Keras 3.15)."""

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.compat.v1 as tf1


def test_estimator_is_missing_as_in_tf_2_21():
    # TF 2.16 removed tf.estimator: TF 2.21 raises AttributeError for tf.estimator and tf.compat.v1.estimator
    with pytest.raises(AttributeError, match="module 'tensorflow' has no attribute 'estimator'"):
        tf.estimator  # noqa: B018
    with pytest.raises(AttributeError, match="module 'tensorflow.compat.v1' has no attribute 'estimator'"):
        tf1.estimator  # noqa: B018
    assert not hasattr(tf, "estimator")


def test_compat_v1_keras_is_keras():
    assert tf1.keras is tf.keras
    with pytest.raises(AttributeError):  # as Keras 3: keras.utils has no DeterministicRandomTestTool
        tf1.keras.utils.DeterministicRandomTestTool  # noqa: B018


def test_saved_model_signature_and_tag_constants():
    assert tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"
    assert (tf.saved_model.SERVING, tf.saved_model.TRAINING) == ("serve", "train")
    assert tf.saved_model.PREDICT_METHOD_NAME == "tensorflow/serving/predict"


class _NoDefaults(tf.keras.callbacks.Callback):
    """Hooks without a default for ``logs`` (TF's early-stopping guide): Keras always passes it."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_begin(self, logs):
        self.seen.append(("train_begin", logs))

    def on_epoch_begin(self, epoch, logs):
        self.seen.append(("epoch_begin", epoch, logs))

    def on_train_batch_begin(self, batch, logs):
        self.seen.append(("batch_begin", batch, logs))

    def on_test_begin(self, logs):
        self.seen.append(("test_begin", logs))

    def on_predict_begin(self, logs):
        self.seen.append(("predict_begin", logs))

    def on_predict_end(self, logs):
        self.seen.append(("predict_end", logs))


def test_callback_hooks_always_get_logs():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    cb = _NoDefaults()
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[cb])
    model.evaluate(x, y, verbose=0, callbacks=[cb])
    model.predict(x, verbose=0, callbacks=[cb])
    assert cb.seen == [("train_begin", {}), ("epoch_begin", 0, {}), ("batch_begin", 0, {}), ("test_begin", {}),
                       ("predict_begin", {}), ("predict_end", {})]


def test_tf_print_in_a_layer_prints_nothing_while_the_functional_model_is_built(capfd):
    class PrintLayer(tf.keras.layers.Layer):
        def call(self, inputs):
            tf.print(inputs)
            return inputs

    inputs = tf.keras.layers.Input(shape=(1,))
    model = tf.keras.Model(inputs=inputs, outputs=PrintLayer()(inputs))
    assert capfd.readouterr().err == ""  # Keras traces the symbolic call in a scratch graph: nothing runs
    model(tf.constant([[2.0]]))
    assert capfd.readouterr().err == "[[2]]\n"


def test_checkpoint_reader_lists_keys_in_tfs_order(tmp_path):
    # TF 2.21, the checkpoint-migration guide: the reader's maps come in its C++ unordered_map's order
    a, b = tf.Variable(5.0, name="a"), tf.Variable(6.0, name="b")
    with tf.name_scope("scoped"):
        c = tf.Variable(7.0, name="c")
    path = tf.train.Checkpoint(variables=[a, b, c]).save(str(tmp_path / "tf2-ckpt"))
    reader = tf.train.load_checkpoint(path)
    v = "/.ATTRIBUTES/VARIABLE_VALUE"
    want = ["variables/2" + v, "variables/1" + v, "variables/0" + v, "save_counter" + v, "_CHECKPOINTABLE_OBJECT_GRAPH"]
    assert list(reader.get_variable_to_shape_map()) == want
    assert list(reader.get_variable_to_dtype_map()) == want


def test_unordered_map_order_matches_tf():
    from tapeflow.train._map_order import unordered_map_order

    v = "/.ATTRIBUTES/VARIABLE_VALUE"
    tf_order = ["x10" + v, "x1" + v, "save_counter" + v, "b" + v, "aa" + v, "a" + v, "zeta" + v, "_u" + v, "x2" + v,
                "_CHECKPOINTABLE_OBJECT_GRAPH", "B" + v, "Ab" + v]
    assert unordered_map_order(sorted(tf_order)) == tf_order
    assert unordered_map_order(["a", "b", "scoped/c"]) == ["scoped/c", "b", "a"]  # a TF1 Saver's checkpoint


def test_unordered_map_order_through_rehashes_matches_tf():
    # a TF 2.21 checkpoint of 140 variables v{i}_{'x' * (i % 7)} (buckets grow 13 -> 29 -> 59 -> 127 -> 257):
    # the reader's order, as positions in the sorted keys
    from tapeflow.train._map_order import unordered_map_order

    v = "/.ATTRIBUTES/VARIABLE_VALUE"
    keys = [f"v{i}_{'x' * (i % 7)}{v}" for i in range(140)]
    keys = sorted(keys + ["save_counter" + v, "_CHECKPOINTABLE_OBJECT_GRAPH"])
    tf_positions = [
        141, 139, 137, 136, 132, 131, 129, 127, 50, 6, 20, 46, 106, 51, 5, 85, 133, 44, 55, 138, 40, 57, 78, 36, 54, 14,
        61, 33, 24, 32, 39, 27, 15, 118, 29, 9, 26, 42, 8, 140, 13, 11, 47, 62, 2, 111, 31, 134, 59, 108, 48, 3, 21, 7,
        121, 123, 35, 22, 43, 58, 65, 76, 77, 52, 112, 45, 17, 37, 18, 41, 96, 30, 0, 90, 16, 84, 19, 130, 128, 38, 23,
        109, 60, 101, 56, 63, 64, 68, 86, 69, 49, 87, 70, 71, 12, 72, 94, 119, 113, 73, 74, 75, 79, 80, 117, 81, 25, 10,
        105, 92, 1, 83, 103, 82, 115, 28, 88, 89, 91, 93, 98, 99, 34, 4, 100, 95, 102, 125, 104, 135, 53, 67, 97, 107,
        122, 110, 114, 116, 66, 120, 124, 126]
    assert unordered_map_order(keys) == [keys[i] for i in tf_positions]


def _raise(exc):
    raise exc


@pytest.mark.parametrize("exc, want", [
    (TypeError("t"), tf.errors.InvalidArgumentError), (ValueError("v"), tf.errors.InvalidArgumentError),
    (AttributeError("a"), tf.errors.UnknownError), (StopIteration(), tf.errors.OutOfRangeError),
    (NotImplementedError("n"), tf.errors.UnimplementedError), (KeyError("k"), tf.errors.UnknownError),
    (tf.errors.NotFoundError(None, None, "nf"), tf.errors.UnknownError)])
def test_py_function_reports_python_exceptions_as_tf(exc, want):
    # TF 2.21's py_func kernel, eagerly and inside tf.function alike
    with pytest.raises(want, match=type(exc).__name__ + ": "):
        tf.py_function(lambda x: _raise(exc), [1.0], tf.float32)
    with pytest.raises(want):
        tf.function(lambda: tf.py_function(lambda x: _raise(exc), [1.0], tf.float32))()


def test_py_function_passes_tensors_eagerly():
    seen = []

    def f(a, b, c):
        seen.extend([(type(a), a.dtype), (type(b), b.dtype), (type(c), c.dtype)])
        return a

    tf.py_function(f, [False, 4, tf.Variable(2.0)], tf.bool)  # TF: three EagerTensors, bool/int32/float32
    assert seen == [(tf.Tensor, tf.bool), (tf.Tensor, tf.int32), (tf.Tensor, tf.float32)]


def test_tensor_index_errors_are_numpys_as_in_tf():
    import operator

    with pytest.raises(AttributeError, match="'numpy.bool' object has no attribute '__index__'"):
        operator.index(tf.constant(True))
    with pytest.raises(AttributeError, match="'numpy.float32' object has no attribute '__index__'"):
        operator.index(tf.constant(1.5))
    with pytest.raises(TypeError, match="only integer scalar arrays can be converted to a scalar index"):
        operator.index(tf.constant([3]))
    assert operator.index(tf.constant(3)) == 3


def test_read_file_of_a_directory_is_failed_precondition(tmp_path):
    with pytest.raises(tf.errors.FailedPreconditionError, match="; Is a directory"):
        tf.io.read_file(str(tmp_path))


def test_saved_model_without_signatures_skips_a_signature_function_with_no_outputs(tmp_path):
    # TF's saved_model guide: the only input_signature function (mutate) returns nothing, so no signature
    class CustomModule(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.0)

        @tf.function
        def __call__(self, x):
            return x * self.v

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def mutate(self, new_v):
            self.v.assign(new_v)

    module = CustomModule()
    module(tf.constant(0.0))
    tf.saved_model.save(module, str(tmp_path / "m"))
    imported = tf.saved_model.load(str(tmp_path / "m"))
    assert len(imported.signatures) == 0
    assert "RestoredFunction object at 0x" in repr(imported.__call__)  # TF's default object repr


def test_loaded_signature_structured_outputs_are_named_specs(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
        def __call__(self, x):
            return {"custom_output_name": x * 2}

    m = M()
    tf.saved_model.save(m, str(tmp_path / "m"), signatures={"serving_default": m.__call__.get_concrete_function()})
    outputs = tf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"].structured_outputs
    assert repr(outputs) == ("{'custom_output_name': TensorSpec(shape=<unknown>, dtype=tf.float32, "
                             "name='custom_output_name')}")


def test_saving_traces_each_concrete_function_once_more_as_tf(tmp_path, capsys):
    # TF 2.21's saved_model guide: save traces the Python function again (once per concrete function: a
    # later save reuses that trace); a compatible concrete function asked for later is not traced at all
    class CustomModule(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.0)

        @tf.function
        def __call__(self, x):
            print("Tracing with", x)
            return x * self.v

    module = CustomModule()
    module(tf.constant(0.0))
    print("Saving model...")
    tf.saved_model.save(module, str(tmp_path / "a"))
    assert capsys.readouterr().out == ('Tracing with Tensor("x:0", shape=(), dtype=float32)\nSaving model...\n'
                                       'Tracing with Tensor("x:0", shape=(), dtype=float32)\n')
    call = module.__call__.get_concrete_function(tf.TensorSpec(None, tf.float32))
    tf.saved_model.save(module, str(tmp_path / "b"), signatures=call)
    assert capsys.readouterr().out == 'Tracing with Tensor("x:0", dtype=float32)\n' * 2
    signatures = {"serving_default": call,
                  "array_input": module.__call__.get_concrete_function(tf.TensorSpec([None], tf.float32))}
    tf.saved_model.save(module, str(tmp_path / "c"), signatures=signatures)
    assert capsys.readouterr().out == ""
    assert tf.saved_model.load(str(tmp_path / "c"))(tf.constant(3.0)).numpy() == 3.0
