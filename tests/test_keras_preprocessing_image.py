"""tf.keras.preprocessing.image (Keras 3.15's ImageDataGenerator and iterators, the image helpers) and
tf.keras.utils.PyDataset in fit: draws, pixels, orders and losses pinned from Keras 3.15 / TF 2.21 with
SciPy 1.17.1 (whose ndimage.affine_transform Keras calls)."""

import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras.preprocessing import ndimage

P = tf.keras.preprocessing.image


def checksum(a):
    """A weighted float64 sum: any one pixel off changes it."""
    a = np.asarray(a, np.float64).ravel()
    return float(a @ (np.arange(a.size) % 7 + 1))


AFFINE = {
    ("constant", 0): -666.3999999463558,
    ("constant", 1): -685.6270006299019,
    ("nearest", 0): 1487.5999714434147,
    ("nearest", 1): 1553.3729676827788,
    ("reflect", 0): 1706.899992197752,
    ("reflect", 1): 1671.8799884915352,
    ("grid-mirror", 0): 1706.899992197752,
    ("grid-mirror", 1): 1671.8799884915352,
    ("mirror", 0): 1924.499998152256,
    ("mirror", 1): 1945.2910026945174,
    ("wrap", 0): 1938.100002169609,
    ("wrap", 1): 1936.6209997162223,
    ("grid-wrap", 0): 1769.7999969422817,
    ("grid-wrap", 1): 1743.483986645937,
    ("grid-constant", 0): -587.4000009000301,
    ("grid-constant", 1): -613.8770016133785,
}


@pytest.mark.parametrize("mode,order", sorted(AFFINE))
def test_affine_transform_is_scipys(mode, order):
    img = (np.arange(2 * 6 * 7).reshape(2, 6, 7) % 11 * 1.7 - 3).astype(np.float32)
    out = ndimage.affine_transform(
        img, np.array([[0.9, -0.45], [0.5, 1.2]]), np.array([-1.3, 2.6]), order=order, mode=mode, cval=-2.5
    )
    assert out.dtype == np.float32 and out.shape == img.shape
    assert checksum(out) == AFFINE[(mode, order)]


def test_affine_transform_equals_scipy_on_random_images():
    sp = pytest.importorskip("scipy.ndimage")
    rng = np.random.default_rng(0)
    for trial in range(40):
        h, w = rng.integers(1, 9, 2)
        dt = (np.float32, np.float64, np.uint8, np.int16)[trial % 4]
        img = (rng.normal(size=(2, h, w)) * 50 + 100).astype(dt)
        m, off = rng.normal(size=(2, 2)) * 1.5, rng.normal(size=2) * max(h, w)
        for mode in ndimage.MODES:
            for order in (0, 1):
                ref = np.stack([sp.affine_transform(c, m, off, order=order, mode=mode, cval=3.5) for c in img])
                got = ndimage.affine_transform(img, m, off, order=order, mode=mode, cval=3.5)
                assert got.dtype == ref.dtype and np.array_equal(got, ref), (mode, order, dt)


def test_affine_transform_errors():
    img = np.zeros((1, 3, 3), np.float32)
    with pytest.raises(NotImplementedError, match="spline order 3"):
        ndimage.affine_transform(img, np.eye(2), [0, 0], order=3)
    with pytest.raises(RuntimeError, match="boundary mode not supported"):
        ndimage.affine_transform(img, np.eye(2), [0, 0], mode="bogus")
    with pytest.raises(ValueError, match="Input arrays must be multi-channel 2D images"):
        P.apply_affine_transform(np.zeros((3, 3)), theta=10)


