"""Cases of tf.io base64 / decode_compressed / is_jpeg / matching_files, tf.test's build queries,
tf.config.experimental's device functions and tf.dtypes.complex, each ``fn(tf)``; recorded from real TF by
tools/tf_api/record.py, replayed by tests/test_tf_cases.py (a Python value by its repr)."""

import gzip
import os
import tempfile
import zlib

import numpy as np

from tests.tf_cases import raises


def _files(tf):
    d = tempfile.mkdtemp()
    for n in ("b.txt", "a.txt", "c.csv"):
        open(os.path.join(d, n), "w").close()
    found = tf.io.matching_files(os.path.join(d, "*.txt"))
    both = tf.io.matching_files([os.path.join(d, "*.txt"), os.path.join(d, "*.csv")])
    none = tf.io.matching_files(os.path.join(d, "*.none"))
    return repr(([os.path.basename(f) for f in found.numpy().tolist()], both.shape.as_list(), none.shape.as_list(),
                 none.dtype.name))


def _err(fn):
    return raises(fn, strip_node=True)


CASES = {
    "encode_base64": lambda tf: tf.io.encode_base64(["hello", "a?>~", ""]),
    "encode_base64_pad": lambda tf: tf.io.encode_base64([b"hello?", b"ab"], pad=True),
    "decode_base64": lambda tf: tf.io.decode_base64(["aGVsbG8", "YT8-fg", "aGVsbG8_", "aGVsbG8=", "YT8-fg=="]),
    "decode_base64_length": lambda tf: tf.io.decode_base64("YT8-f"),
    "decode_base64_bad_char": lambda tf: tf.io.decode_base64("aGVsbG8/"),
    "decode_base64_bad_padding": lambda tf: tf.io.decode_base64("aGVsbG8==x"),
    "decode_compressed_zlib": lambda tf: tf.io.decode_compressed([zlib.compress(b"abc"), zlib.compress(b"")],
                                                                 "ZLIB"),
    "decode_compressed_gzip": lambda tf: tf.io.decode_compressed([gzip.compress(b"xyz")], "GZIP"),
    "decode_compressed_none": lambda tf: tf.io.decode_compressed([b"raw"]),
    "decode_compressed_bad_data": lambda tf: tf.io.decode_compressed(b"raw", "ZLIB"),
    "decode_compressed_bad_kind": lambda tf: tf.io.decode_compressed(b"raw", "LZ4"),
    "is_jpeg": lambda tf: [tf.io.is_jpeg(tf.io.encode_jpeg(tf.zeros([2, 2, 3], tf.uint8))), tf.io.is_jpeg(b"xx"),
                           tf.image.is_jpeg(b"\xff\xd8\xffxx")],
    "matching_files": _files,
    "test_build_queries": lambda tf: repr((tf.test.is_gpu_available(), tf.test.gpu_device_name(),
                                           tf.test.is_built_with_cuda(), tf.test.is_built_with_gpu_support(),
                                           tf.test.is_built_with_rocm())),
    "config_experimental_devices": lambda tf: repr((
        tf.config.experimental.list_physical_devices("GPU"), tf.config.experimental.list_physical_devices(),
        tf.config.experimental.list_logical_devices("CPU"), tf.config.experimental.get_visible_devices())),
    "config_experimental_memory": lambda tf: repr((tf.config.experimental.get_memory_info("CPU:0"),
                                                   tf.config.experimental.reset_memory_stats("CPU:0"),
                                                   tf.config.experimental.get_device_details(
                                                       tf.config.list_physical_devices("CPU")[0]))),
    "config_experimental_memory_growth_cpu": _err(lambda tf: tf.config.experimental.get_memory_growth(
        tf.config.list_physical_devices("CPU")[0])),
    "config_experimental_flags": lambda tf: repr((
        tf.config.experimental.tensor_float_32_execution_enabled(),
        tf.config.experimental.enable_tensor_float_32_execution(False),
        tf.config.experimental.tensor_float_32_execution_enabled(),
        tf.config.experimental.enable_tensor_float_32_execution(True),
        tf.config.experimental.get_device_policy(), tf.config.experimental.get_synchronous_execution())),
    "dtypes_complex": lambda tf: tf.math.imag(tf.dtypes.complex(tf.constant([1.0, 2.0]),
                                                                tf.constant([3.0, -1.0]))),
}

