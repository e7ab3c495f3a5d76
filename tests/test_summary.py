"""tf.summary and the Keras TensorBoard callback: event files read back with
TensorBoard's own reader; protos, values, tags and steps pinned against TF 2.21."""

import glob
import io
import os
import re

import numpy as np
import pytest

import tapeflow as tf

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402
from tensorboard.compat.proto import config_pb2  # noqa: E402
from tensorboard.util.tensor_util import make_ndarray  # noqa: E402


def read_events(logdir):
    """(step, tag, plugin, metadata bytes, value) of every summary in logdir, in file order."""
    out = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        for ev in EventFileLoader(path).Load():
            for v in ev.summary.value:
                out.append((ev.step, v.tag, v.metadata.plugin_data.plugin_name, v.metadata.SerializeToString(),
                            make_ndarray(v.tensor), v.tensor.dtype))
    return out


def decode_png(data):
    import matplotlib.image as mi

    return np.round(mi.imread(io.BytesIO(data), format="png") * 255).astype(int)


def test_file_writer_makes_v2_event_file(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path / "logs"))
    files = glob.glob(str(tmp_path / "logs" / "events.out.tfevents.*"))
    assert len(files) == 1 and files[0].endswith(".v2")
    w.close()


def test_scalar_proto_and_metadata_as_tf(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))
    with w.as_default(step=3):
        assert bool(tf.summary.scalar("loss", 0.5))
        tf.summary.scalar("loss2", tf.constant(2, tf.int64), step=4, description="d")
    ev = read_events(tmp_path)
    # TF 2.21 writes float32 scalars (DT_FLOAT = 1) with these exact metadata bytes
    assert [(s, t, m, float(v), d) for s, t, _, m, v, d in ev] == [
        (3, "loss", b"\n\t\n\x07scalars \x01", 0.5, 1),
        (4, "loss2", b"\n\t\n\x07scalars\x1a\x01d \x01", 2.0, 1),
    ]


def test_histogram_buckets_as_tf(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))
    with w.as_default(step=3):
        tf.summary.histogram("h", np.arange(10.0))
        tf.summary.histogram("hf", np.random.RandomState(0).randn(1000).astype("float32"), buckets=7)
        tf.summary.histogram("h1", [1.0, 1.0])
        tf.summary.histogram("h0", np.zeros([0]))
    ev = {t: (m, v, d) for _, t, _, m, v, d in read_events(tmp_path)}
    meta, h, dt = ev["h"]
    assert meta == b"\n\x0c\n\nhistograms \x02" and dt == 2 and h.shape == (30, 3)  # DT_DOUBLE
    np.testing.assert_allclose(h[:4], [[0.0, 0.3, 1.0], [0.3, 0.6, 0.0], [0.6, 0.9, 0.0], [0.9, 1.2, 1.0]])
    assert h[-1].tolist() == [8.7, 9.0, 1.0] and h[:, 2].sum() == 10
    # TF 2.21's buckets for 1000 standard normals (seed 0), 7 buckets
    np.testing.assert_allclose(ev["hf"][1], [
        [-3.046143054962158, -2.216786180223737, 17.0], [-2.216786180223737, -1.3874293054853166, 67.0],
        [-1.3874293054853166, -0.558072430746896, 213.0], [-0.558072430746896, 0.27128444399152496, 330.0],
        [0.27128444399152496, 1.100641318729946, 255.0], [1.100641318729946, 1.929998193468366, 91.0],
        [1.929998193468366, 2.759355068206787, 27.0]], rtol=1e-12)
    one = ev["h1"][1]
    assert (one[:, :2] == 1.0).all() and one[:, 2].tolist() == [0.0] * 29 + [2.0]
    assert (ev["h0"][1] == 0).all() and ev["h0"][1].shape == (30, 3)


