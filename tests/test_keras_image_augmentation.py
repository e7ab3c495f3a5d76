# ruff: noqa: E501 - pinned Keras outputs, one array per line
"""Keras 3.15's random image augmentation layers (RandomRotation, RandomZoom, RandomTranslation, RandomCrop,
RandomBrightness, RandomHeight, RandomWidth) against outputs pinned from real Keras 3.15 / TF 2.21 (TF backend)
on the same images and seeds; and the ImageProjectiveTransformV3 / resize ops under them."""

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
X = np.arange(2 * 4 * 5 * 1, dtype=np.float32).reshape(2, 4, 5, 1) * 7 % 23

CASES = [
    ('rot', lambda: L.RandomRotation(0.2, seed=3), lambda: X, [
        np.array([[[[3.187348], [12.480058], [11.739839], [11.7873], [16.840588]], [[8.748008], [9.383168], [9.098035], [11.713721], [19.435242]], [[19.315418], [11.066889], [15.753388], [12.238847], [11.780764]], [[10.492777], [6.212701], [15.4900875], [10.439535], [14.812653]]], [[[8.960857], [1.7631989], [12.280211], [9.625006], [15.337093]], [[12.827908], [11.804217], [8.601549], [4.2749195], [15.423807]], [[6.576192], [17.725079], [13.398451], [10.195784], [9.172092]], [[6.6629076], [12.374992], [9.71979], [20.2368], [13.039143]]]], 'float32'),
        np.array([[[[3.7157922], [7.490573], [12.363165], [19.383808], [8.867279]], [[8.712882], [16.888945], [4.22947], [10.965065], [13.508197]], [[5.1210723], [10.011257], [15.448561], [19.392807], [9.287119]], [[14.691935], [16.305847], [5.7189856], [13.472881], [14.284206]]], [[[8.214084], [14.466994], [5.933377], [11.288078], [18.34968]], [[6.919489], [13.962748], [6.9378047], [7.2945538], [8.523676]], [[13.476324], [14.705447], [15.062195], [8.037251], [15.080511]], [[3.6503193], [10.711922], [16.066624], [7.5330057], [13.785915]]]], 'float32')]),
    ('rot_const_nearest', lambda: L.RandomRotation((-0.5, 0.1), fill_mode='constant', interpolation='nearest', fill_value=7.0, seed=4), lambda: X, [
        np.array([[[[1.0], [12.0], [19.0], [7.0], [7.0]], [[13.0], [8.0], [3.0], [14.0], [21.0]], [[20.0], [4.0], [15.0], [10.0], [5.0]], [[7.0], [11.0], [22.0], [6.0], [17.0]]], [[[2.0], [9.0], [16.0], [0.0], [19.0]], [[2.0], [21.0], [5.0], [12.0], [8.0]], [[14.0], [10.0], [17.0], [1.0], [20.0]], [[3.0], [22.0], [6.0], [13.0], [20.0]]]], 'float32'),
        np.array([[[[7.0], [20.0], [8.0], [12.0], [0.0]], [[7.0], [4.0], [15.0], [19.0], [7.0]], [[11.0], [22.0], [3.0], [14.0], [7.0]], [[18.0], [6.0], [10.0], [21.0], [7.0]]], [[[7.0], [6.0], [22.0], [3.0], [14.0]], [[13.0], [6.0], [17.0], [21.0], [14.0]], [[8.0], [1.0], [5.0], [16.0], [9.0]], [[8.0], [19.0], [0.0], [16.0], [7.0]]]], 'float32')]),
    ('rot_unbatched_wrap', lambda: L.RandomRotation(0.3, fill_mode='wrap', seed=5), lambda: X[0], [
        np.array([[[4.666858], [12.517319], [8.699731], [10.463515], [15.401957]], [[11.64392], [11.326658], [11.264374], [11.208185], [14.562244]], [[18.620981], [14.035692], [12.003196], [11.831149], [6.3560786]], [[10.490189], [13.628067], [13.697735], [13.8100815], [13.333141]]], 'float32')]),
    ('rot_channels_first', lambda: L.RandomRotation(0.25, fill_mode='nearest', seed=7, data_format='channels_first'), lambda: np.transpose(X, (0, 3, 1, 2)), [
        np.array([[[[11.366245, 16.36121, 15.9625435, 14.624104, 7.86091], [6.462131, 10.286455, 7.1706605, 19.333313, 13.307039], [7.025306, 16.834831, 11.983205, 11.411822, 11.537869], [10.139091, 4.0814896, 14.488018, 9.397051, 6.633755]]], [[[9.4054165, 15.406064, 5.090489, 13.15622, 16.316036], [6.2993355, 13.356766, 7.236126, 6.3535023, 9.018316], [12.981687, 15.646496, 14.763876, 8.643235, 15.700668], [5.683964, 8.843777, 16.909512, 6.5939355, 12.5945835]]]], 'float32')]),
    ('zoom', lambda: L.RandomZoom(0.3, seed=3), lambda: X, [
        np.array([[[[5.8384743], [10.412843], [10.989536], [16.71237], [11.8256855]], [[13.550846], [15.460097], [4.094713], [9.817547], [14.207824]], [[4.55782], [9.897832], [13.905287], [19.628119], [12.076318]], [[12.27019], [14.9450865], [7.0104637], [12.733296], [14.458456]]], [[[2.0], [7.154751], [16.0], [1.8452492], [7.0]], [[12.418358], [17.573109], [6.4498386], [12.263607], [17.418358]], [[4.581642], [9.736393], [15.550161], [4.4268913], [9.581642]], [[15.0], [20.15475], [6.0], [14.845249], [20.0]]]], 'float32'),
        np.array([[[[1.1248398], [7.836153], [13.420004], [20.173946], [6.672305]], [[12.298785], [18.258457], [3.2109075], [9.9648485], [16.342968]], [[1.6854492], [8.42518], [14.789092], [21.543036], [7.2897525]], [[12.859396], [18.847488], [4.579994], [11.333936], [16.960417]]], [[[2.0], [8.220884], [16.0], [0.77911496], [7.0]], [[13.332187], [19.553072], [5.6121626], [12.111301], [18.332188]], [[3.6678143], [9.888699], [16.387836], [2.4469292], [8.667814]], [[15.0], [21.220884], [6.0], [13.779115], [20.0]]]], 'float32')]),
    ('zoom_hw_const', lambda: L.RandomZoom((-0.4, -0.1), (0.1, 0.5), fill_mode='constant', seed=8), lambda: X, [
        np.array([[[[3.0924637], [10.345915], [9.996044], [15.882301], [6.6324134]], [[7.5509543], [16.643312], [4.455983], [12.070573], [11.090905]], [[1.6529084], [8.312614], [13.544017], [18.61538], [5.1928577]], [[6.1113987], [14.610012], [8.003956], [14.80365], [9.651349]]], [[[4.691677], [12.286316], [12.250915], [4.893505], [8.543689]], [[9.822857], [18.94671], [6.363303], [11.5539], [13.6748705]], [[3.273972], [10.4461], [15.636697], [3.0532894], [7.1259828]], [[8.40515], [17.106493], [9.749086], [9.713682], [12.257162]]]], 'float32')]),
    ('zoom_nearest_unbatched', lambda: L.RandomZoom(0.2, 0.3, interpolation='nearest', seed=9), lambda: X[1], [
        np.array([[[2.0], [9.0], [16.0], [0.0], [7.0]], [[14.0], [21.0], [5.0], [12.0], [19.0]], [[3.0], [10.0], [17.0], [1.0], [8.0]], [[15.0], [22.0], [6.0], [13.0], [20.0]]], 'float32')]),
    ('trans', lambda: L.RandomTranslation(0.2, 0.3, seed=3), lambda: X, [
        np.array([[[[7.068765], [12.101984], [9.878357], [14.802751], [10.838473]], [[7.8783574], [12.802751], [10.068767], [15.101984], [11.648066]], [[8.068764], [13.101983], [10.878359], [15.8027525], [11.838472]], [[14.230291], [17.187904], [5.230292], [12.230292], [18.0]]], [[[2.0], [5.1044188], [12.104419], [8.904186], [3.1044185]], [[5.5645704], [8.66899], [12.639036], [8.666617], [6.668989]], [[10.732476], [13.836896], [13.666617], [8.639035], [11.836895]], [[6.5645714], [9.668991], [13.639034], [9.666617], [7.6689906]]]], 'float32'),
        np.array([[[[0.0], [1.2528057], [8.252806], [15.252806], [18.136444]], [[4.8040533], [6.0568585], [11.408924], [10.849091], [15.380664]], [[7.5962853], [8.849091], [13.380665], [9.056858], [14.408923]], [[5.8040524], [7.056858], [12.408923], [11.849091], [16.380665]]], [[[12.195386], [10.025836], [4.719699], [9.402697], [7.0856943]], [[15.025837], [8.195387], [12.1145315], [16.79753], [14.480528]], [[13.195386], [11.025836], [5.719698], [10.402696], [8.085693]], [[16.703997], [8.317002], [15.317002], [20.0], [17.682999]]]], 'float32')]),
    ('trans_wrap_nearest', lambda: L.RandomTranslation((-0.5, 0.1), 0.4, fill_mode='wrap', interpolation='nearest', seed=10), lambda: X, [
        np.array([[[[6.0], [6.0], [8.0], [15.0], [22.0]], [[18.0], [18.0], [20.0], [4.0], [11.0]], [[5.0], [5.0], [7.0], [14.0], [21.0]], [[17.0], [17.0], [19.0], [3.0], [10.0]]], [[[16.0], [0.0], [7.0], [2.0], [9.0]], [[5.0], [12.0], [19.0], [14.0], [21.0]], [[17.0], [1.0], [8.0], [3.0], [10.0]], [[16.0], [0.0], [7.0], [2.0], [9.0]]]], 'float32')]),
    ('crop', lambda: L.RandomCrop(2, 3, seed=3), lambda: X, [
        np.array([[[[7.0], [14.0], [21.0]], [[19.0], [3.0], [10.0]]], [[[9.0], [16.0], [0.0]], [[21.0], [5.0], [12.0]]]], 'float32'),
        np.array([[[[15.0], [22.0], [6.0]], [[4.0], [11.0], [18.0]]], [[[17.0], [1.0], [8.0]], [[6.0], [13.0], [20.0]]]], 'float32'),
        np.array([[[[0.0], [7.0], [14.0]], [[12.0], [19.0], [3.0]]], [[[2.0], [9.0], [16.0]], [[14.0], [21.0], [5.0]]]], 'float32')]),
    ('crop_resized', lambda: L.RandomCrop(6, 2, seed=3), lambda: X, [
        np.array([[[[14.0], [21.0]], [[8.5], [15.5]], [[5.000001], [12.000001]], [[13.000002], [20.000002]], [[9.5], [16.5]], [[4.0], [11.0]]], [[[16.0], [0.0]], [[10.5], [6.0]], [[7.000001], [10.166666]], [[15.000002], [2.833332]], [[11.5], [7.0]], [[6.0], [13.0]]]], 'float32')]),
    ('bright', lambda: L.RandomBrightness(0.2, seed=3), lambda: X, [
        np.array([[[[0.0], [0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0], [0.0]]], [[[46.813217], [53.813217], [60.813217], [44.813217], [51.813217]], [[58.813217], [65.81322], [49.813217], [56.813217], [63.813217]], [[47.813217], [54.813217], [61.813217], [45.813217], [52.813217]], [[59.813217], [66.81322], [50.813217], [57.813217], [64.81322]]]], 'float32'),
        np.array([[[[0.0], [1.0243001], [8.0243], [15.0243], [0.0]], [[6.0243], [13.0243], [0.0], [4.0243], [11.0243]], [[0.0], [2.0243], [9.0243], [16.0243], [0.024300098]], [[7.0243], [14.0243], [0.0], [5.0243], [12.0243]]], [[[20.921392], [27.921392], [34.921394], [18.921392], [25.921392]], [[32.921394], [39.921394], [23.921392], [30.921392], [37.921394]], [[21.921392], [28.921392], [35.921394], [19.921392], [26.921392]], [[33.921394], [40.921394], [24.921392], [31.921392], [38.921394]]]], 'float32')]),
    ('bright_unit_range', lambda: L.RandomBrightness((-0.1, 0.5), value_range=(0, 1), seed=12), lambda: X / 23.0, [
        np.array([[[[0.4451448], [0.74949265], [1.0], [1.0], [0.6625361]], [[0.9668839], [1.0], [0.5755796], [0.8799274], [1.0]], [[0.48862305], [0.7929709], [1.0], [1.0], [0.7060144]], [[1.0], [1.0], [0.61905783], [0.92340565], [1.0]]], [[[0.16665602], [0.47100383], [0.7753517], [0.079699494], [0.3840473]], [[0.68839514], [0.992743], [0.2970908], [0.60143864], [0.90578645]], [[0.21013427], [0.5144821], [0.81882995], [0.12317775], [0.42752558]], [[0.73187345], [1.0], [0.34056905], [0.6449169], [0.9492647]]]], 'float32')]),
    ('height', lambda: L.RandomHeight(0.5, seed=3), lambda: X, [
        np.array([[[[6.0], [13.0], [8.5], [15.5], [11.0]], [[7.0], [14.0], [9.5], [16.5], [12.0]]], [[[8.0], [15.0], [10.5], [6.0], [13.0]], [[9.0], [16.0], [11.5], [7.0], [14.0]]]], 'float32'),
        np.array([[[[2.0000002], [9.0], [12.166666], [19.166666], [7.0]], [[6.5], [13.5], [9.0], [16.0], [11.5]], [[11.000002], [18.000002], [5.833332], [12.833332], [16.000002]]], [[[4.0], [11.0], [14.166666], [2.0000002], [9.0]], [[8.5], [15.5], [11.0], [6.5], [13.5]], [[13.000002], [20.000002], [7.833332], [11.000002], [18.000002]]]], 'float32')]),
    ('width_nearest', lambda: L.RandomWidth((-0.3, 0.6), interpolation='nearest', seed=3), lambda: X, [
        np.array([[[[0.0], [7.0], [21.0], [5.0]], [[12.0], [19.0], [10.0], [17.0]], [[1.0], [8.0], [22.0], [6.0]], [[13.0], [20.0], [11.0], [18.0]]], [[[2.0], [9.0], [0.0], [7.0]], [[14.0], [21.0], [12.0], [19.0]], [[3.0], [10.0], [1.0], [8.0]], [[15.0], [22.0], [13.0], [20.0]]]], 'float32'),
        np.array([[[[0.0], [7.0], [14.0], [21.0], [5.0]], [[12.0], [19.0], [3.0], [10.0], [17.0]], [[1.0], [8.0], [15.0], [22.0], [6.0]], [[13.0], [20.0], [4.0], [11.0], [18.0]]], [[[2.0], [9.0], [16.0], [0.0], [7.0]], [[14.0], [21.0], [5.0], [12.0], [19.0]], [[3.0], [10.0], [17.0], [1.0], [8.0]], [[15.0], [22.0], [6.0], [13.0], [20.0]]]], 'float32')]),
]
GLOBAL_ZOOM = np.array([[[[0.4812889], [7.368202], [13.751836], [20.646553], [5.7364054]], [[12.127842], [18.679235], [3.0902424], [9.984961], [16.711916]], [[1.2932861], [8.185403], [14.909758], [21.804478], [6.5588083]], [[12.939839], [19.496435], [4.248164], [11.142883], [17.534319]]], [[[3.833521], [10.319174], [15.05459], [1.8348546], [7.229191]], [[14.487028], [19.805859], [5.343785], [11.321534], [17.8827]], [[4.1173015], [10.678464], [16.656216], [2.1941447], [7.512972]], [[14.77081], [20.165148], [6.94541], [11.680824], [18.166481]]]], 'float32')
GLOBAL_CROP_SEED = 448817265