CASES.update({
    "create_rng_state_philox": lambda tf: tf.random.create_rng_state(1234, "philox"),
    "create_rng_state_big_int": lambda tf: tf.random.create_rng_state(2**70 + 5, 1),
    "create_rng_state_threefry_vector": lambda tf: tf.random.create_rng_state([1, 2], "threefry"),
    "create_rng_state_short_vector": lambda tf: tf.random.experimental.create_rng_state([7], "philox"),
    "gfile_join": lambda tf: repr((tf.io.gfile.join("a", "b", "c.txt"), tf.io.gfile.join("/x/", "y"))),
})


def _tfrecord_writer(tf):
    path = os.path.join(tempfile.mkdtemp(), "x.tfrecord")
    tf.data.experimental.TFRecordWriter(path).write(tf.data.Dataset.from_tensor_slices([b"ab", b"", b"cde"]))
    return [r for r in tf.data.TFRecordDataset(path).map(lambda r: tf.strings.length(r))]


def _data_exp(fn):
    return lambda tf: [x for x in fn(tf, tf.data.Dataset.range(7))]


CASES.update({
    "data_shuffle_and_repeat": _data_exp(lambda tf, ds: tf.random.set_seed(11) or ds.apply(
        tf.data.experimental.shuffle_and_repeat(3, count=2, seed=1))),
    "data_map_and_batch": _data_exp(lambda tf, ds: ds.apply(tf.data.experimental.map_and_batch(
        lambda x: x * 2, 3, drop_remainder=True))),
    "data_parallel_interleave": _data_exp(lambda tf, ds: ds.take(3).apply(tf.data.experimental.parallel_interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(3), cycle_length=2, block_length=2))),
    "data_enumerate_dataset": _data_exp(lambda tf, ds: ds.take(3).apply(tf.data.experimental.enumerate_dataset(5)).map(
        lambda i, x: i * 10 + x)),
    "data_get_structure": lambda tf: repr((tf.data.experimental.get_structure(tf.data.Dataset.range(3)),
                                           tf.data.experimental.get_structure(iter(tf.data.Dataset.range(3))))),
    "data_tfrecord_writer": _tfrecord_writer,
    "data_tfrecord_writer_bad_dataset": lambda tf: tf.data.experimental.TFRecordWriter(
        os.path.join(tempfile.mkdtemp(), "y")).write(tf.data.Dataset.range(2)),
})

_IMG = (np.arange(20 * 30 * 3).reshape(20, 30, 3) * 7 % 256).astype(np.uint8)


def _crop(window, channels=0):
    def case(tf):
        j = tf.io.encode_jpeg(_IMG)
        crop = tf.io.decode_and_crop_jpeg(j, window, channels=channels)
        y, x, h, w = window
        same = tf.reduce_all(crop == tf.io.decode_jpeg(j, channels=channels)[y:y + h, x:x + w])
        return [tf.shape(crop), same]
    return case


CASES.update({
    "decode_and_crop_jpeg": _crop([2, 3, 10, 12]),
    "decode_and_crop_jpeg_gray": _crop([2, 3, 10, 12], channels=1),
    "decode_and_crop_jpeg_outside": _crop([15, 3, 10, 12]),
    "decode_and_crop_jpeg_empty": _crop([0, 0, 0, 5]),
    "extract_jpeg_shape": lambda tf: [tf.io.extract_jpeg_shape(tf.io.encode_jpeg(_IMG)),
                                      tf.io.extract_jpeg_shape(tf.io.encode_jpeg(_IMG), output_type=tf.int64),
                                      tf.image.extract_jpeg_shape(tf.io.encode_jpeg(_IMG[..., :1]))],
    "extract_jpeg_shape_not_jpeg": lambda tf: tf.io.extract_jpeg_shape(b"xx"),
})