def test_random_transform_draws_are_keras():
    g = P.ImageDataGenerator(
        rotation_range=30,
        width_shift_range=[-2, 3],
        height_shift_range=0.2,
        shear_range=10,
        zoom_range=0.25,
        channel_shift_range=20.0,
        horizontal_flip=True,
        vertical_flip=True,
        brightness_range=(0.8, 1.2),
        fill_mode="constant",
        cval=3.0,
    )
    p = g.get_random_transform((9, 10, 3), seed=4)
    assert p == {
        "theta": 28.0217903408206,
        "tx": 0.17003609703260034,
        "ty": -3,
        "shear": 4.296319873487294,
        "zx": 1.0988644122986355,
        "zy": 0.8580447477901882,
        "flip_horizontal": 0,
        "flip_vertical": 1,
        "channel_shift_intensity": -9.880705504662242,
        "brightness": 0.9739166129617783,
    }


def _images():
    rng = np.random.default_rng(0)
    return (rng.random((7, 6, 5, 3)) * 255).astype("float32"), np.array([0, 1, 2, 0, 1, 2, 0])


def test_flow_batches_are_kerass():
    x, y = _images()
    g = P.ImageDataGenerator(
        rotation_range=25,
        width_shift_range=0.1,
        zoom_range=0.2,
        horizontal_flip=True,
        rescale=1 / 255.0,
        fill_mode="reflect",
    )
    it = g.flow(x, y, batch_size=3, seed=7)
    batches = [next(it) for _ in range(3)]
    assert [checksum(xb) for xb, _ in batches] == [571.5419140681624, 553.3364208564162, 197.01750959455967]
    assert [yb.tolist() for _, yb in batches] == [[2, 2, 0], [0, 0, 1], [1]]
    assert batches[0][0].dtype == np.float32 and batches[0][0].shape == (3, 6, 5, 3)
    it = g.flow(x, y, batch_size=3, seed=7)  # by index, as model.fit reads it
    assert len(it) == 3
    # each read reseeds with seed + reads so far (Keras's pinned values came from these four reads)
    assert checksum(it[2][0]) == 186.76676110178232 and it[2][1].tolist() == [1]
    assert checksum(it[0][0]) == 560.4431261885911 and it[0][1].tolist() == [2, 2, 0]
    it.on_epoch_end()
    assert it.index_array.tolist() == [0, 4, 2, 1, 6, 5, 3]
    np.random.seed(3)
    assert checksum(g.random_transform(x[0])) == 46334.26964759827


def test_fit_statistics_and_standardize():
    x, _ = _images()
    g = P.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True)
    g.fit(x)
    np.testing.assert_array_equal(
        g.mean.ravel(), np.float32([132.73838806152344, 138.16165161132812, 128.8728485107422])
    )
    np.testing.assert_array_equal(g.std.ravel(), np.float32([74.25389099121094, 68.02586364746094, 75.61771392822266]))
    xb = next(g.flow(x, batch_size=7, shuffle=False))
    np.testing.assert_allclose(xb.mean(axis=(0, 1, 2)), 0, atol=1e-5)
    with pytest.warns(UserWarning, match="hasn't been fit on any training data"):
        P.ImageDataGenerator(featurewise_center=True).standardize(x[0].copy())
    with pytest.raises(ValueError, match="Input to `.fit\\(\\)` should have rank 4"):
        g.fit(x[0])


def test_validation_split_subsets():
    x, y = _images()
    x, y = np.concatenate([x, x]), np.concatenate([y, y])
    g = P.ImageDataGenerator(validation_split=0.5)
    tr, va = g.flow(x, y, subset="training", batch_size=4), g.flow(x, y, subset="validation", batch_size=4)
    assert (tr.n, va.n, len(tr), len(va)) == (7, 7, 2, 2)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        P.ImageDataGenerator(validation_split=1.5)
    with pytest.raises(ValueError, match="Invalid subset name: test"):
        g.flow(x, y, subset="test")


def _write_pngs(root):
    from PIL import Image

    for c, n in (("dogs", 3), ("cats", 2)):
        os.makedirs(os.path.join(root, c))
        for i in range(n):
            arr = ((np.arange(8 * 10 * 3).reshape(8, 10, 3) * (i + 3) + len(c)) % 256).astype("uint8")
            Image.fromarray(arr).save(os.path.join(root, c, f"{i}.png"))


