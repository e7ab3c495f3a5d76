"""
# A small Transformer: MultiHeadAttention with masks, LayerNormalization, positional embeddings, weights files
"""
import os

import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(0)
mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4, kernel_initializer="glorot_uniform", seed=1)
q = tf.reshape(tf.range(2 * 3 * 8, dtype=tf.float32) / 50.0, (2, 3, 8))
out, scores = mha(q, q, return_attention_scores=True)
print(out.shape, scores.shape)
print([w.path for w in mha.weights])
print([tuple(w.shape) for w in mha.weights])
causal, cs = mha(q, q, use_causal_mask=True, return_attention_scores=True)
print(np.round(cs.numpy()[0, 0], 4))
mask = tf.constant([[True, True, False], [True, False, False]])
_, ms = mha(q, q, attention_mask=mask[:, None, :], return_attention_scores=True)
print(np.round(ms.numpy()[1, 1], 4))
print(mha.get_config()["num_heads"], mha.get_config()["key_dim"], mha.get_config()["output_shape"])
"""
A Transformer encoder block as a custom layer, with positional embeddings and padding masks.
"""
@keras.saving.register_keras_serializable(package="tx")
class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, vocab, length, dim, **kwargs):
        super().__init__(**kwargs)
        self.vocab, self.length, self.dim = vocab, length, dim
        self.tok = keras.layers.Embedding(vocab, dim, mask_zero=True)
        self.pos = keras.layers.Embedding(length, dim)

    def call(self, x):
        positions = tf.range(tf.shape(x)[-1])
        return self.tok(x) + self.pos(positions)

    def compute_mask(self, x, mask=None):
        return self.tok.compute_mask(x)

    def get_config(self):
        return {**super().get_config(), "vocab": self.vocab, "length": self.length, "dim": self.dim}


@keras.saving.register_keras_serializable(package="tx")
class EncoderBlock(keras.layers.Layer):
    def __init__(self, dim, heads, ff, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.dim, self.heads, self.ff, self.rate = dim, heads, ff, rate
        self.att = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=dim // heads)
        self.ffn = keras.Sequential([keras.layers.Dense(ff, activation="gelu"), keras.layers.Dense(dim)])
        self.ln1 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.ln2 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.drop = keras.layers.Dropout(rate)
        self.supports_masking = True

    def call(self, x, training=False, mask=None):
        att_mask = None if mask is None else mask[:, None, :]
        a = self.att(x, x, attention_mask=att_mask, training=training)
        x = self.ln1(x + self.drop(a, training=training))
        return self.ln2(x + self.drop(self.ffn(x), training=training))

    def get_config(self):
        return {**super().get_config(), "dim": self.dim, "heads": self.heads, "ff": self.ff, "rate": self.rate}


rng = np.random.RandomState(1)
seqs = rng.randint(1, 20, size=(256, 10))
lens = rng.randint(3, 11, size=256)
for i, n in enumerate(lens):
    seqs[i, n:] = 0
labels = (seqs[:, 0] > 10).astype("int32")
inp = keras.Input((10,), dtype="int32")
h = PositionalEmbedding(20, 10, 16)(inp)
h = EncoderBlock(16, 2, 32)(h)
h = keras.layers.GlobalAveragePooling1D()(h)
outp = keras.layers.Dense(2)(h)
model = keras.Model(inp, outp)
model.summary()
print(model.layers[1].compute_mask(tf.constant(seqs[:2])).numpy().astype(int).tolist())
"""
Fit with ModelCheckpoint (weights only) and BackupAndRestore; weights files round trip.
"""
model.compile(optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.01),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
cbs = [keras.callbacks.ModelCheckpoint("w.{epoch:02d}.weights.h5", save_weights_only=True),
       keras.callbacks.BackupAndRestore("backup")]
hist = model.fit(seqs, labels, epochs=3, batch_size=32, validation_split=0.25, callbacks=cbs, verbose=0)
print(sorted(hist.history), len(hist.epoch))
print(sorted(f for f in os.listdir(".") if f.endswith(".weights.h5")))
before = model.predict(seqs[:4], verbose=0)
model.save_weights("final.weights.h5")
fresh = keras.Model.from_config(model.get_config())
fresh.load_weights("final.weights.h5")
print(np.allclose(before, fresh.predict(seqs[:4], verbose=0), atol=1e-6))
model.save("tx.keras")
back = keras.models.load_model("tx.keras")
print(np.allclose(before, back.predict(seqs[:4], verbose=0), atol=1e-6), [type(l).__name__ for l in back.layers])
print(type(back.optimizer).__name__, int(back.optimizer.iterations))
"""
Stateful RNN and reset_states.
"""
rnn = keras.Sequential([keras.Input(batch_shape=(2, 3, 1)),
                        keras.layers.SimpleRNN(2, stateful=True, kernel_initializer="ones",
                                               recurrent_initializer="identity", bias_initializer="zeros")])
x1 = np.ones((2, 3, 1), "float32")
print(np.round(rnn.predict(x1, verbose=0), 4).tolist())
print(np.round(rnn.predict(x1, verbose=0), 4).tolist())
rnn.layers[0].reset_states()
print(np.round(rnn.predict(x1, verbose=0), 4).tolist())
