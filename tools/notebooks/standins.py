"""Local stand-ins for what TF's notebooks download or import from packages neither venv has.

Used by ``run.py`` identically under both backends, so a cell that touches a stand-in gets the same
inputs under TensorFlow and under tapeflow. What each stand-in is:

- ``mnist.load_data()``: the real local Fashion-MNIST (same shapes and dtypes as MNIST).
- ``fashion_mnist.load_data()``: the real local Fashion-MNIST.
- ``tf.keras.utils.get_file('HIGGS.csv.gz', ...)``: a synthetic gzip CSV (12 000 rows, label + 28 features).
- ``get_file`` of the IMDB (``aclImdb_v1.tar.gz``) and Stack Overflow archives: folders of short random
  ``.txt`` files per class (the class's words among filler words), written where Keras would extract them;
  of ``petfinder-mini.zip``: a synthetic CSV with the real columns (1 000 rows). ``np.split`` of a DataFrame
  gives DataFrames, as with pandas 2 (pandas 3 gives arrays, which breaks the structured-data tutorial).
- ``pandas.read_csv`` of auto-mpg / wdbc / ecg URLs: synthetic files with the real column layout.
- ``tensorflow_datasets``: ``load`` of ``mnist`` (Fashion-MNIST again) and ``penguins/*`` (synthetic),
  ``as_dataframe``; ``seaborn``, ``sklearn`` (the few functions used), ``tensorflow_docs``, ``IPython``,
  ``imageio``, ``tensorflow_probability`` (``Normal.quantile``), ``requests.get`` (a synthetic JPEG).
- The image tutorials: ``cifar10.load_data()`` (synthetic, CIFAR-10's shapes and dtypes), ``get_file`` of
  ``flower_photos.tgz`` (200 JPEGs in 5 class folders), ``facades.tar.gz`` (pix2pix's 400/106/100 pairs) and the
  sunflower photo, ``tfds.load('tf_flowers')`` (200 images of varied sizes, tfds's labels and ``ClassLabel``).
- ``tensorflow_hub.KerasLayer`` of an ImageNet classifier: Keras's MobileNetV2 with stand-in weights (1001 logits).
- ``tensorflow_examples.models.pix2pix`` (U-Net generator, PatchGAN discriminator, instance normalisation) and
  ``tfds.load('cycle_gan/horse2zebra')`` (2 + 2 training, 1 + 1 test 256x256 photos).
"""

from __future__ import annotations

import gzip
import os
import statistics
import sys
import types

from typing import Any

import numpy as np

DATA = os.environ.get("NB_STANDIN_DIR", "/tmp/nb_standins")
FMNIST = "/usr/share/datasets/fashion-mnist"


def _idx(name: str) -> np.ndarray:
    with gzip.open(os.path.join(FMNIST, name)) as f:
        raw = f.read()
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape).copy()


_CACHE: dict = {}


def fashion_mnist_load_data(*args, **kwargs):
    if "f" not in _CACHE:
        _CACHE["f"] = ((_idx("train-images-idx3-ubyte.gz"), _idx("train-labels-idx1-ubyte.gz")),
                       (_idx("t10k-images-idx3-ubyte.gz"), _idx("t10k-labels-idx1-ubyte.gz")))
    (a, b), (c, d) = _CACHE["f"]
    return (a.copy(), b.copy()), (c.copy(), d.copy())


def _write_once(name: str, make) -> str:
    os.makedirs(DATA, exist_ok=True)
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        tmp = path + f".{os.getpid()}.tmp"
        make(tmp)
        os.replace(tmp, path)
    return path


def _higgs(path: str) -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(12000, 28)).astype(np.float32)
    y = (x[:, :4].sum(1) + 0.5 * rng.normal(size=12000) > 0).astype(np.float32)
    with gzip.open(path, "wt") as f:
        for yi, xi in zip(y, x):
            f.write(",".join([f"{yi:.18e}"] + [f"{v:.18e}" for v in xi]) + "\n")


def _auto_mpg(path: str) -> None:
    rng = np.random.default_rng(2)
    with open(path, "w") as f:
        for i in range(398):
            cyl = int(rng.choice([4, 6, 8]))
            disp = 50.0 * cyl + rng.normal(0, 20)
            hp = "?" if i in (32, 126, 330, 336, 354, 374) else f"{40 + 12 * cyl + rng.normal(0, 10):.1f}"
            w = 1500 + 300 * cyl + rng.normal(0, 200)
            acc = rng.uniform(8, 25)
            yr = int(rng.integers(70, 83))
            orig = int(rng.integers(1, 4))
            mpg = 50 - 3 * cyl - w / 400 + (yr - 70) * 0.6 + rng.normal(0, 2)
            f.write(f"{mpg:.1f}   {cyl}   {disp:.1f}      {hp}      {w:.1f}      {acc:.1f}   {yr}  {orig}"
                    f"\t\"car {i}\"\n")


def _wdbc(path: str) -> None:
    rng = np.random.default_rng(3)
    with open(path, "w") as f:
        for i in range(569):
            m = rng.random() < 0.37
            feats = np.abs(rng.normal(1.0 + 0.6 * m, 0.3, size=30)) * np.geomspace(20, 0.01, 30)
            f.write(",".join([str(842302 + i), "M" if m else "B"] + [f"{v:.5g}" for v in feats]) + "\n")


def _ecg(path: str) -> None:
    rng = np.random.default_rng(4)
    t = np.linspace(0, 2 * np.pi, 140)
    with open(path, "w") as f:
        for _ in range(4998):
            normal = rng.random() < 0.58
            sig = np.sin(t * (1 if normal else 1.7)) + 0.2 * rng.normal(size=140)
            f.write(",".join([f"{v:.6f}" for v in sig] + ["1.0" if normal else "0.0"]) + "\n")


