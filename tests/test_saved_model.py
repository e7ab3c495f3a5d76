"""tf.saved_model.save / load in tapeflow's own format: functions callable, differentiable and
restorable without the original Python class; signatures return dicts as TF's."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf

pytest.importorskip("safetensors")


class Dense(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0], [2.0]], name="w")
        self.b = tf.Variable(0.5, name="b")
        self.extra = [tf.Variable(3.0)]

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
    def __call__(self, x):
        return tf.nn.relu(x @ self.w + self.b) * self.extra[0]

    @tf.function
    def scale(self, x, k):
        return x * k * self.b


class Outer(tf.Module):
    def __init__(self):
        super().__init__()
        self.inner = Dense()
        self.step = tf.Variable(0, trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
    def __call__(self, x):
        self.step.assign_add(1)
        return {"y": self.inner(x)}


def _saved(tmp_path):
    m = Outer()
    m.inner.scale(tf.constant([1.0, 2.0]), tf.constant(2.0))
    path = str(tmp_path / "sm")
    tf.saved_model.save(m, path)
    return m, path


def test_loaded_functions_call_differentiate_and_count(tmp_path):
    m, path = _saved(tmp_path)
    assert sorted(os.listdir(path)) == ["saved_model.tapeflow", "variables"]
    assert tf.saved_model.contains_saved_model(path)
    loaded = tf.saved_model.load(path)
    x = tf.constant([[1.0, 1.0]])
    assert float(loaded(x)["y"].numpy()[0, 0]) == 10.5 == float(m(x)["y"].numpy()[0, 0])
    out = loaded.signatures["serving_default"](x=x)
    assert isinstance(out, dict) and list(out) == ["y"]
    np.testing.assert_array_equal(loaded.inner.scale(tf.constant([1.0, 2.0]), tf.constant(2.0)).numpy(), [1, 2])
    with tf.GradientTape() as tape:
        y = loaded(x)["y"]
    gw, gb = tape.gradient(y, [loaded.inner.w, loaded.inner.b])
    np.testing.assert_array_equal(gw.numpy(), [[3.0], [3.0]])
    assert float(gb.numpy()) == 3.0
    assert int(loaded.step.numpy()) == 3  # the stateful assign_add ran in each call
    assert [v.name for v in loaded.trainable_variables] == ["w:0", "b:0", "Variable:0"]
    # one input: TF's flat signature takes it positionally too
    assert list(loaded.signatures["serving_default"](x)) == ["y"]


def test_loaded_object_restores_a_checkpoint_of_the_original(tmp_path):
    m, path = _saved(tmp_path)
    m.inner.w.assign([[5.0], [6.0]])
    ck = tf.train.Checkpoint(model=m).save(str(tmp_path / "ck"))
    loaded = tf.saved_model.load(path)
    tf.train.Checkpoint(model=loaded).restore(ck).assert_existing_objects_matched()
    np.testing.assert_array_equal(loaded.inner.w.numpy(), [[5.0], [6.0]])
    assert float(loaded(tf.constant([[1.0, 1.0]]))["y"].numpy()[0, 0]) == pytest.approx(3 * 11.5)


def test_load_in_a_process_without_the_class(tmp_path):
    _, path = _saved(tmp_path)
    code = (
        f"import tapeflow as tf; m = tf.saved_model.load({path!r}); "
        "print(float(m.signatures['serving_default'](x=tf.constant([[1.0, 1.0]]))['y'].numpy()[0, 0]))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__)))
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": root},
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "10.5"


def test_signatures_argument_and_errors(tmp_path):
    m = Dense()
    path = str(tmp_path / "a")
    tf.saved_model.save(
        m,
        path,
        signatures={
            "double": m.scale.get_concrete_function(
                tf.TensorSpec([2], tf.float32, name="x"), tf.TensorSpec([], tf.float32, name="k")
            )
        },
    )
    loaded = tf.saved_model.load(path)
    out = loaded.signatures["double"](x=tf.constant([1.0, 2.0]), k=tf.constant(2.0))
    np.testing.assert_array_equal(out["output_0"].numpy(), [1.0, 2.0])
    with pytest.raises(ValueError, match="has no input_signature"):
        tf.saved_model.save(m, str(tmp_path / "b"), signatures=m.scale)
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        tf.saved_model.load(str(tmp_path / "nothing"))
    os.makedirs(tmp_path / "tfsm")
    (tmp_path / "tfsm" / "saved_model.pb").write_bytes(b"")
    with pytest.raises(NotImplementedError, match="protobuf"):
        tf.saved_model.load(str(tmp_path / "tfsm"))


def test_keras_model_gets_tfs_default_signature(tmp_path):
    # as TF 2.21 with Keras 3: serving_default(inputs=...) -> {"output_0": ...}
    model = tf.keras.Sequential(
        [tf.keras.Input((3,)), tf.keras.layers.Dense(2, activation="relu"), tf.keras.layers.Dense(1)]
    )
    path = str(tmp_path / "k")
    tf.saved_model.save(model, path)
    sig = tf.saved_model.load(path).signatures["serving_default"]
    assert sig.structured_input_signature == ((), {"inputs": tf.TensorSpec([None, 3], tf.float32, name="inputs")})
    x = np.ones((2, 3), "float32")
    out = sig(inputs=tf.constant(x))
    assert list(out) == ["output_0"]
    np.testing.assert_array_equal(out["output_0"].numpy(), model(x).numpy())

    class Sub(tf.keras.Model):
        def call(self, x):
            return x

    sub = Sub()
    sub(x)  # built by a call: tapeflow does not know its input spec (TF traces it from the call)
    with pytest.raises(NotImplementedError, match="without known inputs"):
        tf.saved_model.save(sub, str(tmp_path / "s"))


def test_save_after_the_function_ran_under_a_tape(tmp_path):
    """Training first (a backward function compiled) and exporting after, as the Core API quickstart does."""

    class Lin(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[1.0], [2.0]])

        @tf.function
        def __call__(self, x):
            return x @ self.w

    class Export(tf.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        @tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])
        def __call__(self, x):
            return self.model(x / 2.0)

    lin = Lin()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(lin(tf.ones((3, 2))))
    tape.gradient(loss, lin.w)
    tf.saved_model.save(Export(lin), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_array_equal(loaded(tf.ones((2, 2))).numpy(), [[1.5], [1.5]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(loaded.model(tf.ones((3, 2))))
    np.testing.assert_array_equal(tape.gradient(y, loaded.model.w).numpy(), [[3.0], [3.0]])


def test_custom_gradient_is_saved_and_used_after_loading(tmp_path):
    # the advanced-autodiff guide's example: the loaded function keeps its clipped gradient (TF: 2.0)
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    class MyModule(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)

    tf.saved_model.save(MyModule(), str(tmp_path / "m"),
                        options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))
    v = tf.Variable(2.0)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    assert float(output) == 4.0 and float(t.gradient(output, v)) == 2.0

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)
        return tf.math.log(1 + e), lambda upstream: upstream * (1 - 1 / (1 + e))

    class Reads(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([])])
        def f(self, x):
            return log1pexp(x)

    with pytest.raises(NotImplementedError, match="reads tensors of the forward pass"):
        tf.saved_model.save(Reads(), str(tmp_path / "r"))


def test_loaded_signature_takes_its_one_input_positionally_as_tf(tmp_path):
    # TF 2.21 (tutorials/distribute/save_and_load): a one-input signature falls back to its flat signature,
    # which takes one positional tensor; more positionals, a non-tensor or two inputs are TF's TypeErrors
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="b_in")])
        def f(self, b_in):
            return {"out": b_in * 2}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="b_in"),
                                      tf.TensorSpec([None], tf.float32, name="a_in")])
        def g(self, b_in, a_in):
            return {"out": b_in - a_in}

    m = M()
    tf.saved_model.save(m, str(tmp_path / "one"), signatures=m.f)
    tf.saved_model.save(m, str(tmp_path / "two"), signatures=m.g)
    s = tf.saved_model.load(str(tmp_path / "one")).signatures["serving_default"]
    assert s(tf.constant([1.0]))["out"].numpy().tolist() == [2.0]
    assert repr(s).startswith("<ConcreteFunction (*, b_in: TensorSpec(shape=(None,), dtype=tf.float32, "
                              "name='b_in')) -> Dict[['out', TensorSpec(shape=(None,), dtype=tf.float32, "
                              "name='out')]] at 0x")
    for args, kwargs, why in [
            (([1.0],), {}, "signature_wrapper_f(b_in): expected argument #0(zero-based) to be a Tensor; got list "
                           "([1.0])."),
            ((tf.constant([1.0]),), {"b_in": tf.constant([1.0])}, "signature_wrapper_f(b_in) got two values for "
                                                                  "'b_in'."),
            ((tf.constant([1.0]), tf.constant([1.0])), {}, "signature_wrapper_f(b_in) takes 1 positional "
                                                           "arguments, got 2.")]:
        with pytest.raises(TypeError) as e:
            s(*args, **kwargs)
        assert str(e.value).startswith("Binding inputs to tf.function failed due to `too many positional arguments`")
        assert str(e.value).splitlines()[-1] == "Fallback to flat signature also failed due to: " + why
    s2 = tf.saved_model.load(str(tmp_path / "two")).signatures["serving_default"]
    with pytest.raises(TypeError, match=r"for signature: \(\*, a_in: TensorSpec.*, b_in: .*\nFallback to flat "
                                        r"signature also failed due to: signature_wrapper_g\(a_in, b_in\) takes 0 "
                                        r"positional arguments, got 2\.$"):
        s2(tf.constant([1.0]), tf.constant([5.0]))
    assert s2(b_in=tf.constant([1.0]), a_in=tf.constant([5.0]))["out"].numpy().tolist() == [-4.0]


def test_saving_a_keras_model_never_called_saves_no_signature(tmp_path):
    # TF 2.21: a subclassed model with no known inputs is saved without a serving signature
    class SubclassedModel(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(5)

        def call(self, inputs):
            return self.dense(inputs)

    tf.saved_model.save(SubclassedModel(), str(tmp_path / "m"))
    assert repr(tf.saved_model.load(str(tmp_path / "m")).signatures) == "_SignatureMap({})"