def test_flow_from_directory_is_kerass(tmp_path, capsys):
    pytest.importorskip("PIL")
    _write_pngs(str(tmp_path))
    g = P.ImageDataGenerator(rotation_range=20, rescale=1 / 255.0)
    it = g.flow_from_directory(str(tmp_path), target_size=(6, 7), batch_size=4, seed=1)
    assert capsys.readouterr().out == "Found 5 images belonging to 2 classes.\n"
    xb, yb = next(it)
    assert it.filenames == ["cats/0.png", "cats/1.png", "dogs/0.png", "dogs/1.png", "dogs/2.png"]
    assert it.classes.tolist() == [0, 0, 1, 1, 1] and it.class_indices == {"cats": 0, "dogs": 1}
    assert xb.shape == (4, 6, 7, 3) and checksum(xb) == 974.0087498612702
    assert yb.tolist() == [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]
    gray = P.ImageDataGenerator().flow_from_directory(
        str(tmp_path), color_mode="grayscale", class_mode="sparse", target_size=(4, 4), shuffle=False, batch_size=5
    )
    xb, yb = gray[0]
    assert xb.shape == (5, 4, 4, 1) and yb.dtype == np.float32 and yb.tolist() == [0, 0, 1, 1, 1]
    with pytest.raises(ValueError, match="Invalid class_mode: bad"):
        g.flow_from_directory(str(tmp_path), class_mode="bad")


def test_image_helpers_round_trip(tmp_path):
    pytest.importorskip("PIL")
    x, _ = _images()
    img = tf.keras.utils.array_to_img(x[0])
    assert img.size == (5, 6) and img.mode == "RGB"
    arr = tf.keras.utils.img_to_array(img)
    assert arr.shape == (6, 5, 3) and arr.dtype == np.float32
    path = str(tmp_path / "a.png")
    tf.keras.utils.save_img(path, x[0])
    back = P.img_to_array(P.load_img(path, target_size=(3, 4)))
    assert back.shape == (3, 4, 3)
    assert P.img_to_array(P.load_img(path, color_mode="grayscale")).shape == (6, 5, 1)
    with pytest.raises(ValueError, match='color_mode must be "grayscale", "rgb", or "rgba"'):
        P.load_img(path, color_mode="cmyk")
    with pytest.raises(ValueError, match="Invalid interpolation method cubic"):
        P.load_img(path, target_size=(2, 2), interpolation="cubic")


def test_fit_on_an_iterator_draws_kerass_batches():
    x, y = _images()
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((6, 5, 3)), tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)])
    model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    g = P.ImageDataGenerator(rotation_range=20, rescale=1 / 255.0, horizontal_flip=True)
    h = model.fit(g.flow(x, y, batch_size=3, seed=5), epochs=2, verbose=0)
    np.testing.assert_allclose(h.history["loss"], [1.7219258546829224, 1.54727041721344], rtol=3e-7)


class _LoggedDataset(tf.keras.utils.PyDataset):
    def __init__(self, log, tag, n):
        super().__init__()
        self.log, self.tag, self.n = log, tag, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.log.append(f"{self.tag}{i}")
        return np.full((2, 2), float(i), "float32"), np.zeros((2, 1), "float32")

    def on_epoch_begin(self):
        self.log.append(self.tag + "<")

    def on_epoch_end(self):
        self.log.append(self.tag + ">")


def test_pydataset_is_read_in_kerass_order():
    import random

    log = []
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(
        _LoggedDataset(log, "t", 3), validation_data=_LoggedDataset(log, "v", 2), epochs=2, verbose=0, shuffle=False
    )
    log.append("|")
    model.evaluate(_LoggedDataset(log, "e", 3), verbose=0)
    log.append("|")
    model.predict(_LoggedDataset(log, "p", 3), verbose=0)
    assert " ".join(log) == (
        "t0 t1 t> t< t0 t1 t2 t> v0 v1 v> v< v0 v1 v> t< t0 t1 t2 t> v> v< v0 v1 v> | "
        "e0 e1 e> e< e0 e1 e2 e> | p0 p1 p< p0 p1 p2 p>"
    )
    random.seed(1)
    log.clear()
    model.fit(_LoggedDataset(log, "s", 4), epochs=2, verbose=0)  # shuffle=True: Python's random.shuffle
    assert " ".join(log) == "s0 s1 s> s< s3 s0 s2 s1 s> s< s3 s1 s0 s2 s>"
    with pytest.raises(ValueError, match="When providing `x` as a PyDataset, `y` should not be passed"):
        model.fit(_LoggedDataset(log, "s", 4), np.zeros(4), verbose=0)