# tf.sin / tf.cos (Eigen's float32 polynomials) and NumPy's differ in the last bit for a few angles, so a
# rotation may move a pixel by float32 rounding; every other layer is bit-equal.
ROTATION_ATOL = {"rot": 1e-5, "rot_const_nearest": 0, "rot_unbatched_wrap": 1e-5, "rot_channels_first": 1e-5}


@pytest.mark.parametrize("key,make,images,expected", CASES, ids=[c[0] for c in CASES])
def test_training_calls_draw_and_transform_as_keras(key, make, images, expected):
    layer = make()
    for want in expected:
        got = layer(images()).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        if key in ROTATION_ATOL:
            np.testing.assert_allclose(got, want, rtol=0, atol=ROTATION_ATOL[key])
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("key,make,images,expected", CASES, ids=[c[0] for c in CASES])
def test_inference_passes_images_through(key, make, images, expected):
    x = images()
    np.testing.assert_array_equal(make()(x, training=False).numpy(), x)


def test_unseeded_layers_follow_set_random_seed():
    tf.keras.utils.set_random_seed(21)
    np.testing.assert_array_equal(L.RandomZoom(0.1)(X).numpy(), GLOBAL_ZOOM)
    assert L.RandomCrop(2, 2).get_config()["seed"] == GLOBAL_CROP_SEED


