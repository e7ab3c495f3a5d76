"""
# tf.data pipelines: map, filter, batch, padded_batch, cache, prefetch, windows, group_by, zip, interleave
"""
import numpy as np
import tensorflow as tf

ds = tf.data.Dataset.range(10)
print(list(ds.map(lambda x: x * 2).filter(lambda x: x % 3 == 0).as_numpy_iterator()))
print(list(ds.batch(4).as_numpy_iterator()))
print(list(ds.batch(4, drop_remainder=True).map(tf.reduce_sum).as_numpy_iterator()))
print(ds.batch(3).element_spec, ds.batch(3, drop_remainder=True).element_spec)
"""
Variable-length sequences and padded_batch.
"""
seqs = [[1, 2, 3], [4], [5, 6], [7, 8, 9, 10], [11]]
ragged = tf.data.Dataset.from_generator(lambda: iter(seqs), output_signature=tf.TensorSpec([None], tf.int32))
print(ragged.element_spec)
for b in ragged.padded_batch(2):
    print(b.numpy().tolist())
for b in ragged.padded_batch(2, padded_shapes=[5], padding_values=-1):
    print(b.numpy().tolist())
pairs = ragged.map(lambda s: (s, tf.size(s)))
for s, n in pairs.padded_batch(3, padded_shapes=([None], [])):
    print(s.shape, n.numpy())
print(list(ragged.ragged_batch(2).map(lambda r: r.row_lengths()).as_numpy_iterator()))
"""
Dicts, zip, cache, prefetch, shuffle with a seed, repeat.
"""
feats = tf.data.Dataset.from_tensor_slices({"a": np.arange(6, dtype="float32"), "b": np.arange(6) % 2})
labels = tf.data.Dataset.from_tensor_slices(np.arange(6) * 10)
z = tf.data.Dataset.zip((feats, labels))
print(z.element_spec)
cached = z.map(lambda f, l: ({"a": f["a"] + 1.0, "b": f["b"]}, l)).cache().prefetch(tf.data.AUTOTUNE)
for f, l in cached.batch(4):
    print(f["a"].numpy(), f["b"].numpy(), l.numpy())
print(len(list(cached)), cached.cardinality().numpy(), cached.repeat().cardinality().numpy())
print(list(tf.data.Dataset.range(5).repeat(2).as_numpy_iterator()))
print(tf.data.Dataset.range(5).filter(lambda x: x > 1).cardinality().numpy())
sh = tf.data.Dataset.range(8).shuffle(8, seed=3)
a = list(sh.as_numpy_iterator())
print(sorted(a) == list(range(8)), len(a))
"""
Windows, flat_map, interleave, unbatch, enumerate, scan, reduce, take_while.
"""
w = tf.data.Dataset.range(7).window(3, shift=2, drop_remainder=True)
print([list(x.as_numpy_iterator()) for x in w])
print(list(w.flat_map(lambda x: x.batch(3)).as_numpy_iterator()))
il = tf.data.Dataset.range(3).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(3), cycle_length=2,
                                         block_length=2)
print(list(il.as_numpy_iterator()))
print(list(tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).unbatch().as_numpy_iterator()))
print(list(tf.data.Dataset.range(3).enumerate(start=5).as_numpy_iterator()))
print(list(tf.data.Dataset.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s * 10)).as_numpy_iterator()))
print(tf.data.Dataset.range(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x).numpy())
print(list(tf.data.Dataset.range(10).take_while(lambda x: x < 4).as_numpy_iterator()))
print(list(tf.data.Dataset.range(6).shard(3, 1).as_numpy_iterator()))
"""
group_by_window and bucket_by_sequence_length.
"""
g = tf.data.Dataset.range(10).group_by_window(key_func=lambda x: x % 2, reduce_func=lambda k, d: d.batch(3),
                                              window_size=3)
print([b.tolist() for b in g.as_numpy_iterator()])
buck = ragged.bucket_by_sequence_length(element_length_func=lambda s: tf.size(s), bucket_boundaries=[2, 4],
                                        bucket_batch_sizes=[2, 2, 2])
print([b.tolist() for b in buck.as_numpy_iterator()])
"""
Text-ish: strings, map with py_function, TextLineDataset.
"""
with open("lines.txt", "w") as f:
    f.write("the cat sat\nthe dog\n\na bird flew away\n")
lines = tf.data.TextLineDataset("lines.txt")
print(list(lines.as_numpy_iterator()))
tok = lines.filter(lambda l: tf.strings.length(l) > 0).map(tf.strings.split)
print(tok.element_spec)
for t in tok:
    print(t.numpy())
lens = lines.map(lambda l: tf.py_function(lambda s: len(s.numpy().split()), [l], tf.int64))
print(list(lens.as_numpy_iterator()))
"""
An input pipeline that feeds Keras fit with prefetch, and one with options.
"""
x = np.linspace(-1, 1, 64, dtype="float32").reshape(-1, 1)
y = 3 * x + 1
train = tf.data.Dataset.from_tensor_slices((x, y)).batch(16).cache().prefetch(2)
model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="mse")
hist = model.fit(train, epochs=4, verbose=0)
print(np.round(hist.history["loss"], 5))
print(np.round(model.layers[0].kernel.numpy(), 4), np.round(model.layers[0].bias.numpy(), 4))
opts = tf.data.Options()
opts.deterministic = True
opts.experimental_optimization.map_parallelization = True
d2 = tf.data.Dataset.range(4).map(lambda v: v + 1, num_parallel_calls=tf.data.AUTOTUNE).with_options(opts)
print(list(d2.as_numpy_iterator()), d2.options().deterministic)
it = iter(tf.data.Dataset.range(3))
print(next(it).numpy(), it.get_next().numpy(), next(it).numpy())
try:
    next(it)
except StopIteration:
    print("StopIteration")
print(tf.data.experimental.cardinality(tf.data.Dataset.range(3).filter(lambda x: True)).numpy() ==
      tf.data.UNKNOWN_CARDINALITY)
print(tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1], [2, 3]])).element_spec)
print(list(tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(10, 12)).as_numpy_iterator()))
two = [tf.data.Dataset.range(3), tf.data.Dataset.range(100, 103)]
mixed = tf.data.Dataset.sample_from_datasets(two, weights=[0.5, 0.5], seed=1, stop_on_empty_dataset=False)
print(len(list(mixed.as_numpy_iterator())))
choice = tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0], tf.int64))
print(list(tf.data.Dataset.choose_from_datasets(two, choice).as_numpy_iterator()))