def _jpeg(path: str) -> None:
    from PIL import Image
    yy, xx = np.mgrid[0:256, 0:384]
    img = np.stack([(xx * 255 // 383), (yy * 255 // 255), ((xx + yy) % 256)], -1).astype(np.uint8)
    Image.fromarray(img).save(path, format="JPEG")


URLS = {"auto-mpg.data": ("auto-mpg.data", _auto_mpg), "wdbc.data": ("wdbc.data", _wdbc),
        "ecg.csv": ("ecg.csv", _ecg), "HIGGS.csv.gz": ("HIGGS.csv.gz", _higgs)}


def local_path(url_or_name: str) -> str | None:
    for key, (name, make) in URLS.items():
        if str(url_or_name).endswith(key):
            return _write_once(name, make)
    return None


_WORDS = {
    "pos": "great wonderful loved excellent best fun amazing superb brilliant enjoyable".split(),
    "neg": "awful terrible boring worst bad waste poor dull horrible stupid".split(),
    "python": "def import self print list dict pandas numpy lambda".split(),
    "java": "public static void class string arraylist jvm maven".split(),
    "csharp": "linq var async namespace dotnet using nuget".split(),
    "javascript": "function var const node react dom promise npm".split(),
}
_FILLER = "the movie film was a and of to it this plot how do i get value in my code when is not working".split()


def _text_tree(root: str, classes: tuple, per_class: int, seed: int, extra: dict) -> None:
    """``root/{train,test}/<class>/<n>.txt`` of random sentences with class words (plus ``extra`` files)."""
    rng = np.random.default_rng(seed)
    for split in ("train", "test"):
        for label in classes:
            os.makedirs(os.path.join(root, split, label), exist_ok=True)
            for i in range(per_class):
                n = int(rng.integers(5, 40))
                toks = [str(rng.choice(_WORDS[label] if rng.random() < 0.3 else _FILLER)) for _ in range(n)]
                text = " ".join(toks).capitalize() + ". <br /><br />" + str(rng.choice(["Really!", "Meh...", "(Why?)"]))
                with open(os.path.join(root, split, label, f"{i}_{int(rng.integers(1, 10))}.txt"), "w") as f:
                    f.write(text)
    for rel, text in extra.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)


def _petfinder_csv(path: str) -> None:
    import pandas as pd

    rng = np.random.default_rng(6)
    cols = {"Type": ["Cat", "Dog"], "Breed1": ["Tabby", "Mixed Breed", "Domestic Short Hair", "Poodle", "Terrier"],
            "Gender": ["Male", "Female"], "Color1": ["Black", "Brown", "Golden", "White", "Cream", "Gray"],
            "Color2": ["White", "No Color", "Brown", "Gray", "Cream"], "MaturitySize": ["Small", "Medium", "Large"],
            "FurLength": ["Short", "Medium", "Long"], "Vaccinated": ["No", "Yes", "Not Sure"],
            "Sterilized": ["No", "Yes", "Not Sure"], "Health": ["Healthy", "Minor Injury"]}
    n = 1000
    df = {"Type": rng.choice(cols["Type"], n), "Age": rng.integers(1, 60, n)}
    for k in ("Breed1", "Gender", "Color1", "Color2", "MaturitySize", "FurLength", "Vaccinated", "Sterilized",
              "Health"):
        df[k] = rng.choice(cols[k], n)
    df["Fee"] = rng.choice([0, 50, 100, 150, 200, 300], n)
    df["Description"] = ["A lovely pet."] * n
    df["PhotoAmt"] = rng.integers(0, 10, n)
    df["AdoptionSpeed"] = rng.integers(0, 5, n)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pd.DataFrame(df).to_csv(path, index=False)


def _archive(fname: Any, origin: Any, cache_dir: Any, cache_subdir: str) -> str | None:
    """The tutorials' archives, written where Keras would extract them (a fresh copy per notebook: the IMDB
    tutorial deletes a folder of it)."""
    base = os.path.join(os.path.expanduser(cache_dir or "~/.keras"), cache_subdir)
    url = str(origin or fname)
    if url.endswith("aclImdb_v1.tar.gz"):
        # Keras 3 extracts into fname's folder, or fname up to its first dot + "_extracted" (text11)
        name = str(fname or "aclImdb_v1")
        root = os.path.join(base, name[:name.find(".")] + "_extracted" if "." in name else name)
        _text_tree(os.path.join(root, "aclImdb"), ("neg", "pos"), 60, 7,
                   {"train/pos/1181_9.txt": "Rachel Griffiths writes and directs this award winning short film.",
                    "train/unsup/0_0.txt": "unlabeled"})
        return root
    if url.endswith("stack_overflow_16k.tar.gz"):
        _text_tree(base, ("csharp", "java", "javascript", "python"), 30, 8,
                   {"train/python/1755.txt": '"why does this blank program print words like list in python?"'})
        return os.path.join(base, "stack_overflow_16k.tar.gz")
    if url.endswith("petfinder-mini.zip"):
        _petfinder_csv(os.path.join(base, "petfinder-mini", "petfinder-mini.csv"))
        return os.path.join(base, "petfinder_mini.zip")
    return None


def get_file(fname=None, origin=None, *args, untar=False, cache_dir=None, cache_subdir="datasets", **kwargs) -> str:
    for cand in (fname, origin):
        if cand and (p := local_path(cand)):
            return p
    if (p := _archive(fname, origin, cache_dir, cache_subdir)) is not None:
        return p
    if (p := _image_archive(fname, origin, cache_dir, cache_subdir)) is not None:
        return p
    if (p := _speech_archive(fname, origin, cache_dir, cache_subdir)) is not None:
        return p
    if (p := _csv_archive(fname, origin, cache_dir, cache_subdir)) is not None:
        return p
    if str(origin or fname).endswith("jena_climate_2009_2016.csv.zip"):
        return jena_csv_dir(os.path.join(os.path.expanduser(cache_dir or "~/.keras"), cache_subdir))
    raise RuntimeError(f"no local stand-in for get_file({fname!r}, {origin!r})")


class _Anything:
    """Stand-in for plotting objects (seaborn axes/grids): every attribute and call gives itself."""

    def __getattr__(self, name):
        return self

    def __call__(self, *a, **k):
        return self

    def __iter__(self):
        return iter(())

    def __repr__(self):
        return "<stand-in>"


def _module(name: str, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


def _train_test_split(*arrays, test_size=0.25, random_state=None, **kwargs):
    n = len(arrays[0])
    n_test = int(np.ceil(test_size * n)) if isinstance(test_size, float) else int(test_size)
    # sklearn's check_random_state(None) is NumPy's global generator (which run.py seeds)
    rs = np.random.mtrand._rand if random_state is None else np.random.RandomState(random_state)
    perm = rs.permutation(n)
    test, train = perm[:n_test], perm[n_test:]
    out = []
    for a in arrays:
        out += [a.iloc[train], a.iloc[test]] if hasattr(a, "iloc") else [np.asarray(a)[train], np.asarray(a)[test]]
    return out


def _confusion_matrix(y_true, y_pred, normalize=None, **kwargs):
    y_true, y_pred = np.asarray(y_true).astype(int), np.asarray(y_pred).astype(int)
    k = int(max(y_true.max(), y_pred.max())) + 1
    cm = np.zeros((k, k))
    np.add.at(cm, (y_true, y_pred), 1)
    if normalize == "true":
        cm = cm / cm.sum(1, keepdims=True)
    return cm


def _metric(fn):
    def metric(y_true, y_pred, **kwargs):
        t, p = np.asarray(y_true).astype(int).ravel(), np.asarray(y_pred).astype(int).ravel()
        return float(fn(t, p))
    return metric


_accuracy = _metric(lambda t, p: np.mean(t == p))
_precision = _metric(lambda t, p: np.sum((p == 1) & (t == 1)) / max(np.sum(p == 1), 1))
_recall = _metric(lambda t, p: np.sum((p == 1) & (t == 1)) / max(np.sum(t == 1), 1))


def _penguins(n: int = 334):
    rng = np.random.default_rng(5)
    species = rng.integers(0, 3, size=n)
    feats = np.stack([rng.normal(0.4 + 0.1 * species, 0.05), rng.normal(0.5 - 0.1 * species, 0.05),
                      rng.normal(0.5 + 0.1 * species, 0.05), rng.normal(0.4 + 0.1 * species, 0.05)], 1)
    return feats.astype(np.float32), species.astype(np.int64)


def _split_range(spec: str, n: int) -> tuple[int, int]:
    if "[" not in spec:
        return 0, n
    body = spec[spec.index("[") + 1:-1]
    lo, hi = body.split(":")

    def conv(s, default):
        if not s:
            return default
        return int(n * int(s[:-1]) / 100) if s.endswith("%") else int(s)
    return conv(lo, 0), conv(hi, n)


class _Split:
    def __init__(self, n):
        self.num_examples = n


class _Info:
    def __init__(self, name, splits, features=None):
        self.name, self.splits, self.features = name, {k: _Split(v) for k, v in splits.items()}, features

    def __repr__(self):
        return f"tfds.core.DatasetInfo(name='{self.name}')"


def _tfds_load(name, split=None, batch_size=None, as_supervised=False, with_info=False, **kwargs):
    import tensorflow as tf  # the backend run.py installed
    if name.startswith("tf_flowers"):
        return _tfds_load_flowers(name, split, batch_size, as_supervised, with_info, **kwargs)
    if name.startswith("oxford_iiit_pet"):
        return _tfds_load_pets(split, with_info)
    if name.startswith("cycle_gan"):
        return _tfds_load_horse2zebra(split, as_supervised, with_info)
    if name.startswith("mnist"):
        (xa, ya), (xb, yb) = fashion_mnist_load_data()
        parts = {"train": (xa[..., None], ya.astype(np.int64)), "test": (xb[..., None], yb.astype(np.int64))}
        keys = ("image", "label")
    elif name.startswith("penguins"):
        x, y = _penguins()
        parts = {"train": (x, y)}
        keys = ("features", "species")
    else:
        raise RuntimeError(f"no local stand-in for tfds.load({name!r})")
    info = _Info(name.split("/")[0], {k: len(v[1]) for k, v in parts.items()})

    def make(spec):
        base = spec.split("[")[0]
        x, y = parts[base]
        lo, hi = _split_range(spec, len(y))
        x, y = x[lo:hi], y[lo:hi]
        if batch_size == -1:
            if as_supervised:
                return tf.constant(x), tf.constant(y)
            return {keys[0]: tf.constant(x), keys[1]: tf.constant(y)}
        ds = tf.data.Dataset.from_tensor_slices((x, y) if as_supervised else {keys[0]: x, keys[1]: y})
        return ds.batch(batch_size) if batch_size else ds

    if split is None:
        out = {k: make(k) for k in parts}
    elif isinstance(split, (list, tuple)):
        out = [make(s) for s in split]
    else:
        out = make(split)
    return (out, info) if with_info else out


def _as_dataframe(ds, info=None):
    import pandas as pd
    rows = []
    for el in ds:
        if isinstance(el, dict):
            rows.append({k: np.asarray(v).tolist() for k, v in el.items()})
        else:
            rows.append({f"c{i}": np.asarray(v).tolist() for i, v in enumerate(el)})
    return pd.DataFrame(rows)


def _epoch_dots():
    import tensorflow as tf

    class EpochDots(tf.keras.callbacks.Callback):
        def __init__(self, report_every=100, dot_every=1):
            super().__init__()
            self.report_every, self.dot_every = report_every, dot_every

        def on_epoch_end(self, epoch, logs=None):
            if epoch % self.report_every == 0:
                print(f"\nEpoch: {epoch:d}, " + ", ".join(f"{k}:{v:0.4f}" for k, v in sorted((logs or {}).items())))
            if epoch % self.dot_every == 0:
                print(".", end="")
    return EpochDots


class _LazyEpochDots:
    def __call__(self, *a, **k):
        return _epoch_dots()(*a, **k)


class _Writer:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def append_data(self, *a):
        pass


def _imread(path):
    from PIL import Image
    return np.asarray(Image.open(path))


class _Normal:
    def __init__(self, loc, scale):
        self.d = statistics.NormalDist(float(loc), float(scale))

    def quantile(self, p):
        import tensorflow as tf
        return tf.constant(np.vectorize(self.d.inv_cdf)(np.asarray(p, np.float64)).astype(np.float32))


class _Response:
    def __init__(self, path):
        self.raw = open(path, "rb")


def install(backend_tf) -> None:
    """Installs every stand-in; ``backend_tf`` is the imported ``tensorflow`` (real or tapeflow)."""
    anything = _Anything()
    _module("seaborn", pairplot=anything, heatmap=anything, countplot=anything, set=anything, __version__="stand-in",
            __getattr__=lambda name: anything)
    skm = _module("sklearn.metrics", accuracy_score=_accuracy, precision_score=_precision, recall_score=_recall,
                  confusion_matrix=_confusion_matrix)
    sks = _module("sklearn.model_selection", train_test_split=_train_test_split)
    _module("sklearn", metrics=skm, model_selection=sks, __path__=[])
    _module("tensorflow_datasets", load=_tfds_load, as_dataframe=_as_dataframe, __version__="stand-in")
    tfdm = _module("tensorflow_docs.modeling", EpochDots=_LazyEpochDots())
    tfdp = _module("tensorflow_docs.plots", HistoryPlotter=anything)
    tfdv = _module("tensorflow_docs.vis", embed=anything, __path__=[])
    _module("tensorflow_docs.vis.embed", embed_file=anything)
    _module("tensorflow_docs", modeling=tfdm, plots=tfdp, vis=tfdv, __path__=[])
    ipd = _module("IPython.display", display=lambda *a, **k: None, clear_output=lambda *a, **k: None, Image=anything,
                  HTML=anything)
    _module("IPython", display=ipd, get_ipython=lambda: None, version_info=(8, 20, 0), __version__="8.20.0",
            __path__=[])
    _module("imageio", get_writer=lambda *a, **k: _Writer(), imread=_imread)
    tfpd = _module("tensorflow_probability.distributions", Normal=_Normal)
    _module("tensorflow_probability", distributions=tfpd, __path__=[])
    _module("requests", get=lambda url, **k: _Response(_write_once("corgi.jpg", _jpeg)))

    import pandas as pd
    real_read_csv = pd.read_csv

    def read_csv(path, *a, **k):
        local = local_path(path) if isinstance(path, str) else None
        return real_read_csv(local or path, *a, **k)
    pd.read_csv = read_csv

    real_split = np.split

    def split(ary, indices_or_sections, axis=0):  # pandas 2's np.split of a DataFrame: DataFrames (pandas 3: arrays)
        if isinstance(ary, pd.DataFrame) and axis == 0 and not isinstance(indices_or_sections, int):
            bounds = [0, *indices_or_sections, len(ary)]
            return [ary.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        return real_split(ary, indices_or_sections, axis)
    np.split = split

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.show = lambda *a, **k: plt.close("all")

    keras_mods = [backend_tf.keras]
    if "keras" in sys.modules:
        keras_mods.append(sys.modules["keras"])
    for km in keras_mods:
        km.utils.get_file = get_file
        km.datasets.mnist.load_data = fashion_mnist_load_data
        km.datasets.fashion_mnist.load_data = fashion_mnist_load_data
    install_images(backend_tf)
    install_imbalanced()
    install_audio()
    install_nb11(backend_tf)
    install_segmentation(backend_tf)
    install_text11(backend_tf)
    install_text11_nmt(backend_tf)
    install_nb11_rl()
    install_nb11_hub(backend_tf)
    install_nb11_cyclegan(backend_tf)


# --- img11: the image tutorials (CIFAR-10, flower_photos, tf_flowers, facades) --------------------------------

_FLOWERS = ("daisy", "dandelion", "roses", "sunflowers", "tulips")
_FLOWER_RGB = {"daisy": (235, 235, 225), "dandelion": (245, 205, 30), "roses": (200, 30, 50),
               "sunflowers": (240, 170, 20), "tulips": (220, 80, 150)}
_TFDS_FLOWERS = ("dandelion", "daisy", "tulips", "sunflowers", "roses")  # tfds's label order


def _flower(rng: np.random.Generator, label: str) -> np.ndarray:
    """A photo-like ``uint8 [h, w, 3]`` image: a blurred green-brown background with a few petal blobs of the
    class's colour (varied sizes, as the real photos: 240-330 high, 320-500 wide)."""
    h, w = int(rng.integers(240, 331)), int(rng.integers(320, 501))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    bg = np.array([60, 110, 40], np.float32) + 40 * np.sin(xx[..., None] / rng.uniform(20, 60) + np.arange(3))
    img = bg + rng.normal(0, 12, (h, w, 3)).astype(np.float32)
    color = np.array(_FLOWER_RGB[label], np.float32)
    for _ in range(int(rng.integers(1, 4))):
        cy, cx, r = rng.uniform(0.2, 0.8) * h, rng.uniform(0.2, 0.8) * w, rng.uniform(0.1, 0.3) * min(h, w)
        ang = np.arctan2(yy - cy, xx - cx)
        petals = r * (0.75 + 0.25 * np.cos(int(rng.integers(5, 13)) * ang))
        inside = np.hypot(yy - cy, xx - cx) < petals
        img[inside] = 0.8 * color + 0.2 * img[inside]
        img[np.hypot(yy - cy, xx - cx) < 0.2 * r] = (90, 60, 20)
    return np.clip(img, 0, 255).astype(np.uint8)


def _save_jpeg(path: str, img: np.ndarray) -> None:
    from PIL import Image
    Image.fromarray(img).save(path, format="JPEG", quality=90)


def _flower_photos(root: str, per_class: int = 40) -> None:
    """``root/<class>/<n>.jpg`` per flower class, and the archive's LICENSE.txt (the real one has 3670 photos)."""
    rng = np.random.default_rng(11)
    for label in _FLOWERS:
        os.makedirs(os.path.join(root, label), exist_ok=True)
        for i in range(per_class):
            _save_jpeg(os.path.join(root, label, f"{int(rng.integers(10**7, 10**8))}_{i}.jpg"), _flower(rng, label))
    with open(os.path.join(root, "LICENSE.txt"), "w") as f:
        f.write("All images in this archive are licensed under the Creative Commons By-Attribution License.\n")


def _facade_pair(rng: np.random.Generator) -> np.ndarray:
    """A facades pair, ``uint8 [256, 512, 3]``: the photo on the left, its label map (flat colours) on the right."""
    label = np.zeros((256, 256, 3), np.uint8)
    label[:] = (0, 0, 170)  # wall
    rows, cols = int(rng.integers(3, 7)), int(rng.integers(3, 7))
    for r in range(rows):
        for c in range(cols):
            y0, x0 = 20 + r * 230 // rows, 15 + c * 230 // cols
            label[y0:y0 + 150 // rows, x0:x0 + 130 // cols] = (0, 85, 255)  # window
    label[200:, 100:150] = (170, 255, 85)  # door
    photo = np.where(label == (0, 0, 170), (150, 130, 110), (40, 50, 70)).astype(np.float32)
    photo += rng.normal(0, 15, photo.shape)
    return np.concatenate([np.clip(photo, 0, 255).astype(np.uint8), label], axis=1)


def _facades(root: str) -> None:
    """The pix2pix facades folders: ``train`` 400, ``test`` 106, ``val`` 100 pairs named ``1.jpg``..."""
    rng = np.random.default_rng(12)
    for split, n in (("train", 400), ("test", 106), ("val", 100)):
        os.makedirs(os.path.join(root, split), exist_ok=True)
        for i in range(1, n + 1):
            _save_jpeg(os.path.join(root, split, f"{i}.jpg"), _facade_pair(rng))


def _build_dir(out: str, sub: str, make) -> str:
    """``make(out/sub)`` once: built beside ``out`` and renamed into place, so concurrent runs never read half."""
    if not os.path.isdir(out):
        tmp = f"{out}.{os.getpid()}.tmp"
        make(os.path.join(tmp, sub))
        try:
            os.rename(tmp, out)
        except OSError:  # another run got there first
            import shutil
            shutil.rmtree(tmp)
    return out


def _image_archive(fname: Any, origin: Any, cache_dir: Any, cache_subdir: str) -> str | None:
    """flower_photos.tgz, facades.tar.gz and the sunflower photo, where Keras 3 would extract/save them."""
    base = os.path.join(os.path.expanduser(cache_dir or "~/.keras"), cache_subdir)
    url = str(origin or fname)
    if url.endswith("flower_photos.tgz"):
        return _build_dir(os.path.join(base, "flower_photos_extracted"), "flower_photos", _flower_photos)
    if url.endswith("/facades.tar.gz"):
        return _build_dir(os.path.join(base, "facades_extracted"), "facades", _facades)
    if url.endswith("Red_sunflower.jpg"):
        os.makedirs(base, exist_ok=True)
        path = os.path.join(base, str(fname))
        _save_jpeg(path + f".{os.getpid()}.tmp", _flower(np.random.default_rng(13), "sunflowers"))
        os.replace(path + f".{os.getpid()}.tmp", path)
        return path
    return None


def cifar10_load_data(*args, **kwargs):
    """CIFAR-10's shapes and dtypes: ``uint8 (50000, 32, 32, 3)`` / ``(10000, 32, 32, 3)``, labels ``uint8 (n, 1)``;
    each class a colour and a stripe direction under noise (learnable, not trivially)."""
    if "c10" not in _CACHE:
        rng = np.random.default_rng(14)
        colors = rng.uniform(40, 215, (10, 3)).astype(np.float32)
        angles = np.linspace(0, np.pi, 10, endpoint=False)
        yy, xx = np.mgrid[0:32, 0:32].astype(np.float32)

        def make(n):
            y = rng.integers(0, 10, n).astype(np.uint8)
            stripes = np.sin((np.cos(angles)[y, None, None] * xx + np.sin(angles)[y, None, None] * yy) * 0.8)
            x = colors[y][:, None, None, :] + 30 * stripes[..., None] + rng.normal(0, 40, (n, 32, 32, 3))
            return np.clip(x, 0, 255).astype(np.uint8), y[:, None]
        _CACHE["c10"] = (make(50000), make(10000))
    (a, b), (c, d) = _CACHE["c10"]
    return (a.copy(), b.copy()), (c.copy(), d.copy())


class _ClassLabel:
    """tfds.features.ClassLabel: ``num_classes``, ``names``, ``int2str``, ``str2int``."""

    def __init__(self, names):
        self.names, self.num_classes = list(names), len(names)

    def int2str(self, i):
        return self.names[int(np.asarray(i))]

    def str2int(self, s):
        return self.names.index(s)

    def __repr__(self):
        return f"ClassLabel(shape=(), dtype=int64, num_classes={self.num_classes})"


def _tfds_tf_flowers(n: int = 200):
    """tf_flowers ``train`` (the only split; the real one has 3670 images): ``uint8 [h, w, 3]`` of varied sizes,
    ``int64`` labels, a ``ClassLabel`` feature for the metadata."""
    if "tf_flowers" not in _CACHE:
        rng = np.random.default_rng(15)
        labels = rng.integers(0, 5, n)
        _CACHE["tf_flowers"] = ([_flower(rng, _TFDS_FLOWERS[k]) for k in labels], labels.astype(np.int64))
    images, labels = _CACHE["tf_flowers"]
    return images, labels, {"label": _ClassLabel(_TFDS_FLOWERS)}


def _tfds_load_flowers(name, split=None, batch_size=None, as_supervised=False, with_info=False, **kwargs):
    """``tfds.load('tf_flowers', ...)``: a generator dataset (the images differ in size), split specs as tfds's."""
    import tensorflow as tf
    images, labels, features = _tfds_tf_flowers()
    info = _Info("tf_flowers", {"train": len(labels)}, features)
    sig = (tf.TensorSpec([None, None, 3], tf.uint8), tf.TensorSpec([], tf.int64))

    def make(spec):
        if spec.split("[")[0] != "train":
            raise ValueError(f"Unknown split '{spec}'. Should be one of ['train'].")
        lo, hi = _split_range(spec, len(labels))

        def gen():
            for i in range(lo, hi):
                yield (images[i], labels[i]) if as_supervised else {"image": images[i], "label": labels[i]}
        out_sig = sig if as_supervised else {"image": sig[0], "label": sig[1]}
        ds = tf.data.Dataset.from_generator(gen, output_signature=out_sig)
        return ds.batch(batch_size) if batch_size and batch_size > 0 else ds

    out = ({"train": make("train")} if split is None else
           [make(s) for s in split] if isinstance(split, (list, tuple)) else make(split))
    return (out, info) if with_info else out


def install_images(backend_tf) -> None:
    """img11's stand-ins: ``cifar10.load_data`` (in both keras entry points); the tfds and get_file hooks are in
    ``_tfds_load`` and ``get_file``."""
    keras_mods = [backend_tf.keras] + ([sys.modules["keras"]] if "keras" in sys.modules else [])
    for km in keras_mods:
        km.datasets.cifar10.load_data = cifar10_load_data


# --- lead (2026-12-03): load_data/numpy's mnist.npz and load_data/pandas_dataframe's heart.csv -------------------


def _mnist_npz(path: str) -> None:
    (a, b), (c, d) = fashion_mnist_load_data()
    with open(path, "wb") as f:
        np.savez(f, x_train=a, y_train=b, x_test=c, y_test=d)


def _heart(path: str) -> None:
    # the Cleveland heart-disease table's columns and kinds (303 rows; thal a string column)
    rng = np.random.default_rng(5)
    cols = "age,sex,cp,trestbps,chol,fbs,restecg,thalach,exang,oldpeak,slope,ca,thal,target"
    with open(path, "w") as f:
        f.write(cols + "\n")
        for _ in range(303):
            sick = rng.random() < 0.27
            age = int(rng.integers(29, 78))
            row = [age, int(rng.random() < 0.68), int(rng.integers(0, 5)), int(rng.normal(131, 17)),
                   int(rng.normal(246, 50)), int(rng.random() < 0.15), int(rng.integers(0, 3)),
                   int(rng.normal(150 - 15 * sick, 20)), int(rng.random() < 0.2 + 0.3 * sick),
                   round(float(abs(rng.normal(1.0 + sick, 1.1))), 1), int(rng.integers(1, 4)), int(rng.integers(0, 4)),
                   str(rng.choice(["normal", "fixed", "reversible"], p=[0.55, 0.07, 0.38])), int(sick)]
            f.write(",".join(str(v) for v in row) + "\n")


URLS["mnist.npz"] = ("mnist.npz", _mnist_npz)
URLS["heart.csv"] = ("heart.csv", _heart)


# --- img11: the recurrent tutorials (Jena climate) ------------------------------------------------------------

_JENA_COLS = ["p (mbar)", "T (degC)", "Tpot (K)", "Tdew (degC)", "rh (%)", "VPmax (mbar)", "VPact (mbar)",
              "VPdef (mbar)", "sh (g/kg)", "H2OC (mmol/mol)", "rho (g/m**3)", "wv (m/s)", "max. wv (m/s)", "wd (deg)"]


def _ar1(rng: np.random.Generator, n: int, phi: float, scale: float) -> np.ndarray:
    """An AR(1) series (weather wanders smoothly): noise convolved (by FFT) with phi**k, cut where it is e**-8."""
    k = int(8 / -np.log(phi))
    size = 1 << int(np.ceil(np.log2(n + k)))
    out = np.fft.irfft(np.fft.rfft(rng.normal(size=n), size) * np.fft.rfft(phi ** np.arange(k), size), size)
    return scale * out[:n]


def _jena_csv(path: str, n: int = 420551) -> None:
    """jena_climate_2009_2016.csv's 15 columns and row count, every 10 minutes from 01.01.2009 00:10:00: temperature
    with yearly and daily cycles, pressure and humidity wandering, the rest derived physically (Magnus formula,
    ideal gas), wind speeds gamma-distributed with the real file's few -9999.0 errors."""
    import pandas as pd
    rng = np.random.default_rng(16)
    t = np.arange(1, n + 1) * 600.0  # seconds since 2009-01-01 00:00
    year, day = 365.2425 * 86400, 86400.0
    temp = 9.5 - 9.0 * np.cos(2 * np.pi * (t - 20 * day) / year) - 3.5 * np.cos(2 * np.pi * (t - 0.6 * day) / day)
    temp += _ar1(rng, n, 0.999, 0.12) + 0.1 * rng.normal(size=n)
    p = 989.0 + _ar1(rng, n, 0.9995, 0.25)
    rh = np.clip(76 + 12 * np.cos(2 * np.pi * (t - 0.6 * day) / day) + _ar1(rng, n, 0.998, 0.6), 13, 100)
    vpmax = 6.1078 * np.exp(17.27 * temp / (temp + 237.3))
    vpact = vpmax * rh / 100
    lg = np.log(vpact / 6.1078)
    tdew = 237.3 * lg / (17.27 - lg)
    sh = 622 * vpact / (p - 0.378 * vpact)
    wv = rng.gamma(2.0, 1.1, n)
    wv[rng.choice(n, 3, replace=False)] = -9999.0
    max_wv = np.where(wv < 0, -9999.0, wv * rng.uniform(1.2, 2.2, n))
    max_wv[rng.choice(n, 2, replace=False)] = -9999.0
    dates = pd.date_range("2009-01-01 00:10:00", periods=n, freq="10min").strftime("%d.%m.%Y %H:%M:%S")
    cols = [p, temp, (temp + 273.15) * (1000 / p) ** 0.286, tdew, rh, vpmax, vpact, vpmax - vpact, sh,
            vpact / p * 1000, p * 100 / (287.05 * (temp + 273.15)) * 1000, wv, max_wv,
            rng.uniform(0, 360, n)]
    df = pd.DataFrame({"Date Time": dates, **{c: np.round(v, 2) for c, v in zip(_JENA_COLS, cols)}})
    df.to_csv(path, index=False)


# the notebook reads os.path.splitext(get_file(..., extract=True))[0], which under Keras 3 is the folder (Keras 2
# returned the CSV's path): the stand-in reads the CSV inside it, so the rest of the tutorial runs
URLS["jena_climate_2009_2016_extracted"] = ("jena_climate_2009_2016.csv", _jena_csv)


def jena_csv_dir(base: str) -> str:
    """Where Keras 3's get_file(..., extract=True) leaves the zip's contents: a folder holding the CSV."""
    out = os.path.join(base, "jena_climate_2009_2016_extracted")
    os.makedirs(out, exist_ok=True)
    src = _write_once("jena_climate_2009_2016.csv", _jena_csv)
    dst = os.path.join(out, "jena_climate_2009_2016.csv")
    if not os.path.exists(dst):
        try:
            os.symlink(src, dst)
        except FileExistsError:  # a concurrent run made it
            pass
    return out


# --- img11: imbalanced_data (credit-card fraud CSV, sklearn's StandardScaler and curves) -------------------------

def _creditcard_csv(path: str, n: int = 284807, n_pos: int = 492) -> None:
    """creditcard.csv's columns and counts: Time (seconds over two days), V1..V28 (PCA-like, unit scale), Amount
    (log-normal), Class with 492 frauds whose V's are shifted (separable, not trivially)."""
    import pandas as pd
    rng = np.random.default_rng(17)
    y = np.zeros(n, np.int64)
    y[rng.choice(n, n_pos, replace=False)] = 1
    scales = np.geomspace(1.9, 0.3, 28)
    v = rng.normal(size=(n, 28)) * scales
    shift = rng.normal(0, 1.5, 28) * scales
    v[y == 1] = v[y == 1] * 1.8 + shift * 2.5
    df = pd.DataFrame({"Time": np.sort(rng.uniform(0, 172792, n)).round(0)})
    for i in range(28):
        df[f"V{i + 1}"] = v[:, i]
    df["Amount"] = np.round(np.exp(rng.normal(3.0, 1.5, n)) * (rng.random(n) > 0.006), 2)
    df["Class"] = y
    df.to_csv(path, index=False)


URLS["creditcard.csv"] = ("creditcard.csv", _creditcard_csv)


class _StandardScaler:
    """sklearn.preprocessing.StandardScaler: per-column mean and population std (a zero std scales by 1)."""

    def fit(self, x, y=None):
        x = np.asarray(x, np.float64)
        self.mean_, self.scale_ = x.mean(0), x.std(0)
        self.scale_[self.scale_ == 0] = 1.0
        return self

    def transform(self, x):
        return (np.asarray(x, np.float64) - self.mean_) / self.scale_

    def fit_transform(self, x, y=None):
        return self.fit(x).transform(x)


def _binary_clf_curve(y_true, y_score):
    """sklearn's _binary_clf_curve: false/true positive counts at each distinct score, highest first."""
    y, s = np.asarray(y_true).ravel() == 1, np.asarray(y_score, np.float64).ravel()
    order = np.argsort(s, kind="mergesort")[::-1]
    y, s = y[order], s[order]
    last = np.r_[np.where(np.diff(s))[0], y.size - 1]
    tps = np.cumsum(y)[last]
    return 1 + last - tps, tps, s[last]


def _roc_curve(y_true, y_score, **kwargs):
    fps, tps, thr = _binary_clf_curve(y_true, y_score)
    fps, tps, thr = np.r_[0, fps], np.r_[0, tps], np.r_[np.inf, thr]
    return fps / max(fps[-1], 1), tps / max(tps[-1], 1), thr


def _precision_recall_curve(y_true, y_score, **kwargs):
    fps, tps, thr = _binary_clf_curve(y_true, y_score)
    precision = tps / np.maximum(tps + fps, 1)
    recall = tps / max(tps[-1], 1)
    return np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0], thr[::-1]


def install_imbalanced() -> None:
    """sklearn.preprocessing and the two curves (added to install()'s sklearn stand-in)."""
    skp = _module("sklearn.preprocessing", StandardScaler=_StandardScaler)
    sys.modules["sklearn"].preprocessing = skp
    skm = sys.modules["sklearn.metrics"]
    skm.roc_curve, skm.precision_recall_curve = _roc_curve, _precision_recall_curve


# --- nb12 (2026-12-03): the data/tfrecord guides' titanic CSV, Iliad texts, FSNS TFRecord file, photos -----------


def _titanic(path: str) -> None:
    # the titanic train.csv's columns and kinds (627 rows; the real file's first row is a 22-year-old man)
    rng = np.random.default_rng(6)
    decks = ["unknown"] * 6 + list("ABCDEFG")
    with open(path, "w") as f:
        f.write("survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone\n")
        for i in range(627):
            cls = str(rng.choice(["First", "Second", "Third"], p=[0.24, 0.21, 0.55]))
            sex = "male" if rng.random() < 0.65 else "female"
            surv = int(rng.random() < (0.74 if sex == "female" else 0.19) + (0.15 if cls == "First" else 0.0))
            sib, parch = int(rng.poisson(0.5)), int(rng.poisson(0.4))
            age = 22.0 if i == 0 else float(round(max(0.42, rng.normal(29.6, 13.0)), 1))
            fare = round(float(rng.lognormal(2.7 + 0.9 * (cls == "First"), 0.7)), 4)
            town = str(rng.choice(["Southampton", "Cherbourg", "Queenstown", "unknown"], p=[0.72, 0.19, 0.08, 0.01]))
            alone = "y" if sib + parch == 0 else "n"
            f.write(f"{surv},{sex},{age},{sib},{parch},{fare},{cls},{rng.choice(decks)},{town},{alone}\n")


_ILIAD = ("Achilles sing O Goddess Peleus son his wrath pernicious who ten thousand woes caused to Achaia host sent "
          "many a soul illustrious into Hades premature and heroes gave so stood the will of Jove to dogs and to all "
          "ravening fowls a prey when fierce dispute had separated once the noble chief Atrides from the son of Jove "
          "Achilles which of the gods put strife between them").split()


def _iliad(seed: int):
    def make(path: str) -> None:
        rng = np.random.default_rng(seed)
        with open(path, "w") as f:
            for _ in range(400):
                words = rng.choice(_ILIAD, size=int(rng.integers(4, 10)))
                f.write(" ".join(words).capitalize() + rng.choice([",", ";", ".", ""]) + "\n")
    return make


def _crc32c(data: bytes) -> int:
    table = _CACHE.get("crc32c")
    if table is None:
        table = []
        for n in range(256):
            c = n
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
        _CACHE["crc32c"] = table
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data: bytes) -> bytes:
    crc = _crc32c(data)
    return ((((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF).to_bytes(4, "little")


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(num: int, payload: bytes) -> bytes:  # a length-delimited protobuf field
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _example(features: dict) -> bytes:
    """A serialized tf.train.Example, written by hand (the stand-in must not depend on either backend)."""
    entries = b""
    for key, value in features.items():
        if isinstance(value[0], bytes):
            feat = _field(1, b"".join(_field(1, v) for v in value))
        else:
            feat = _field(3, _field(1, b"".join(_varint(v) for v in value)))
        entries += _field(1, _field(1, key.encode()) + _field(2, feat))
    return _field(1, entries)


def _tfrecord(records: list) -> bytes:
    out = b""
    for r in records:
        n = len(r).to_bytes(8, "little")
        out += n + _masked_crc(n) + r + _masked_crc(r)
    return out


def _fsns(path: str) -> None:
    # FSNS street-name records: a 600x150 PNG of four views and its text (the real test file has 200 records)
    import io

    from PIL import Image
    rng = np.random.default_rng(9)
    names = ["Rue Perreyon", "Avenue Anatole France", "Rue de la Gare", "Impasse du Moulin", "Rue Victor Hugo"]
    records = []
    for i in range(20):
        img = np.clip(rng.normal(150, 40, size=(150, 600, 3)), 0, 255).astype(np.uint8)
        img[60:90, 40:560] = (30, 30 * (i % 5), 200)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="PNG")
        text = names[i % len(names)]
        records.append(_example({"image/encoded": [buf.getvalue()], "image/format": [b"PNG"],
                                 "image/text": [text.encode()], "image/class": [len(w) for w in text.split()],
                                 "image/width": [600], "image/orig_width": [150]}))
    with open(path, "wb") as f:
        f.write(_tfrecord(records))


def _photo(seed: int, size: tuple):
    def make(path: str) -> None:  # a photo-like JPEG of the real one's size (height, width)
        from PIL import Image
        img = Image.fromarray(_flower(np.random.default_rng(seed), "daisy")).resize((size[1], size[0]))
        img.save(path, format="JPEG", quality=90)
    return make


def _imagenet_labels(path: str) -> None:
    with open(path, "w") as f:
        f.write("\n".join(["background"] + [f"class_{i}" for i in range(1000)]) + "\n")


URLS["titanic/train.csv"] = ("titanic_train.csv", _titanic)
for _i, _book in enumerate(("cowper", "derby", "butler")):
    URLS[f"illiad/{_book}.txt"] = (f"{_book}.txt", _iliad(20 + _i))
URLS["fsns-00000-of-00001"] = ("fsns-00000-of-00001", _fsns)
URLS["320px-Felis_catus-cat_on_snow.jpg"] = ("320px-Felis_catus-cat_on_snow.jpg", _photo(31, (213, 320)))
URLS["194px-New_East_River_Bridge_from_Brooklyn_det.4a09796u.jpg"] = (
    "194px-New_East_River_Bridge_from_Brooklyn_det.4a09796u.jpg", _photo(32, (240, 194)))
URLS["grace_hopper.jpg"] = ("grace_hopper.jpg", _photo(33, (606, 517)))
URLS["ImageNetLabels.txt"] = ("ImageNetLabels.txt", _imagenet_labels)


# --- sig11: audio/simple_audio's mini_speech_commands.zip and IPython.display.Audio ------------------------------

_SPEECH_CLASSES = ("down", "go", "left", "no", "right", "stop", "up", "yes")


def _speech_commands(root: str, per_class: int = 40) -> None:
    """mini_speech_commands' layout: a folder per command of 16 kHz mono 16-bit WAVs named like the real ones
    (``no/01bb6a2a_nohash_0.wav`` among them) and a README.md; each class a tone of its own pitch with a second
    harmonic under noise, clips of 0.6 to 1 s (the real set has short ones too)."""
    import wave
    rng = np.random.default_rng(11)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("Synthetic stand-in for mini_speech_commands (tools/notebooks/standins.py)\n")
    for k, cls in enumerate(_SPEECH_CLASSES):
        os.makedirs(os.path.join(root, cls))
        names = [f"{h:08x}_nohash_{i % 3}.wav" for i, h in enumerate(rng.integers(0, 2 ** 32, per_class))]
        if cls == "no":
            names[0] = "01bb6a2a_nohash_0.wav"
        for name in names:
            n = int(rng.integers(9600, 16001))
            t = np.arange(n) / 16000.0
            f0 = 220.0 * 2 ** (k / 4) * rng.uniform(0.97, 1.03)
            x = np.sin(2 * np.pi * f0 * t) + 0.4 * np.sin(4 * np.pi * f0 * t + rng.uniform(0, 6))
            x = 0.3 * x * np.hanning(n) + rng.normal(0, 0.05, n)
            with wave.open(os.path.join(root, cls, name), "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(16000)
                w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


def _speech_archive(fname: Any, origin: Any, cache_dir: Any, cache_subdir: str) -> str | None:
    """mini_speech_commands.zip: extracted where Keras 3 puts it (``data/mini_speech_commands_extracted``), and
    linked where the tutorial (written for Keras 2's get_file) reads it, ``data/mini_speech_commands``."""
    if not str(origin or fname).endswith("mini_speech_commands.zip"):
        return None
    base = os.path.join(os.path.expanduser(cache_dir or "~/.keras"), cache_subdir)
    out = _build_dir(os.path.join(base, "mini_speech_commands_extracted"), "mini_speech_commands", _speech_commands)
    link = os.path.join(base, "mini_speech_commands")
    if not os.path.exists(link):
        os.symlink(os.path.join(os.path.abspath(out), "mini_speech_commands"), link)
    return out


def install_audio() -> None:
    """``IPython.display.Audio`` (the audio tutorial displays clips)."""
    sys.modules["IPython.display"].Audio = _Anything()
# --- nb11: images/transfer_learning (cats_and_dogs_filtered, MobileNetV2's ImageNet weight file) ----------------

def _pet(rng: np.random.Generator, label: str) -> np.ndarray:
    """A ``uint8 [h, w, 3]`` photo-like picture (180-300 px a side): a noisy room-coloured background and an
    animal-sized blob, a cat's orange with stripes, a dog's brown with spots."""
    h, w = int(rng.integers(180, 301)), int(rng.integers(180, 301))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.array(rng.uniform(90, 200, 3), np.float32) + rng.normal(0, 18, (h, w, 3)).astype(np.float32)
    cy, cx = rng.uniform(0.35, 0.65) * h, rng.uniform(0.35, 0.65) * w
    ry, rx = rng.uniform(0.2, 0.35) * h, rng.uniform(0.2, 0.35) * w
    inside = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
    if label == "cats":
        fur = np.array([215, 130, 50], np.float32) * (0.75 + 0.25 * np.sin(yy / rng.uniform(4, 9)))[..., None]
    else:
        spots = np.sin(xx / rng.uniform(6, 12)) * np.sin(yy / rng.uniform(6, 12)) > 0.5
        fur = np.where(spots[..., None], (60, 40, 25), (150, 110, 70)).astype(np.float32)
    img[inside] = 0.85 * fur[inside] + 0.15 * img[inside]
    return np.clip(img, 0, 255).astype(np.uint8)


def _cats_and_dogs(root: str, train: int = 32, validation: int = 80) -> None:
    """``root/{train,validation}/{cats,dogs}/<kind>.<n>.jpg`` (the real archive: 1000 and 500 per class): 2 training
    batches of 32, 5 validation batches (the tutorial takes a fifth of them as its test set)."""
    rng = np.random.default_rng(21)
    for split, n in (("train", train), ("validation", validation)):
        for label in ("cats", "dogs"):
            os.makedirs(os.path.join(root, split, label), exist_ok=True)
            for i in range(n):
                _save_jpeg(os.path.join(root, split, label, f"{label[:-1]}.{i}.jpg"), _pet(rng, label))


# MobileNetV2's ImageNet file, laid out as Keras's downloads (Keras 2 weight file): written by the real Keras (the TF
# venv's) from a seeded model, its batch-norm statistics moved off the identity so the features vary as a trained
# net's. Used under both backends.
_KERAS_WEIGHTS_SCRIPT = r"""
import sys
import h5py, keras, numpy as np
from keras.src.legacy.saving import legacy_h5_format
path, alpha, rows, top = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "top"
keras.utils.set_random_seed(22)
model = keras.applications.MobileNetV2(input_shape=(rows, rows, 3), alpha=alpha, include_top=top, weights=None)
rng = np.random.default_rng(22)
for layer in model.layers:
    if isinstance(layer, keras.layers.BatchNormalization):
        g, b, m, v = layer.get_weights()
        layer.set_weights([rng.uniform(0.5, 1.5, g.shape), rng.normal(0, 0.2, b.shape), rng.normal(0, 0.2, m.shape),
                           rng.uniform(0.5, 2.0, v.shape)])
with h5py.File(path, "w") as f:
    legacy_h5_format.save_weights_to_hdf5_group(f, model)
"""


def _mobilenet_v2_weights(name: str):
    def make(path: str) -> None:
        import re
        import subprocess
        alpha, rows, top = re.match(r"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_([\d.]+)_(\d+)(_no_top)?\.h5",
                                    name).groups()
        python = os.environ.get("NB_KERAS_PYTHON", "/opt/tfvenv/bin/python")
        subprocess.run([python, "-c", _KERAS_WEIGHTS_SCRIPT, path + ".tmp", alpha, rows, "no_top" if top else "top"],
                       check=True, capture_output=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        os.replace(path + ".tmp", path)
    return make


for _rows in (96, 128, 160, 192, 224):
    for _top in ("", "_no_top"):
        _w = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_1.0_{_rows}{_top}.h5"
        URLS[_w] = (_w, _mobilenet_v2_weights(_w))


def _nb11_get_file(fname=None, origin=None, *args, untar=False, cache_dir=None, cache_subdir="datasets", **kwargs):
    if str(origin or fname).endswith("cats_and_dogs_filtered.zip"):
        # the tutorial reads os.path.dirname(get_file(...)) + 'cats_and_dogs_filtered' (Keras 2's extraction place;
        # Keras 3 extracts into cats_and_dogs_extracted/): the stand-in folder is where the tutorial looks
        base = os.path.join(os.path.expanduser(cache_dir or "~/.keras"), cache_subdir)
        _build_dir(os.path.join(base, "cats_and_dogs_filtered"), "", _cats_and_dogs)
        return os.path.join(base, "cats_and_dogs_extracted")
    return get_file(fname, origin, *args, untar=untar, cache_dir=cache_dir, cache_subdir=cache_subdir, **kwargs)


def install_nb11(backend_tf) -> None:
    """get_file also where keras.applications calls it (Keras's file_utils module, tapeflow's)."""
    keras_mods = [backend_tf.keras] + ([sys.modules["keras"]] if "keras" in sys.modules else [])
    for km in keras_mods:
        km.utils.get_file = _nb11_get_file
    for name in ("keras.src.utils.file_utils", "tapeflow.keras.file_utils"):
        if name in sys.modules:
            sys.modules[name].get_file = _nb11_get_file


# --- lead (2026-12-03): tutorials/load_data/csv's abalone, traffic-volume and fonts files ---------------------------


def _abalone(path: str) -> None:
    # abalone_train.csv: no header, 7 float measurements and the integer age, 3320 rows
    rng = np.random.default_rng(41)
    with open(path, "w") as f:
        for _ in range(3320):
            length = float(np.clip(rng.normal(0.52, 0.12), 0.08, 0.8))
            dims = [length, length * 0.79, length * 0.27] + [length ** 3 * k * rng.uniform(0.8, 1.2)
                                                             for k in (5.6, 2.4, 1.2, 1.6)]
            age = int(np.clip(round(4 + 14 * length + rng.normal(0, 2.5)), 1, 29))
            f.write(",".join(f"{v:.4f}" for v in dims) + f",{age}\n")


def _traffic(path: str) -> None:
    # Metro_Interstate_Traffic_Volume.csv.gz: its 9 columns, hourly from 2012-10-02 09:00 (48204 rows)
    import datetime

    rng = np.random.default_rng(42)
    t0 = datetime.datetime(2012, 10, 2, 9)
    weather = [("Clouds", "scattered clouds"), ("Clear", "sky is clear"), ("Rain", "light rain"),
               ("Mist", "mist"), ("Snow", "light snow")]
    with gzip.open(path, "wt") as f:
        f.write("holiday,temp,rain_1h,snow_1h,clouds_all,weather_main,weather_description,date_time,traffic_volume\n")
        for i in range(48204):
            t = t0 + datetime.timedelta(hours=i)
            main, desc = weather[int(rng.integers(len(weather)))]
            temp = 281.0 + 12 * np.sin(2 * np.pi * i / 8766) + rng.normal(0, 3)
            vol = int(max(0, 3300 + 2500 * np.sin(2 * np.pi * (t.hour - 9) / 24) + rng.normal(0, 400)))
            rain = round(float(rng.exponential(0.5)), 2) if main == "Rain" else 0.0
            f.write(f"None,{temp:.2f},{rain},0.0,{int(rng.integers(0, 100))},{main},{desc},"
                    f"{t:%Y-%m-%d %H:%M:%S},{vol}\n")


_FONTS = ("AGENCY", "ARIAL", "BAITI", "BANKGOTHIC", "BASKERVILLE", "BAUHAUS", "BELL", "BERLIN", "BERNARD",
          "BITSTREAMVERA", "BLACKADDER", "BODONI")


def _fonts(root: str) -> None:
    """``root/<FONT>.csv`` in the fonts dataset's layout: 12 header fields, then the 20x20 pixels r0c0..r19c19."""
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(43)
    head = ["font", "fontVariant", "m_label", "strength", "italic", "orientation", "m_top", "m_left",
            "originalH", "originalW", "h", "w"] + [f"r{r}c{c}" for r in range(20) for c in range(20)]
    for font in _FONTS:
        with open(os.path.join(root, f"{font}.csv"), "w") as f:
            f.write(",".join(head) + "\n")
            for _ in range(int(rng.integers(40, 120))):
                px = rng.integers(1, 256, 400) * (rng.random(400) < 0.4)
                vals = [font, "scanned", int(rng.integers(33, 1000)), 0.4, int(rng.integers(0, 2)), 0.0,
                        int(rng.integers(20, 60)), int(rng.integers(0, 40)), int(rng.integers(10, 90)),
                        int(rng.integers(10, 90)), 20, 20] + [int(v) for v in px]
                f.write(",".join(str(v) for v in vals) + "\n")


def _csv_archive(fname: Any, origin: Any, cache_dir: Any, cache_subdir: str) -> str | None:
    """fonts.zip as Keras 3 leaves it: the zip in ``cache_subdir`` and its CSVs in ``fonts_extracted/`` beside it
    (the tutorial globs ``fonts/*.csv``, written for Keras 2's extraction place)."""
    if not str(origin or fname).endswith("fonts.zip"):
        return None
    import zipfile

    base = os.path.join(os.path.expanduser(cache_dir or "~/.keras"), cache_subdir)
    out = _build_dir(os.path.join(base, "fonts_extracted"), "", _fonts)
    zpath = os.path.join(base, "fonts.zip")
    if not os.path.exists(zpath):
        with zipfile.ZipFile(zpath, "w") as z:
            for font in _FONTS:
                z.write(os.path.join(out, f"{font}.csv"), f"{font}.csv")
    return os.path.join(base, "fonts_extracted")


URLS["data/abalone_train.csv"] = ("abalone_train.csv", _abalone)
URLS["Metro_Interstate_Traffic_Volume.csv.gz"] = ("Metro_Interstate_Traffic_Volume.csv.gz", _traffic)


# --- lead (2026-12-03): tutorials/generative/adversarial_fgsm's photo and ImageNet class index ---------------------


def _imagenet_class_index(path: str) -> None:
    import json

    with open(path, "w") as f:  # the real file's layout: {"0": ["n01440764", "tench"], ...}
        json.dump({str(i): [f"n{i:08d}", "Labrador_retriever" if i == 208 else f"class_{i}"] for i in range(1000)}, f)


URLS["imagenet_class_index.json"] = ("imagenet_class_index.json", _imagenet_class_index)
URLS["YellowLabradorLooking_new.jpg"] = ("YellowLabradorLooking_new.jpg", _photo(33, (577, 700)))


# --- lead (2026-12-03): tutorials/images/segmentation's pets and tensorflow_examples' pix2pix.upsample ------------


def _pet_and_trimap(rng: np.random.Generator) -> tuple:
    """A photo-like pet image ``uint8 [h, w, 3]`` and its trimap ``uint8 [h, w, 1]`` (1 pet, 2 background, 3 border)."""
    h, w = (int(v) for v in rng.integers(96, 200, 2))
    yy, xx = np.mgrid[0:h, 0:w]
    cy, cx = h * rng.uniform(0.35, 0.65), w * rng.uniform(0.35, 0.65)
    ry, rx = h * rng.uniform(0.2, 0.4), w * rng.uniform(0.2, 0.4)
    r = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2
    mask = np.where(r < 0.8, 1, np.where(r < 1.2, 3, 2)).astype(np.uint8)
    back = rng.uniform(40, 200, 3)
    fur = rng.uniform(60, 255, 3)
    img = np.where((r < 1.0)[..., None], fur, back) + rng.normal(0, 12, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8), mask[..., None]


def _tfds_load_pets(split=None, with_info=False):
    """``tfds.load('oxford_iiit_pet:3.*.*')`` (the real one has 3680 train and 3669 test images): dict elements with
    tfds's feature names, images of varied sizes; 128 train and 320 test pets."""
    import tensorflow as tf

    if "pets" not in _CACHE:
        rng = np.random.default_rng(51)
        _CACHE["pets"] = {k: [_pet_and_trimap(rng) + (int(rng.integers(37)),) for _ in range(n)]
                          for k, n in (("train", 128), ("test", 320))}
    sig = {"file_name": tf.TensorSpec([], tf.string), "image": tf.TensorSpec([None, None, 3], tf.uint8),
           "label": tf.TensorSpec([], tf.int64), "segmentation_mask": tf.TensorSpec([None, None, 1], tf.uint8),
           "species": tf.TensorSpec([], tf.int64)}

    def make(part):
        def gen():
            for i, (img, mask, label) in enumerate(_CACHE["pets"][part]):
                yield {"file_name": f"pet_{i}.jpg", "image": img, "label": label, "segmentation_mask": mask,
                       "species": label % 2}
        return tf.data.Dataset.from_generator(gen, output_signature=sig)

    out = {k: make(k) for k in ("train", "test")} if split is None else make(split)
    info = _Info("oxford_iiit_pet", {"train": 128, "test": 320})
    return (out, info) if with_info else out


def _upsample(filters, size, norm_type="batchnorm", apply_dropout=False):
    """tensorflow_examples' pix2pix.upsample: a stride-2 transposed convolution (N(0, 0.02) kernel, no bias),
    batch normalisation, optional dropout, ReLU."""
    import tensorflow as tf

    if norm_type != "batchnorm":
        raise NotImplementedError("the stand-in pix2pix.upsample has norm_type='batchnorm' only")
    block = tf.keras.Sequential()
    block.add(tf.keras.layers.Conv2DTranspose(filters, size, strides=2, padding="same", use_bias=False,
                                              kernel_initializer=tf.random_normal_initializer(0.0, 0.02)))
    block.add(tf.keras.layers.BatchNormalization())
    if apply_dropout:
        block.add(tf.keras.layers.Dropout(0.5))
    block.add(tf.keras.layers.ReLU())
    return block


def install_segmentation(backend_tf) -> None:
    inner = _module("tensorflow_examples.models.pix2pix.pix2pix", upsample=_upsample)
    outer = _module("tensorflow_examples.models.pix2pix", pix2pix=inner)
    models = _module("tensorflow_examples.models", pix2pix=outer)
    _module("tensorflow_examples", models=models)


# --- lead (2026-12-03): tutorials/generative/style_transfer's style photo and VGG19 weight file (no top) -----------

_KERAS_VGG19_SCRIPT = r"""
import sys
import h5py, keras
from keras.src.legacy.saving import legacy_h5_format
keras.utils.set_random_seed(23)
model = keras.applications.VGG19(include_top=False, weights=None)
with h5py.File(sys.argv[1], "w") as f:
    legacy_h5_format.save_weights_to_hdf5_group(f, model)
"""


def _vgg19_notop(path: str) -> None:
    # a seeded VGG19 written by the real Keras (the real file is ImageNet's; the top one, 548 MB, has no stand-in)
    import subprocess

    python = os.environ.get("NB_KERAS_PYTHON", "/opt/tfvenv/bin/python")
    subprocess.run([python, "-c", _KERAS_VGG19_SCRIPT, path + ".tmp"], check=True, capture_output=True,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    os.replace(path + ".tmp", path)


URLS["vgg19_weights_tf_dim_ordering_tf_kernels_notop.h5"] = ("vgg19_weights_tf_dim_ordering_tf_kernels_notop.h5",
                                                             _vgg19_notop)
URLS["Vassily_Kandinsky%2C_1913_-_Composition_7.jpg"] = ("kandinsky5.jpg", _photo(34, (464, 512)))


# --- nb11 (2026-12-04): tutorials/generative/deepdream's InceptionV3 weight file (no top) ------------------------

_KERAS_INCEPTION_SCRIPT = r"""
import sys
import h5py, keras, numpy as np
from keras.src.legacy.saving import legacy_h5_format
keras.utils.set_random_seed(24)
model = keras.applications.InceptionV3(include_top=False, weights=None)
rng = np.random.default_rng(24)
for layer in model.layers:
    if isinstance(layer, keras.layers.BatchNormalization):
        b, m, v = layer.get_weights()
        layer.set_weights([rng.normal(0, 0.2, b.shape), rng.normal(0, 0.2, m.shape), rng.uniform(0.5, 2.0, v.shape)])
with h5py.File(sys.argv[1], "w") as f:
    legacy_h5_format.save_weights_to_hdf5_group(f, model)
"""


def _inception_v3_notop(path: str) -> None:
    # a seeded InceptionV3 written by the real Keras, its batch-norm statistics moved off the identity
    import subprocess

    python = os.environ.get("NB_KERAS_PYTHON", "/opt/tfvenv/bin/python")
    subprocess.run([python, "-c", _KERAS_INCEPTION_SCRIPT, path + ".tmp"], check=True, capture_output=True,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    os.replace(path + ".tmp", path)


URLS["inception_v3_weights_tf_dim_ordering_tf_kernels_notop.h5"] = (
    "inception_v3_weights_tf_dim_ordering_tf_kernels_notop.h5", _inception_v3_notop)


# --- text11: the tensorflow/text tutorials (shakespeare.txt, tfds imdb_reviews, tqdm) ---------------------------

_SHAKESPEARE_HEAD = """First Citizen:
Before we proceed any further, hear me speak.

All:
Speak, speak.

First Citizen:
You are all resolved rather to die than to famish?

All:
Resolved. resolved.

First Citizen:
First, you know Caius Marcius is chief enemy to the people.

All:
We know't, we know't.

First Citizen:
Let us kill him, and we'll have corn at our own price.
Is't a verdict?

"""
_SPEAKERS = ("First Citizen", "Second Citizen", "MENENIUS", "MARCIUS", "ROMEO", "JULIET", "KING RICHARD III",
             "QUEEN ELIZABETH", "GLOUCESTER", "DUKE VINCENTIO", "LUCIO", "BUCKINGHAM", "Nurse", "All")
_VERSE = ("the and to of I you my a that in is not with me it be your his this but he have as thou so him will what "
          "thy all her do no by shall if are we or our lord good now sir o king come more let they then am love "
          "here well there how one must was would know yet than upon us like hath make may such death where she "
          "say night day grace heaven blood honour crown speak heart hand time noble life fair sweet brother father "
          "mother son friend gentle tongue eyes soul war peace rome romeo citizen people corn price verdict").split()


def _shakespeare(path: str, n_chars: int = 66_000) -> None:
    """Verse-shaped text with the real file's opening and all of its 65 characters (the real one has 1 115 394)."""
    rng = np.random.default_rng(11)
    parts, size = [_SHAKESPEARE_HEAD], len(_SHAKESPEARE_HEAD)
    marks = (",", ",", ".", ";", ":", "!", "?", "'s", "-", "", "", "")
    while size < n_chars:
        block = [str(rng.choice(_SPEAKERS)) + ":"]
        for _ in range(int(rng.integers(1, 5))):
            words = [str(rng.choice(_VERSE)) for _ in range(int(rng.integers(4, 11)))]
            words[0] = words[0].capitalize()
            line = " ".join(w + str(rng.choice(marks)) if rng.random() < 0.25 else w for w in words)
            block.append(line + str(rng.choice([".", ",", "?", "!", ";", ":"])))
        parts.append("\n".join(block) + "\n\n")
        size += len(parts[-1])
    parts.append("ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz & $ 3 - the rest is silence.\n")  # all 65
    with open(path, "w") as f:
        f.write("".join(parts))


URLS["shakespeare.txt"] = ("shakespeare.txt", _shakespeare)


def _imdb_reviews(n_train: int = 1280, n_test: int = 1984):
    """tfds's imdb_reviews as (text, label) rows: short reviews with class words (the real one: 25 000 + 25 000)."""
    if "imdb" not in _CACHE:
        rng = np.random.default_rng(12)
        parts = {}
        for split, n in (("train", n_train), ("test", n_test)):
            labels = rng.integers(0, 2, n)
            texts = []
            for y in labels:
                words = _WORDS["pos" if y else "neg"]
                toks = [str(rng.choice(words if rng.random() < 0.3 else _FILLER)) for _ in range(rng.integers(5, 60))]
                texts.append((" ".join(toks).capitalize() + ". <br /><br />I " +
                              str(rng.choice(["would", "would not"])) + " recommend it.").encode())
            parts[split] = (np.array(texts, dtype=object), labels.astype(np.int64))
        _CACHE["imdb"] = parts
    return _CACHE["imdb"]


def _tfds_load_text11(load):
    def tfds_load(name, split=None, batch_size=None, as_supervised=False, with_info=False, **kwargs):
        if not name.startswith("imdb_reviews"):
            return load(name, split, batch_size, as_supervised, with_info, **kwargs)
        import tensorflow as tf  # the backend run.py installed

        parts = _imdb_reviews()

        def make(spec):
            x, y = parts[spec.split("[")[0]]
            lo, hi = _split_range(spec, len(y))
            return tf.data.Dataset.from_tensor_slices((x[lo:hi], y[lo:hi]) if as_supervised else
                                                      {"text": x[lo:hi], "label": y[lo:hi]})
        out = ({k: make(k) for k in parts} if split is None else
               [make(s) for s in split] if isinstance(split, (list, tuple)) else make(split))
        return (out, _Info("imdb_reviews", {k: len(v[1]) for k, v in parts.items()})) if with_info else out
    return tfds_load


class _Tqdm:
    """tqdm.tqdm as an iterable wrapper that draws nothing (the real one draws on stderr at timing-dependent
    moments)."""

    def __init__(self, iterable=None, *args, **kwargs):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def update(self, n=1):
        pass

    def set_postfix(self, *args, **kwargs):  # nb11: actor_critic's trange
        pass

    def close(self):
        pass


def install_text11(backend_tf) -> None:
    tfds = sys.modules["tensorflow_datasets"]
    tfds.load = _tfds_load_text11(tfds.load)
    tfds.disable_progress_bar = lambda: None
    _module("tqdm", tqdm=_Tqdm, trange=lambda *a, **k: _Tqdm(range(*a)), __version__="stand-in")


# --- text11: nmt_with_attention (spa-eng.zip, tensorflow_text.normalize_utf8, einops) ------------------------

_SPA = [("I", "Yo", "am", "estoy"), ("You", "Tú", "are", "estás"), ("He", "Él", "is", "está"),
        ("She", "Ella", "is", "está"), ("We", "Nosotros", "are", "estamos"), ("They", "Ellos", "are", "están")]
_SPA_WHERE = [("at home", "en casa"), ("here", "aquí"), ("in the garden", "en el jardín"),
              ("at school", "en la escuela"), ("in Spain", "en España"), ("with my mother", "con mi mamá"),
              ("in the kitchen", "en la cocina"), ("very tired", "muy cansado"), ("still awake", "todavía despierto")]
_SPA_HOW = [("", ""), (" today", " hoy"), (" now", " ahora"), (" again", " otra vez"), (" tonight", " esta noche")]


def _spa_eng(path: str, n: int = 2400) -> None:
    """English \\t Spanish sentence pairs (the real file has 118 964), with the accents and ¿ the tutorial
    normalizes; the last line is a long one, as the real file's."""
    rng = np.random.default_rng(13)
    lines = []
    for _ in range(n):
        en_s, es_s, en_v, es_v = _SPA[int(rng.integers(len(_SPA)))]
        en_w, es_w = _SPA_WHERE[int(rng.integers(len(_SPA_WHERE)))]
        en_h, es_h = _SPA_HOW[int(rng.integers(len(_SPA_HOW)))]
        if rng.random() < 0.3:
            lines.append(f"Are {en_s.lower() if en_s != 'I' else 'I'} {en_w}{en_h}?\t¿{es_s} {es_v} {es_w}{es_h}?")
        else:
            lines.append(f"{en_s} {en_v} {en_w}{en_h}.\t{es_s} {es_v} {es_w}{es_h}.")
    lines.append("If you want to sound like a native speaker, you must be willing to practice saying the same "
                 "sentence over and over.\tSi quieres sonar como un hablante nativo, debes estar dispuesto a "
                 "practicar diciendo la misma frase una y otra vez.")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _text11_get_file(get_file_fn):
    def text11_get_file(fname=None, origin=None, *args, untar=False, cache_dir=None, cache_subdir="datasets",
                        **kwargs):
        if str(origin or fname).endswith("spa-eng.zip"):  # where Keras 3 extracts it: spa-eng_extracted/
            base = os.path.join(os.path.expanduser(cache_dir or "~/.keras"), cache_subdir, "spa-eng_extracted")
            path = os.path.join(base, "spa-eng", "spa.txt")
            if not os.path.exists(path):
                _spa_eng(path)
            return base
        return get_file_fn(fname, origin, *args, untar=untar, cache_dir=cache_dir, cache_subdir=cache_subdir,
                           **kwargs)
    return text11_get_file


def _normalize_run(form: str, x):
    import unicodedata

    arr = np.asarray(x.numpy(), dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for i, s in np.ndenumerate(arr):
        out[i] = unicodedata.normalize(form, s.decode("utf-8")).encode("utf-8")
    return out


def _normalize_utf8(input, normalization_form="NFKC", name=None):  # noqa: A002 - tensorflow_text's name
    """tensorflow_text.normalize_utf8 (ICU's NFC/NFKC/NFD/NFKD) as Python's unicodedata, in a py_function (a
    module-level function: a SavedModel can pickle it)."""
    import functools

    import tensorflow as tf

    x = tf.convert_to_tensor(input, dtype=tf.string)
    y = tf.py_function(functools.partial(_normalize_run, normalization_form.upper()), [x], tf.string)
    y.set_shape(x.shape)
    return y


def _einops_axes(side: str) -> list:
    return side.split()


def _parse_shape(x, pattern: str) -> dict:
    names = _einops_axes(pattern)
    shape = list(x.shape)
    if len(names) != len(shape):
        raise RuntimeError(f"Can't parse shape with different number of dimensions: {pattern} {tuple(shape)}")
    return {n: d for n, d in zip(names, shape) if n != "_" and not n.isdigit()}


def _rearrange(x, pattern: str):
    """einops.rearrange for patterns that permute, drop or add axes of length 1 (no grouping)."""
    import tensorflow as tf

    left, right = (_einops_axes(s) for s in pattern.split("->"))
    for i in reversed([i for i, n in enumerate(left) if n == "1"]):
        x = tf.squeeze(x, axis=i)
    names = [n for n in left if n != "1"]
    x = tf.transpose(x, [names.index(n) for n in right if n != "1"])
    for i, n in enumerate(right):
        if n == "1":
            x = tf.expand_dims(x, i)
    return x


def install_text11_nmt(backend_tf) -> None:
    _module("tensorflow_text", normalize_utf8=_normalize_utf8, __version__="stand-in")
    _module("einops", parse_shape=_parse_shape, rearrange=_rearrange, __version__="stand-in")
    keras_mods = [backend_tf.keras] + ([sys.modules["keras"]] if "keras" in sys.modules else [])
    for km in keras_mods:
        km.utils.get_file = _text11_get_file(km.utils.get_file)


# --- nb11 (2026-12-04): tutorials/reinforcement_learning/actor_critic's gym CartPole-v1 -----------------------------


class _Discrete:
    def __init__(self, n: int) -> None:
        self.n = n


class _Box:
    def __init__(self, shape: tuple) -> None:
        self.shape = shape


class _CartPole:
    """gym 0.26's CartPole-v1 (Barto, Sutton and Anderson's cart-pole, Euler steps of 0.02 s; reward 1 a step,
    terminated when the pole passes 12 degrees or the cart 2.4, truncated at 500 steps), its own NumPy generator
    seeded 0 unless reset(seed=...); render() draws the cart and pole into a 400 x 600 picture."""

    def __init__(self, render_mode=None) -> None:
        self.action_space, self.observation_space = _Discrete(2), _Box((4,))
        self.render_mode = render_mode
        self.rng = np.random.default_rng(0)
        self.state, self.steps = np.zeros(4), 0

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.state, self.steps = self.rng.uniform(-0.05, 0.05, 4), 0
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if int(action) == 1 else -10.0
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + 0.05 * theta_dot ** 2 * sin) / 1.1
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
        x_acc = temp - 0.05 * theta_acc * cos / 1.1
        x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * x_acc
        theta, theta_dot = theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc
        self.state, self.steps = np.array([x, x_dot, theta, theta_dot]), self.steps + 1
        terminated = bool(abs(x) > 2.4 or abs(theta) > 12 * 2 * np.pi / 360)
        return self.state.astype(np.float32), 1.0, terminated, self.steps >= 500, {}

    def render(self):
        img = np.full((400, 600, 3), 255, np.uint8)
        cx = int(np.clip(300 + self.state[0] * 125, 25, 575))
        img[290:310, cx - 25:cx + 25] = 0
        for r in range(100):
            py = int(290 - r * np.cos(self.state[2]))
            px = int(np.clip(cx + r * np.sin(self.state[2]), 0, 599))
            img[max(py, 0), max(px - 4, 0):px + 5] = (202, 152, 101)
        return img


def _gym_make(name: str, render_mode=None, **kwargs):
    if name != "CartPole-v1":
        raise NotImplementedError(f"gym stand-in: only CartPole-v1, not {name!r}")
    return _CartPole(render_mode)


def install_nb11_rl() -> None:
    _module("gym", make=_gym_make, Env=_CartPole, __version__="stand-in")


# --- nb11 (2026-12-07): interpretability/integrated_gradients' TF-Hub classifier and photos ------------------------

URLS["San_Francisco_fireboat_showing_off.jpg"] = ("fireboat.jpg", _photo(34, (480, 640)))
URLS["Giant_Panda_2.jpeg"] = ("giant_panda.jpg", _photo(35, (600, 800)))


def _hub_keras_layer(backend_tf):
    """``hub.KerasLayer`` of an ImageNet classification handle: Keras's MobileNetV2 at 224 (its stand-in ImageNet
    weights, written by real Keras) on the hub convention's [0, 1] pixels, returning hub's 1001 logits (a zero
    background logit first). The same model in both backends."""
    keras = backend_tf.keras

    class KerasLayer(keras.layers.Layer):
        def __init__(self, handle, trainable=False, arguments=None, output_shape=None, **kwargs):
            super().__init__(trainable=trainable, **kwargs)
            self.handle = handle
            self.net = keras.applications.MobileNetV2(input_shape=(224, 224, 3), include_top=True,
                                                      weights="imagenet", classifier_activation=None)
            self.net.trainable = trainable

        def call(self, images):
            logits = self.net(images * 2.0 - 1.0)
            return backend_tf.concat([backend_tf.zeros_like(logits[:, :1]), logits], axis=-1)

        def compute_output_shape(self, input_shape):
            return (input_shape[0], 1001)

    return KerasLayer


def install_nb11_hub(backend_tf) -> None:
    _module("tensorflow_hub", KerasLayer=_hub_keras_layer(backend_tf), __version__="stand-in")


# --- nb11 (2026-12-07): generative/cyclegan's tensorflow_examples pix2pix models and tfds horse2zebra -------------


def _pix2pix_module(backend_tf) -> types.ModuleType:
    """``tensorflow_examples.models.pix2pix.pix2pix``: the pix2pix tutorial's U-Net generator and PatchGAN
    discriminator (Conv2D/Conv2DTranspose of N(0, 0.02) kernels, batch or instance normalisation), built with the
    backend's Keras."""
    tf = backend_tf
    keras = tf.keras

    class InstanceNormalization(keras.layers.Layer):
        """Normalises each sample's channels over height and width; a learned scale and offset per channel."""

        def __init__(self, epsilon=1e-5):
            super().__init__()
            self.epsilon = epsilon

        def build(self, input_shape):
            self.scale = self.add_weight(name="scale", shape=input_shape[-1:],
                                         initializer=tf.random_normal_initializer(1.0, 0.02), trainable=True)
            self.offset = self.add_weight(name="offset", shape=input_shape[-1:], initializer="zeros", trainable=True)

        def call(self, x):
            mean, variance = tf.nn.moments(x, axes=[1, 2], keepdims=True)
            return self.scale * (x - mean) * tf.math.rsqrt(variance + self.epsilon) + self.offset

    def _norm(norm_type):
        if norm_type.lower() == "batchnorm":
            return keras.layers.BatchNormalization()
        return InstanceNormalization()

    def downsample(filters, size, norm_type="batchnorm", apply_norm=True):
        block = keras.Sequential()
        block.add(keras.layers.Conv2D(filters, size, strides=2, padding="same", use_bias=False,
                                      kernel_initializer=tf.random_normal_initializer(0.0, 0.02)))
        if apply_norm:
            block.add(_norm(norm_type))
        block.add(keras.layers.LeakyReLU())
        return block

    def upsample(filters, size, norm_type="batchnorm", apply_dropout=False):
        block = keras.Sequential()
        block.add(keras.layers.Conv2DTranspose(filters, size, strides=2, padding="same", use_bias=False,
                                               kernel_initializer=tf.random_normal_initializer(0.0, 0.02)))
        block.add(_norm(norm_type))
        if apply_dropout:
            block.add(keras.layers.Dropout(0.5))
        block.add(keras.layers.ReLU())
        return block

    def unet_generator(output_channels, norm_type="batchnorm"):
        downs = [downsample(64, 4, norm_type, apply_norm=False)] + [
            downsample(f, 4, norm_type) for f in (128, 256, 512, 512, 512, 512, 512)]
        ups = [upsample(512, 4, norm_type, apply_dropout=True) for _ in range(3)] + [
            upsample(f, 4, norm_type) for f in (512, 256, 128, 64)]
        last = keras.layers.Conv2DTranspose(output_channels, 4, strides=2, padding="same", activation="tanh",
                                            kernel_initializer=tf.random_normal_initializer(0.0, 0.02))
        inputs = keras.layers.Input(shape=[None, None, 3])
        x, skips = inputs, []
        for down in downs:
            x = down(x)
            skips.append(x)
        for up, skip in zip(ups, reversed(skips[:-1])):
            x = keras.layers.Concatenate()([up(x), skip])
        return keras.Model(inputs=inputs, outputs=last(x))

    def discriminator(norm_type="batchnorm", target=True):
        init = tf.random_normal_initializer(0.0, 0.02)
        inp = keras.layers.Input(shape=[None, None, 3], name="input_image")
        x = inp
        if target:
            tar = keras.layers.Input(shape=[None, None, 3], name="target_image")
            x = keras.layers.concatenate([inp, tar])
        x = downsample(64, 4, norm_type, False)(x)
        x = downsample(128, 4, norm_type)(x)
        x = downsample(256, 4, norm_type)(x)
        x = keras.layers.ZeroPadding2D()(x)
        x = keras.layers.Conv2D(512, 4, strides=1, kernel_initializer=init, use_bias=False)(x)
        x = keras.layers.LeakyReLU()(_norm(norm_type)(x))
        x = keras.layers.ZeroPadding2D()(x)
        last = keras.layers.Conv2D(1, 4, strides=1, kernel_initializer=init)(x)
        return keras.Model(inputs=[inp, tar] if target else inp, outputs=last)

    return _module("tensorflow_examples.models.pix2pix.pix2pix", InstanceNormalization=InstanceNormalization,
                   downsample=downsample, upsample=upsample, unet_generator=unet_generator,
                   discriminator=discriminator)


def _tfds_load_horse2zebra(split=None, as_supervised=False, with_info=False, per_split=(2, 2, 1, 1)):
    """``tfds.load('cycle_gan/horse2zebra')``: ``trainA``/``trainB``/``testA``/``testB`` of 256x256 uint8 photos
    (horses brown, zebras striped; the real splits have 1067/1334/120/140) with label 0 (A) or 1 (B)."""
    import tensorflow as tf
    rng = np.random.default_rng(27)
    parts = {}
    for (name, n) in zip(("trainA", "trainB", "testA", "testB"), per_split):
        yy, xx = np.mgrid[0:256, 0:256]
        imgs = []
        for _ in range(n):
            base = rng.integers(60, 200, 3)
            if name.endswith("B"):
                stripes = ((xx + yy * rng.uniform(0.2, 0.8)) // rng.integers(8, 16) % 2)[..., None]
                img = np.where(stripes, 235, 25) + rng.normal(0, 12, (256, 256, 3))
            else:
                shade = 0.7 + 0.3 * np.sin(xx / 40.0 + rng.uniform(0, 6))
                img = base * shade[..., None] + rng.normal(0, 12, (256, 256, 3))
            imgs.append(np.clip(img, 0, 255).astype(np.uint8))
        parts[name] = (np.stack(imgs), np.full((n,), 0 if name.endswith("A") else 1, np.int64))
    info = _Info("cycle_gan", {k: len(v[1]) for k, v in parts.items()})

    def make(spec):
        x, y = parts[spec]
        return tf.data.Dataset.from_tensor_slices((x, y) if as_supervised else {"image": x, "label": y})

    out = ({k: make(k) for k in parts} if split is None else
           [make(s) for s in split] if isinstance(split, (list, tuple)) else make(split))
    return (out, info) if with_info else out


def install_nb11_cyclegan(backend_tf) -> None:
    p2p = _pix2pix_module(backend_tf)
    pkg = _module("tensorflow_examples.models.pix2pix", pix2pix=p2p, __path__=[])
    models = _module("tensorflow_examples.models", pix2pix=pkg, __path__=[])
    _module("tensorflow_examples", models=models, __path__=[])