def test_missing_parts_say_so():
    with pytest.raises(NotImplementedError, match="spline order 2"):
        P.ImageDataGenerator(rotation_range=10, interpolation_order=2).random_transform(np.zeros((4, 4, 1)))
    assert tf.keras.preprocessing.image_dataset_from_directory is tf.keras.utils.image_dataset_from_directory
    assert tf.keras.preprocessing.text.Tokenizer is not None
    # Keras 3.15 keeps pad_sequences there (the masking guide's tf.keras.preprocessing.sequence.pad_sequences)
    assert tf.keras.preprocessing.sequence.pad_sequences is tf.keras.utils.pad_sequences
    assert tf.keras.preprocessing.timeseries_dataset_from_array is tf.keras.utils.timeseries_dataset_from_array


def _flower_dir(root):
    from PIL import Image

    for c, n in (("roses", 4), ("daisy", 3), ("tulips", 3)):
        os.makedirs(os.path.join(root, c), exist_ok=True)
        for i in range(n):
            yy, xx = np.mgrid[0 : 10 + 2 * i, 0 : 13 - i]
            arr = np.stack([(xx * 19 + len(c) * 7) % 256, (yy * 23 + i * 40) % 256, (xx * yy * 5) % 256], -1)
            Image.fromarray(arr.astype(np.uint8)).save(os.path.join(root, c, f"{i}.png" if i != 2 else f"{i}.bmp"))


def test_image_dataset_from_directory_is_kerass(tmp_path, capsys):
    pytest.importorskip("PIL")
    root = str(tmp_path)
    _flower_dir(root)
    tf.random.set_seed(0)
    ds = tf.keras.utils.image_dataset_from_directory(root, image_size=(6, 5), batch_size=4, seed=42)
    assert capsys.readouterr().out == "Found 10 files belonging to 3 classes.\n"
    assert ds.class_names == ["daisy", "roses", "tulips"]
    assert [os.path.relpath(p, root) for p in ds.file_paths] == [
        "tulips/1.png",
        "daisy/1.png",
        "roses/2.bmp",
        "daisy/0.png",
        "tulips/0.png",
        "daisy/2.bmp",
        "tulips/2.bmp",
        "roses/1.png",
        "roses/0.png",
        "roses/3.png",
    ]
    assert str(ds.element_spec) == (
        "(TensorSpec(shape=(None, 6, 5, 3), dtype=tf.float32, name=None), "
        "TensorSpec(shape=(None,), dtype=tf.int32, name=None))"
    )
    assert [(checksum(x), y.numpy().tolist()) for x, y in ds] == [
        (163575.40219140053, [1, 2, 1, 2]),
        (157789.0080512762, [1, 0, 0, 1]),
        (83857.28655946255, [2, 0]),
    ]
    assert [(checksum(x), y.numpy().tolist()) for x, y in ds] == [  # reshuffled each pass, as TF
        (160975.17174482346, [1, 2, 1, 0]),
        (161118.35776031017, [0, 0, 1, 2]),
        (81900.41788446903, [2, 1]),
    ]
    tr, va = tf.keras.utils.image_dataset_from_directory(
        root,
        image_size=(4, 4),
        batch_size=3,
        seed=7,
        validation_split=0.3,
        subset="both",
        label_mode="categorical",
        interpolation="nearest",
    )
    assert capsys.readouterr().out.splitlines()[1:] == ["Using 7 files for training.", "Using 3 files for validation."]
    assert [(checksum(x), y.numpy().tolist()) for x, y in va] == [(64681.0, [[0.0, 1.0, 0.0]] * 3)]
    assert [os.path.relpath(p, root) for p in tr.file_paths] == [
        "tulips/1.png",
        "roses/2.bmp",
        "daisy/0.png",
        "daisy/2.bmp",
        "daisy/1.png",
        "tulips/2.bmp",
        "tulips/0.png",
    ]
    ds = tf.keras.utils.image_dataset_from_directory(
        root,
        image_size=(5, 7),
        batch_size=None,
        shuffle=False,
        crop_to_aspect_ratio=True,
        class_names=["tulips", "daisy"],
        label_mode="binary",
    )
    assert [(checksum(x), y.numpy().tolist()) for x, y in ds] == [
        (44729.28528082371, [0.0]),
        (59426.600306510925, [0.0]),
        (55496.94219350815, [0.0]),
        (43749.28528082371, [1.0]),
        (58446.600306510925, [1.0]),
        (54516.94219350815, [1.0]),
    ]
    with pytest.raises(ValueError, match="you must provide a `seed` argument"):
        tf.keras.utils.image_dataset_from_directory(root, validation_split=0.2, subset="training")
    with pytest.raises(NotImplementedError, match="pad_to_aspect_ratio=True"):
        tf.keras.utils.image_dataset_from_directory(root, pad_to_aspect_ratio=True)