def test_tf_function_and_eager_draw_the_same_sequence():
    eager, traced = L.RandomTranslation(0.2, 0.3, seed=3), L.RandomTranslation(0.2, 0.3, seed=3)
    step = tf.function(lambda x: traced(x, training=True))
    for _ in range(2):
        np.testing.assert_array_equal(step(tf.constant(X)).numpy(), eager(X, training=True).numpy())


CONFIGS = [
    (lambda: L.RandomRotation(0.2), {"data_format": "channels_last", "factor": (-0.2, 0.2), "fill_mode": "reflect",
                                     "fill_value": 0.0, "interpolation": "bilinear", "seed": None}),
    (lambda: L.RandomZoom(0.1, 0.2), {"data_format": "channels_last", "height_factor": 0.1, "width_factor": 0.2,
                                      "fill_mode": "reflect", "interpolation": "bilinear", "seed": None,
                                      "fill_value": 0.0}),
    (lambda: L.RandomTranslation(0.1, 0.2, fill_mode="constant"),
     {"data_format": "channels_last", "height_factor": 0.1, "width_factor": 0.2, "fill_mode": "constant",
      "interpolation": "bilinear", "seed": None, "fill_value": 0.0}),
    (lambda: L.RandomCrop(3, 4, seed=1), {"data_format": "channels_last", "height": 3, "width": 4, "seed": 1}),
    (lambda: L.RandomBrightness(0.2), {"data_format": "channels_last", "factor": (-0.2, 0.2),
                                       "value_range": [0, 255], "seed": None}),
    (lambda: L.RandomHeight(0.2), {"factor": 0.2, "interpolation": "bilinear", "seed": None}),
    (lambda: L.RandomWidth((0.1, 0.3), seed=2), {"factor": (0.1, 0.3), "interpolation": "bilinear", "seed": 2}),
]


