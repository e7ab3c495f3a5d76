"""
# How tensors print and convert: reprs of many dtypes and sizes, tf.print, strings, lookups, math edge cases
"""
import numpy as np
import tensorflow as tf

print(tf.range(2000))
print(repr(tf.reshape(tf.range(3000.0), (30, 100))))
print(tf.constant([[1.5, np.nan], [np.inf, -np.inf]]))
print(tf.constant([1 + 2j, 3 - 1j]))
print(tf.constant([True, False]), tf.constant(["a", "bé"]), tf.constant(b"\x00\xff"))
print(tf.constant(3.0, tf.float16), tf.constant(3, tf.uint8), tf.constant(1e-8, tf.float64))
print(tf.constant([[1e10, 1.0], [2.5e-5, 3]]))
print(tf.zeros((2, 0, 3)), tf.ones((1, 1, 1, 1), tf.int64))
print(repr(tf.constant(np.arange(12, dtype=np.int16).reshape(2, 2, 3))))
print(str(tf.constant(0.1)), float(tf.constant(0.1)), tf.constant(0.1).numpy().item())
"""
tf.print: summarize, separators, output streams, nested structures.
"""
tf.print(tf.range(10), summarize=3)
tf.print(tf.reshape(tf.range(24), (2, 3, 4)))
tf.print("a", tf.constant(1.5), [1, tf.constant(2)], {"k": tf.constant([1, 2])}, sep=" | ", end="!\n")
tf.print(tf.constant(["x", "y"]), tf.constant(True))
tf.print(tf.constant([[0.123456789, 2.0]]))
tf.print(tf.range(1000), summarize=-1 if False else 2)
"""
Strings and lookups.
"""
s = tf.constant(["Hello World", "tapeflow is TF", ""])
print(tf.strings.lower(s), tf.strings.length(s), tf.strings.split(s))
print(tf.strings.regex_replace(s, "o", "0"), tf.strings.substr(s, 0, 3))
print(tf.strings.join([s, s], separator="-"), tf.strings.reduce_join(s, separator=","))
print(tf.strings.to_number(["1.5", "2"]), tf.strings.as_string([1.25, 3.0], precision=1))
print(tf.strings.format("x={} y={}", (tf.constant(1), tf.constant([1.0, 2.0]))))
print(tf.strings.unicode_split("héllo", "UTF-8"), tf.strings.bytes_split("ab"))
table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), default_value=-1)
print(table.lookup(tf.constant(["a", "c", "b"])), table.size())
vocab = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(["x", "y"], tf.constant([0, 1], tf.int64)),
                                        num_oov_buckets=2)
print(vocab.lookup(tf.constant(["x", "zz", "y", "q"])))
"""
Math edge cases and dtype rules.
"""
print(tf.constant(7) // 2, tf.constant(-7) // 2, tf.constant(-7) % 3, tf.constant(7.0) % -3)
print(tf.math.divide_no_nan(1.0, 0.0), tf.constant(1.0) / 0.0, tf.math.log(0.0), tf.sqrt(-1.0))
print(tf.cast(tf.constant([1.7, -1.7, 2.5]), tf.int32), tf.round([0.5, 1.5, 2.5, -0.5]))
print(tf.cast(300, tf.uint8), tf.cast(-1, tf.uint8), tf.cast(True, tf.float32))
print(tf.reduce_mean(tf.constant([1, 2])), tf.reduce_mean(tf.constant([1.0, 2.0])))
print(tf.argmax([[1, 3], [5, 2]], axis=1), tf.argmin([3.0, 1.0, 1.0]))
print(tf.math.top_k([1, 3, 2], 2).indices, tf.sort([3, 1, 2], direction="DESCENDING"), tf.argsort([3, 1, 2]))
print(tf.clip_by_norm([3.0, 4.0], 1.0), tf.clip_by_global_norm([tf.constant([3.0]), tf.constant([4.0])], 1.0)[1])
print(tf.math.cumsum([1, 2, 3], reverse=True), tf.math.cumprod([1, 2, 3], exclusive=True))
print(tf.unique([1, 2, 1, 3]), tf.math.bincount([1, 1, 3]))
print(tf.einsum("ij,jk->ik", tf.ones((2, 3)), tf.ones((3, 2))), tf.linalg.det(tf.eye(3) * 2.0))
print(tf.linalg.inv([[2.0, 0.0], [0.0, 4.0]]), tf.linalg.norm([3.0, 4.0]), tf.norm([[1.0, 2.0]], ord=1))
print(tf.tensordot(tf.ones((2, 3)), tf.ones((3,)), axes=1), tf.linalg.matvec(tf.eye(2), [1.0, 2.0]))
print(tf.experimental.numpy.isclose(0.1 + 0.2, 0.3), tf.math.is_nan([np.nan, 1.0]))
"""
Random numbers with seeds.
"""
tf.random.set_seed(42)
a = tf.random.uniform((3,))
tf.random.set_seed(42)
b = tf.random.uniform((3,))
print(np.allclose(a, b), a.dtype, a.shape)
print(tf.random.stateless_uniform((3,), seed=(1, 2)).numpy())
print(tf.random.stateless_normal((2,), seed=[3, 4]).numpy())
g = tf.random.Generator.from_seed(7)
print(g.normal((2,)).numpy(), g.uniform((2,), maxval=10, dtype=tf.int32).numpy())
print(tf.random.stateless_categorical(tf.math.log([[0.5, 0.5]]), 5, seed=(1, 1)).numpy())