def test_flow_from_dataframe_is_kerass(tmp_path, capsys):
    pytest.importorskip("PIL")
    pd = pytest.importorskip("pandas")
    _write_pngs(str(tmp_path))
    df = pd.DataFrame(
        {
            "filename": ["cats/0.png", "dogs/1.png", "cats/1.png", "dogs/0.png", "missing.png", "dogs/2.png"],
            "class": ["cat", "dog", "cat", "dog", "dog", "dog"],
            "w": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "t1": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
            "multi": [["a"], ["a", "b"], ["b"], ["c"], ["a"], ["b", "c"]],
        }
    )
    g = P.ImageDataGenerator(rotation_range=15, rescale=1 / 255.0, validation_split=0.4)

    def first(**kw):
        with pytest.warns(UserWarning, match='Found 1 invalid image filename\\(s\\) in x_col="filename"'):
            it = g.flow_from_dataframe(df, directory=str(tmp_path), target_size=(5, 6), batch_size=3, seed=4, **kw)
        b = next(it)
        return it, (b if isinstance(b, tuple) else (b,))

    it, (x, y) = first()
    assert capsys.readouterr().out == "Found 5 validated image filenames belonging to 2 classes.\n"
    assert it.filenames == ["cats/0.png", "dogs/1.png", "cats/1.png", "dogs/0.png", "dogs/2.png"]
    assert checksum(x) == 544.3773252442479 and y.tolist() == [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    _, (x, y, w) = first(class_mode="binary", weight_col="w")
    assert y.tolist() == [0.0, 1.0, 1.0] and w.tolist() == [1.0, 4.0, 2.0]
    it, (x, y) = first(class_mode="sparse", subset="training")
    assert it.filenames == ["cats/1.png", "dogs/0.png", "dogs/2.png"] and checksum(x) == 498.6630953839049
    assert y.tolist() == [1.0, 0.0, 1.0]
    assert first(class_mode="raw", y_col="t1")[1][1].tolist() == [0.1, 0.4, 0.2]
    ys = first(class_mode="multi_output", y_col=["t1", "w"])[1][1]
    assert [v.tolist() for v in ys] == [[0.1, 0.4, 0.2], [1.0, 4.0, 2.0]]
    assert first(y_col="multi")[1][1].tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    it, (x,) = first(class_mode=None, subset="validation")
    assert it.filenames == ["cats/0.png", "dogs/1.png"] and checksum(x) == 344.9830641075969
    it, (x, y) = first(classes=["dog"])
    assert it.filenames == ["dogs/1.png", "dogs/0.png", "dogs/2.png"] and y.tolist() == [[1.0], [1.0], [1.0]]