@pytest.mark.parametrize("make,expected", CONFIGS)
def test_get_config_is_keras_and_round_trips(make, expected):
    layer = make()
    config = layer.get_config()
    assert {k: v for k, v in config.items() if k not in ("name", "dtype", "trainable")} == expected
    assert type(layer).from_config(config).get_config() == config


def test_output_shapes_and_summary_shapes():
    assert L.RandomHeight(0.2).compute_output_shape((None, 8, 8, 3)) == (None, None, 8, 3)
    assert L.RandomWidth(0.2).compute_output_shape((None, 8, 8, 3)) == (None, 8, None, 3)
    assert L.RandomCrop(3, 4).compute_output_shape((None, 8, 8, 3)) == (None, 3, 4, 3)
    assert L.RandomRotation(0.1).compute_output_shape((None, 8, 8, 3)) == (None, 8, 8, 3)


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(NotImplementedError, match="Unknown `fill_mode` mirror"):
        L.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(NotImplementedError, match="Unknown `interpolation` bicubic"):
        L.RandomZoom(0.1, interpolation="bicubic")
    with pytest.raises(ValueError, match=r"in the range \(-1.0, 1.0\]"):
        L.RandomZoom(-1.0)
    with pytest.raises(ValueError, match=r"in the range \[-1, 1\]"):
        L.RandomRotation(1.5)
    with pytest.raises(ValueError, match="rank 3 \\(single image\\) or 4"):
        L.RandomRotation(0.1)(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="upper bound lesser than the lower bound"):
        L.RandomHeight((0.3, 0.1))