def test_image_png_pixels_as_tf(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))
    u8 = (np.random.RandomState(1).rand(3, 2, 3, 1) * 255).astype("uint8")
    with w.as_default(step=3):
        tf.summary.image("img", np.random.RandomState(0).rand(2, 4, 5, 3), max_outputs=1)
        tf.summary.image("imgu", u8)
        tf.summary.image("imga", np.random.RandomState(2).rand(1, 2, 2, 4).astype("float32") * 1.2 - 0.1)
    ev = {t: (m, v) for _, t, _, m, v, _ in read_events(tmp_path)}
    meta, img = ev["img"]
    assert meta == b"\n\x08\n\x06images \x03"
    assert img.shape == (3,) and img[0] == b"5" and img[1] == b"4"  # width, height, then one PNG
    # TF converts floats with convert_image_dtype (x * 255.5, truncated): its first row
    assert decode_png(img[2])[0].tolist() == [[140, 182, 154], [139, 108, 165], [111, 227, 246], [97, 202, 135],
                                              [145, 236, 18]]
    _, imgu = ev["imgu"]
    assert imgu.shape == (5,) and [imgu[0], imgu[1]] == [b"3", b"2"]
    for k in range(3):
        assert (decode_png(imgu[2 + k]) == u8[k, :, :, 0]).all()
    # RGBA with values clipped to [0, 1] first (TF's pixels)
    assert decode_png(ev["imga"][1][2]).tolist() == [[[108, 0, 142, 107], [103, 75, 37, 164]],
                                                     [[66, 56, 164, 136], [15, 131, 30, 215]]]


def test_text_as_tf(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))
    with w.as_default(step=3):
        tf.summary.text("t", "hello")
        tf.summary.text("t2", ["a", "b"])
    ev = read_events(tmp_path)
    assert [(t, m, v.tolist(), d) for _, t, _, m, v, d in ev] == [
        ("t", b"\n\x06\n\x04text \x02", b"hello", 7), ("t2", b"\n\x06\n\x04text \x02", [b"a", b"b"], 7)]


def test_return_values_record_if_and_steps(tmp_path):
    assert repr(tf.summary.scalar("x", 1.0, step=1)) == "<tf.Tensor: shape=(), dtype=bool, numpy=False>"
    w = tf.summary.create_file_writer(str(tmp_path))
    with w.as_default(step=1):
        assert bool(tf.summary.should_record_summaries())
        with tf.summary.record_if(False):
            assert not bool(tf.summary.scalar("x", 1.0))
            assert not bool(tf.summary.should_record_summaries())
        with tf.summary.record_if(lambda: False):
            assert not bool(tf.summary.scalar("x", 1.0))
        with tf.name_scope("sc"), tf.name_scope("inner"):
            assert bool(tf.summary.scalar("my loss", 1.0))
    assert not bool(tf.summary.should_record_summaries())
    assert tf.summary.experimental.get_step() is None
    step = tf.Variable(7, dtype=tf.int64)
    tf.summary.experimental.set_step(step)
    try:
        assert tf.summary.experimental.get_step() is step
        with w.as_default():
            tf.summary.scalar("v", 2.0)
            step.assign(9)
            tf.summary.scalar("v", 3.0)  # a variable step is read at each write
    finally:
        tf.summary.experimental.set_step(None)
    ev = read_events(tmp_path)
    assert [(s, t) for s, t, *_ in ev] == [(1, "sc/inner/my loss"), (7, "v"), (9, "v")]


def test_errors_as_tf(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))
    with w.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tf.summary.scalar("x", 1.0)
    with w.as_default(step=1):
        with pytest.raises(ValueError, match=r"Expected scalar shape, saw shape: \(2,\)"):
            tf.summary.scalar("x", [1.0, 2.0])
        with pytest.raises(tf.errors.UnimplementedError, match="Cast string to float"):
            tf.summary.scalar("x", "a")
        with pytest.raises(ValueError, match="must have rank 4"):
            tf.summary.image("i", np.zeros([2, 2, 3]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="1, 2, 3, or 4 channels, got 5"):
            tf.summary.image("i", np.zeros([1, 2, 2, 5]))
        with pytest.raises(TypeError, match="tensor must be of type tf.string; got tf.float32"):
            tf.summary.text("t", 1.0)
        with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int64"):
            tf.summary.scalar("x", 1.0, step=1.5)
    w.close()
    w.flush()  # no-op after close, as TF
    with pytest.raises(RuntimeError, match="already closed"):
        w.as_default(step=3)
    noop = tf.summary.create_noop_writer()
    with noop.as_default(step=1):
        assert not bool(tf.summary.scalar("x", 1.0))
    with pytest.raises(ValueError):
        tf.summary.create_file_writer(None)
    with pytest.raises(NotImplementedError, match="profiler"):
        tf.summary.trace_on(graph=True, profiler=True)


def test_summaries_inside_tf_function_write_at_run_time(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))

    @tf.function
    def f(x, step):
        with w.as_default():
            tf.summary.scalar("fx", x, step=step)
            tf.summary.histogram("fh", [x, x + 1], step=step)
        return x * 2

    assert float(f(tf.constant(1.0), tf.constant(3, tf.int64))) == 2.0
    assert float(f(tf.constant(2.0), tf.constant(4, tf.int64))) == 4.0
    assert f.experimental_get_tracing_count() == 1
    w.flush()
    ev = [(s, t, v.ravel()[:3].tolist()) for s, t, _, _, v, _ in read_events(tmp_path)]
    assert ev[0] == (3, "fx", [1.0]) and ev[2] == (4, "fx", [2.0])
    assert ev[1][:2] == (3, "fh") and np.allclose(ev[1][2], [1.0, 1.0333333333, 1.0])


