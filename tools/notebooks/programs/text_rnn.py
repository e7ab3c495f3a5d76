"""
# Text classification with TextVectorization, Embedding(mask_zero), LSTM/GRU, Bidirectional, LR schedule
"""
import numpy as np
import tensorflow as tf

texts = ["good movie great acting", "bad plot awful acting", "great fun good story", "boring and bad",
         "loved it great", "hated it awful", "good good good", "bad bad worse", "a great film", "an awful film"] * 8
labels = np.array([1, 0, 1, 0, 1, 0, 1, 0, 1, 0] * 8, dtype="int32")
vec = tf.keras.layers.TextVectorization(max_tokens=30, output_mode="int", output_sequence_length=6)
vec.adapt(texts)
vocab = vec.get_vocabulary()
print(len(vocab), vocab[:8])
print(vec(["good movie", "never seen words"]).numpy())
print(vec.get_config()["max_tokens"], vec.vocabulary_size())
"""
Models.
"""
tf.keras.utils.set_random_seed(0)
emb = tf.keras.layers.Embedding(len(vocab), 8, mask_zero=True)
print(emb.compute_mask(vec(["good", "bad plot awful"])).numpy())
model = tf.keras.Sequential([
    tf.keras.Input(shape=(1,), dtype=tf.string),
    vec,
    emb,
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(8, return_sequences=True)),
    tf.keras.layers.GRU(4),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
model.summary()
sched = tf.keras.optimizers.schedules.ExponentialDecay(0.01, decay_steps=10, decay_rate=0.9, staircase=True)
print(float(sched(0)), float(sched(25)), sched.get_config())
model.compile(optimizer=tf.keras.optimizers.Adam(sched, clipnorm=1.0), loss="binary_crossentropy",
              metrics=["accuracy", tf.keras.metrics.Precision(), tf.keras.metrics.Recall()])
ds = tf.data.Dataset.from_tensor_slices((np.array(texts)[:, None], labels)).shuffle(80, seed=0).batch(16)
hist = model.fit(ds, epochs=3, verbose=0)
print(sorted(hist.history))
print(model.optimizer.iterations.numpy())
print(model.predict(tf.constant([["great good"], ["awful bad"]]), verbose=0).shape)
"""
Masks and layers with return_state.
"""
x = tf.random.normal((2, 5, 3), seed=1)
lstm = tf.keras.layers.LSTM(4, return_state=True, return_sequences=True)
seq, h, c = lstm(x)
print(seq.shape, h.shape, c.shape)
print(np.allclose(seq[:, -1].numpy(), h.numpy()))
gru = tf.keras.layers.GRU(3, return_state=True)
out, state = gru(x)
print(out.shape, state.shape, np.allclose(out.numpy(), state.numpy()))
mask = tf.constant([[True, True, False, False, False], [True, True, True, True, True]])
out_m = tf.keras.layers.SimpleRNN(2, kernel_initializer="ones", recurrent_initializer="zeros")(
    tf.ones((2, 5, 1)), mask=mask)
print(out_m.numpy())
masking = tf.keras.layers.Masking(mask_value=0.0)
print(masking.compute_mask(tf.constant([[[1.0], [0.0]], [[0.0], [0.0]]])).numpy())
"""
Conv1D text model and functional with two outputs on strings.
"""
inp = tf.keras.Input(shape=(), dtype="string")
v = tf.keras.layers.TextVectorization(max_tokens=20, output_sequence_length=4, vocabulary=["good", "bad", "great"])
t = v(inp)
e = tf.keras.layers.Embedding(20, 4)(t)
c = tf.keras.layers.Conv1D(3, 2, activation="relu")(e)
p = tf.keras.layers.GlobalMaxPooling1D()(c)
m2 = tf.keras.Model(inp, p)
print(m2.output.shape, [l.name for l in m2.layers])
print(v.get_vocabulary())
print(v(tf.constant(["good bad great unknown", "good"])).numpy())
mh = tf.keras.layers.TextVectorization(output_mode="multi_hot", vocabulary=["a", "b", "c"])
print(mh(["a c c", "b"]).numpy())
tfidf = tf.keras.layers.TextVectorization(output_mode="tf_idf", vocabulary=["a", "b"], idf_weights=[0.5, 2.0])
print(tfidf(["a a b", "b"]).numpy())
ng = tf.keras.layers.TextVectorization(ngrams=2, vocabulary=["a", "b", "a b"])
print(ng(["a b c"]).numpy())