def test_model_save_and_load_keeps_augmentation_layers(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((4, 5, 1)), L.RandomRotation(0.1, seed=1), L.RandomZoom(0.2, seed=2),
                                 L.RandomTranslation(0.1, 0.1, seed=3), L.RandomBrightness(0.1, seed=4),
                                 L.Flatten(), L.Dense(2)])
    path = str(tmp_path / "aug.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert [type(layer).__name__ for layer in loaded.layers][:4] == [
        "RandomRotation", "RandomZoom", "RandomTranslation", "RandomBrightness"]
    assert loaded.layers[1].get_config() == model.layers[1].get_config()
    np.testing.assert_allclose(loaded.predict(X, verbose=0), model.predict(X, verbose=0), rtol=1e-6)


# --- the ops: pinned from tf.raw_ops.ImageProjectiveTransformV3 and tf.image.resize -----------------------------

# arange(12) ** 1.5 as float32, written out: NumPy's float32 power differs in the last bit between CPUs (its
# AVX-512 loop gives 5.1961527 for 3 ** 1.5, others the correctly rounded 5.1961522), and TF saw these values
IMG = np.array([0.0, 1.0, 2.828427, 5.1961527, 8.0, 11.18034, 14.6969385, 18.520258, 22.627417, 27.0, 31.622776,
                36.482872], np.float32).reshape(1, 3, 4, 1)