def test_step_variable_in_tf_function_is_read_at_run_time(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))
    step = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def train(x):
        with w.as_default(step=step):
            tf.summary.scalar("loss", x)
        step.assign_add(1)

    for i in range(3):
        train(tf.constant(float(i)))
    w.flush()
    assert [(s, float(v)) for s, _, _, _, v, _ in read_events(tmp_path)] == [(0, 0.0), (1, 1.0), (2, 2.0)]


def test_trace_export_writes_the_traced_graph(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))

    @tf.function
    def f(x):
        return tf.tanh(x) * 2.0

    tf.summary.trace_on(graph=True)
    f(tf.constant([1.0]))
    with w.as_default():
        assert tf.summary.trace_export("my_trace", step=0) is None
    (step, tag, plugin, meta, value, _), = read_events(tmp_path)
    assert (step, tag, plugin) == (0, "my_trace", "graph_run_metadata_graph")
    run = config_pb2.RunMetadata.FromString(value.item())
    nodes = {n.name: (n.op, list(n.input)) for n in run.function_graphs[0].pre_optimization_graph.node}
    assert nodes == {"x": ("Placeholder", []), "Tanh": ("Tanh", ["x"]), "mul/y": ("Const", []),  # TF's names
                     "mul": ("Mul", ["Tanh", "mul/y"]), "Identity": ("Identity", ["mul"])}


# ----------------------------------------------------------------------------- Keras callback

def _fit_with_tensorboard(log_dir, **kw):
    x = np.random.RandomState(0).rand(40, 4).astype("float32")
    y = (x.sum(1) > 2).astype("int32")
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="relu", name="d1"),
                             tf.keras.layers.Dense(2, name="d2")])
    m.compile(tf.keras.optimizers.SGD(0.1), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    hist = m.fit(x, y, batch_size=10, epochs=3, validation_data=(x[:20], y[:20]), verbose=0,
                 callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(log_dir), **kw)])
    events = {}
    for sub in ("train", "validation"):
        events[sub] = [(s, re.sub(r"^sequential(_\d+)?/", "", t), p, v)  # weight.path: sequential_N/d1/kernel
                       for s, t, p, _, v, _ in read_events(os.path.join(str(log_dir), sub)) if t != "keras"]
    return hist, events


WEIGHTS = ["d1/kernel", "d1/bias", "d2/kernel", "d2/bias"]


def test_tensorboard_callback_epoch_logs_as_keras(tmp_path):
    hist, ev = _fit_with_tensorboard(tmp_path, histogram_freq=2, write_images=True)
    # Keras 3.15's tags, steps and order (read from real Keras's files)
    expected = []
    for epoch in range(3):
        expected += [(epoch, "epoch_accuracy"), (epoch, "epoch_loss"), (epoch, "epoch_learning_rate")]
        if epoch % 2 == 0:
            for w in WEIGHTS:
                expected += [(epoch, f"{w}/histogram"), (epoch, f"{w}/image")]
    assert [(s, t) for s, t, _, _ in ev["train"]] == expected
    val_expected = []
    for epoch in range(3):
        it = 4 * (epoch + 1)  # optimizer.iterations after the epoch
        val_expected += [(it, "evaluation_accuracy_vs_iterations"), (it, "evaluation_loss_vs_iterations"),
                         (epoch, "epoch_accuracy"), (epoch, "epoch_loss")]
    assert [(s, t) for s, t, _, _ in ev["validation"]] == val_expected
    train_loss = [float(v) for s, t, _, v in ev["train"] if t == "epoch_loss"]
    np.testing.assert_allclose(train_loss, hist.history["loss"], rtol=1e-6)
    val_loss = [float(v) for s, t, _, v in ev["validation"] if t == "epoch_loss"]
    np.testing.assert_allclose(val_loss, hist.history["val_loss"], rtol=1e-6)
    assert [float(v) for s, t, _, v in ev["train"] if t == "epoch_learning_rate"] == pytest.approx([0.1] * 3)
    plugins = {t: p for _, t, p, _ in ev["train"]}
    assert plugins["d1/kernel/histogram"] == "histograms" and plugins["d1/kernel/image"] == "images"