T = np.array([[0.9, -0.3, 1.2, 0.4, 1.1, -0.7, 0.01, -0.02]], np.float32)
PROJECTIVE = {
    ('REFLECT', 'BILINEAR'): np.array([[1.3656855, 3.0159695, 6.354765, 11.664166, 14.494398, 17.10691], [5.0009604, 11.838669, 20.90358, 29.013271, 33.79398, 30.500744], [18.634785, 28.848566, 33.80486, 36.482872, 33.735325, 23.543032], [24.022923, 25.67271, 23.26058, 20.001715, 14.7133665, 7.4610796]], np.float32),
    ('REFLECT', 'NEAREST'): np.array([[1.0, 2.828427, 5.1961527, 5.1961527, 14.6969385, 14.6969385], [1.0, 14.6969385, 18.520258, 36.482872, 36.482872, 31.622776], [27.0, 31.622776, 31.622776, 36.482872, 36.482872, 31.622776], [22.627417, 27.0, 14.6969385, 18.520258, 18.520258, 2.828427]], np.float32),
    ('WRAP', 'BILINEAR'): np.array([[27.924555, 32.007732, 6.354765, 3.8834958, 8.699592, 16.566916], [5.0009604, 11.838669, 20.90358, 16.544731, 23.835016, 1.4437926], [18.634785, 28.848566, 3.8914876, 0.0, 1.0436078, 5.8667912], [0.31914896, 3.1587367, 9.84899, 7.3402042, 0.0, 0.848485]], np.float32),
    ('WRAP', 'NEAREST'): np.array([[27.0, 31.622776, 5.1961527, 0.0, 11.18034, 11.18034], [1.0, 14.6969385, 18.520258, 22.627417, 22.627417, 1.0], [27.0, 31.622776, 2.828427, 0.0, 0.0, 1.0], [0.0, 1.0, 14.6969385, 8.0, 0.0, 1.0]], np.float32),
    ('CONSTANT', 'BILINEAR'): np.array([[-0.29029432, 1.8231072, 6.354765, 1.7049682, -1.0, -1.0], [5.0009604, 11.838669, 20.90358, 12.075092, -1.0, -1.0], [18.634785, 28.848566, 21.72971, 5.8150682, -1.0, -1.0], [4.8564253, -1.0, -1.0, -1.0, -1.0, -1.0]], np.float32),
    ('CONSTANT', 'NEAREST'): np.array([[-1.0, 2.828427, 5.1961527, -1.0, -1.0, -1.0], [1.0, 14.6969385, 18.520258, -1.0, -1.0, -1.0], [27.0, 31.622776, 31.622776, -1.0, -1.0, -1.0], [-1.0, -1.0, -1.0, -1.0, -1.0, -1.0]], np.float32),
    ('NEAREST', 'BILINEAR'): np.array([[1.3656855, 3.0159695, 6.354765, 11.664166, 16.72663, 22.797071], [5.0009604, 11.838669, 20.90358, 29.013271, 35.778454, 36.482872], [18.634785, 28.848566, 33.80486, 36.482872, 36.482872, 36.482872], [24.022923, 28.21652, 32.534046, 36.482872, 36.482872, 36.482872]], np.float32),
    ('NEAREST', 'NEAREST'): np.array([[1.0, 2.828427, 5.1961527, 5.1961527, 18.520258, 18.520258], [1.0, 14.6969385, 18.520258, 36.482872, 36.482872, 36.482872], [27.0, 31.622776, 31.622776, 36.482872, 36.482872, 36.482872], [22.627417, 27.0, 31.622776, 36.482872, 36.482872, 36.482872]], np.float32),
}
RESIZE = {
    ((2, 3), 'bilinear'): np.array([[2.2575142, 4.67032, 8.071909], [19.64965, 25.2182, 31.2254]], np.float32),
    ((2, 3), 'nearest'): np.array([[0.0, 2.828427, 5.1961527], [22.627417, 31.622776, 36.482872]], np.float32),
    ((5, 7), 'bilinear'): np.array([[0.0, 0.35714293, 0.92857146, 1.9142135, 2.9975507, 4.350537, 5.1961527], [3.2000003, 3.8686202, 4.9384127, 6.323984, 7.786544, 9.472238, 10.525795], [8.0, 9.135836, 10.953173, 12.938639, 14.970034, 17.154787, 18.520258], [16.776451, 18.16777, 20.393875, 22.762291, 25.169971, 27.710192, 29.297829], [22.627417, 24.189054, 26.687672, 29.311388, 31.969927, 34.747124, 36.482872]], np.float32),
    ((5, 7), 'nearest'): np.array([[0.0, 0.0, 1.0, 2.828427, 2.828427, 5.1961527, 5.1961527], [0.0, 0.0, 1.0, 2.828427, 2.828427, 5.1961527, 5.1961527], [8.0, 8.0, 11.18034, 14.6969385, 14.6969385, 18.520258, 18.520258], [22.627417, 22.627417, 27.0, 31.622776, 31.622776, 36.482872, 36.482872], [22.627417, 22.627417, 27.0, 31.622776, 31.622776, 36.482872, 36.482872]], np.float32),
}
RESIZE_GRAD = np.array([[8.457143, 13.442858, 18.699993, 22.400003], [44.61428, 51.685715, 57.599987, 60.300007], [70.85715, 78.44286, 83.69998, 84.800026]], np.float32)
PROJECTIVE_GRAD = np.array([[4.0, 2.577452, 2.095149, 2.0398862], [7.1039996, 5.9819164, 5.5878563, 5.1797748], [8.0, 8.471008, 8.985481, 8.642658]], np.float32)