def test_tensorboard_callback_batch_logs_as_keras(tmp_path):
    _, ev = _fit_with_tensorboard(tmp_path, update_freq="batch", write_steps_per_second=True)
    expected = []
    for epoch in range(3):
        for b in range(1, 5):
            step = 4 * epoch + b
            expected += [(step, "batch_steps_per_second"), (step, "batch_accuracy"), (step, "batch_loss")]
        expected += [(epoch, "epoch_accuracy"), (epoch, "epoch_loss"), (epoch, "epoch_learning_rate"),
                     (epoch, "epoch_steps_per_second")]
    assert [(s, t) for s, t, _, _ in ev["train"]] == expected


def test_tensorboard_callback_update_freq_int_records_as_keras(tmp_path):
    # Keras's record_if(step % update_freq == 0) stays in force at epoch end: with
    # update_freq=2 and 3 batches per epoch, Keras 3 drops the first epoch's logs.
    x = np.random.RandomState(0).rand(64, 4).astype("float32")
    y = (x.sum(1) > 2).astype("int32")
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2, name="d2")])
    m.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    m.fit(x, y, batch_size=16, epochs=2, validation_split=0.25, verbose=0,
          callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), update_freq=2)])
    train = [(s, t) for s, t, *_ in read_events(str(tmp_path / "train")) if t != "keras"]
    assert train == [(2, "batch_accuracy"), (2, "batch_loss"), (4, "batch_accuracy"), (4, "batch_loss"),
                     (6, "batch_accuracy"), (6, "batch_loss"), (1, "epoch_accuracy"), (1, "epoch_loss"),
                     (1, "epoch_learning_rate")]
    val = [(s, t) for s, t, *_ in read_events(str(tmp_path / "validation"))]
    assert val == [(6, "evaluation_accuracy_vs_iterations"), (6, "evaluation_loss_vs_iterations"),
                   (1, "epoch_accuracy"), (1, "epoch_loss")]


def test_user_summaries_inside_fit_go_to_the_train_writer(tmp_path):
    class Logged(tf.keras.layers.Layer):
        def call(self, x):
            tf.summary.scalar("mean_input", tf.reduce_mean(x))
            return x

    x = np.ones((8, 2), "float32")
    m = tf.keras.Sequential([tf.keras.Input((2,)), Logged(), tf.keras.layers.Dense(1)])
    m.compile("sgd", "mse")
    m.fit(x, np.zeros((8, 1)), batch_size=4, epochs=1, verbose=0,
          callbacks=[tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path), update_freq="batch")])
    tags = [(s, t) for s, t, *_ in read_events(str(tmp_path / "train")) if t.endswith("mean_input")]
    # As in Keras 3: the train step is traced at batch 1, so the Python-int step
    # the callback set then is baked into the traced summary op.
    assert tags == [(1, "mean_input"), (1, "mean_input")]


def test_auto_packing_lists_of_tensors_keeps_gradients():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.convert_to_tensor([x, x * 3, 1.0]))
        z = tf.reduce_sum([[x, 1.0], [2.0, x]])
    assert float(tape.gradient(y, x)) == 4.0 and float(tape.gradient(z, x)) == 2.0

    @tf.function
    def g(v):
        return tf.convert_to_tensor([v, 2 * v])

    assert g(tf.constant(1.0)).numpy().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int32"):
        with tf.GradientTape() as tape:
            tf.convert_to_tensor([tf.constant(1), 1.5])


def test_graph_summary_follows_record_if(tmp_path):
    w = tf.summary.create_file_writer(str(tmp_path))

    @tf.function
    def f(x):
        return x * 2

    g = f.get_concrete_function(tf.constant(1.0)).graph
    with w.as_default(), tf.summary.record_if(lambda: False):
        assert not bool(tf.summary.graph(g))
    with w.as_default():
        assert bool(tf.summary.graph(g))