@pytest.mark.parametrize("mode,interpolation", list(PROJECTIVE))
def test_image_projective_transform_v3_is_tf(mode, interpolation):
    from tapeflow.ops.image_transform_ops import image_projective_transform_v3

    out = image_projective_transform_v3(IMG, T, [4, 6], -1.0, interpolation, mode)
    np.testing.assert_array_equal(out.numpy()[0, :, :, 0], PROJECTIVE[(mode, interpolation)])


@pytest.mark.parametrize("size,method", list(RESIZE))
def test_image_resize_is_tf(size, method):
    out = tf.image.resize(IMG, size, method=method)
    assert out.dtype == tf.float32 and out.shape == (1,) + size + (1,)
    np.testing.assert_array_equal(out.numpy()[0, :, :, 0], RESIZE[(size, method)])


def test_resize_and_projective_gradients_are_tf():
    from tapeflow.ops.image_transform_ops import image_projective_transform_v3

    x = tf.constant(IMG)
    w = tf.reshape(tf.range(35, dtype=tf.float32), (1, 5, 7, 1))
    with tf.GradientTape() as g:
        g.watch(x)
        loss = tf.reduce_sum(tf.image.resize(x, (5, 7)) * w)
    np.testing.assert_allclose(g.gradient(loss, x).numpy()[0, :, :, 0], RESIZE_GRAD, rtol=1e-6)
    w = tf.reshape(tf.range(12, dtype=tf.float32), (1, 3, 4, 1))
    with tf.GradientTape() as g:
        g.watch(x)
        loss = tf.reduce_sum(image_projective_transform_v3(x, T, [3, 4], 0.0, "BILINEAR", "REFLECT") * w)
    np.testing.assert_allclose(g.gradient(loss, x).numpy()[0, :, :, 0], PROJECTIVE_GRAD, rtol=1e-5, atol=1e-5)


def test_resize_of_an_unbatched_uint8_image_and_unsupported_methods():
    img = np.arange(12, dtype=np.uint8).reshape(3, 4, 1)
    assert tf.image.resize(img, (2, 2)).dtype == tf.float32
    assert tf.image.resize(img, (2, 2), method="nearest").dtype == tf.uint8
    assert tf.image.resize(img, (2, 2), method="bicubic").dtype == tf.float32
    assert tf.image.resize(img, (2, 2), method="gaussian").dtype == tf.float32
    assert tf.image.resize(img, (2, 2), preserve_aspect_ratio=True).shape == (2, 2, 1)
