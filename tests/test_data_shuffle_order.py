"""tf.data shuffle orders bit-equal to TF 2.21's ShuffleDataset (Philox words, ring buffer, seed generator).

Expected orders were recorded from TensorFlow 2.21 (CPU)."""

import tapeflow as tf


def _ints(ds) -> list:
    return [int(x) for x in ds]


def test_reshuffling_seed_generator_gives_each_iteration_new_seeds():
    tf.random.set_seed(0)
    ds = tf.data.Dataset.range(10).shuffle(4, seed=7)
    assert _ints(ds) == [3, 4, 5, 2, 6, 7, 8, 1, 9, 0]
    assert _ints(ds) == [1, 0, 3, 2, 4, 8, 9, 7, 6, 5]


def test_fixed_seed_shuffle_repeats_its_order():
    tf.random.set_seed(0)
    ds = tf.data.Dataset.range(10).shuffle(4, seed=7, reshuffle_each_iteration=False)
    assert _ints(ds) == _ints(ds) == [1, 2, 5, 4, 0, 6, 8, 3, 7, 9]
    tf.random.set_seed(42)
    ds = tf.data.Dataset.range(8).map(lambda x: x * 2).shuffle(3, seed=11, reshuffle_each_iteration=False)
    assert _ints(ds) == [4, 2, 0, 8, 10, 14, 12, 6]


def test_buffer_larger_than_dataset_and_repeat():
    tf.random.set_seed(0)
    assert _ints(tf.data.Dataset.range(10).shuffle(20, seed=7)) == [9, 1, 0, 8, 4, 5, 3, 6, 2, 7]
    ds = tf.data.Dataset.range(6).shuffle(4, seed=7).repeat(3)
    assert _ints(ds) == [3, 4, 5, 1, 0, 2, 1, 0, 3, 5, 4, 2, 0, 1, 4, 2, 5, 3]
    ds = tf.data.Dataset.range(6).shuffle(4, seed=7, reshuffle_each_iteration=False).repeat(3)
    assert _ints(ds) == [1, 2, 5, 0, 3, 4] * 3
    batches = [list(b.numpy()) for b in tf.data.Dataset.range(6).shuffle(4, seed=7).batch(2).repeat(2)]
    assert batches == [[3, 4], [5, 1], [0, 2], [1, 0], [3, 5], [4, 2]]


def test_global_seed_only_and_generator_input():
    tf.random.set_seed(5)
    assert _ints(tf.data.Dataset.range(6).shuffle(4)) == [1, 0, 4, 2, 5, 3]
    assert _ints(tf.data.Dataset.range(6).shuffle(4)) == [3, 0, 4, 1, 2, 5]
    tf.random.set_seed(42)
    assert _ints(tf.data.Dataset.range(30).shuffle(7, seed=3).take(12)) == [0, 3, 1, 2, 10, 8, 5, 11, 6, 7, 15, 13]

    def gen():
        yield from range(12)

    g = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64)).shuffle(5)
    assert _ints(g) == [0, 1, 2, 3, 4, 7, 8, 11, 5, 10, 6, 9]
    assert _ints(g) == [3, 2, 6, 1, 8, 7, 5, 10, 0, 9, 11, 4]
    assert _ints(tf.data.Dataset.range(8).shuffle(100)) == [4, 3, 1, 5, 0, 7, 6, 2]


def test_shuffle_reads_its_input_lazily():
    seen = []

    def gen():
        for i in range(6):
            seen.append(i)
            yield i

    it = iter(tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64)).shuffle(3, seed=1))
    next(it)
    assert seen == [0, 1, 2]  # the buffer is filled, the next element is read only on the next call
    next(it)
    assert seen == [0, 1, 2, 3]


def test_unseeded_shuffle_is_a_permutation():
    tf.random.set_seed(None)
    assert sorted(_ints(tf.data.Dataset.range(50).shuffle(10))) == list(range(50))


def test_dataset_random_is_tf_philox_words():
    tf.random.set_seed(0)
    ds = tf.data.Dataset.random(seed=7).take(5)
    assert _ints(ds) == _ints(ds) == [3522976733, 2522621249, 727699955, 834431153, 2750865741]
    assert ds.element_spec == tf.TensorSpec([], tf.int64)
    ds = tf.data.Dataset.random(seed=7, rerandomize_each_iteration=True).take(3)
    assert _ints(ds) == [2175928459, 1872770247, 3534028343]
    assert _ints(ds) == [4286344685, 2849143380, 692020693]


def test_sample_from_datasets_order_as_tf():
    tf.random.set_seed(0)
    a = tf.data.Dataset.range(0, 100).take(20)
    b = tf.data.Dataset.range(100, 200).take(20)
    got = _ints(tf.data.Dataset.sample_from_datasets([a, b], [0.3, 0.7], seed=5).take(15))
    assert got == [100, 101, 102, 0, 103, 104, 105, 106, 1, 107, 2, 108, 109, 110, 111]
    got = _ints(tf.data.Dataset.sample_from_datasets([a, b], seed=5).take(15))
    assert got == [0, 100, 101, 1, 2, 102, 3, 4, 5, 103, 6, 104, 105, 106, 7]
    tf.random.set_seed(3)
    a, b = tf.data.Dataset.range(5), tf.data.Dataset.range(10, 13)
    sample = tf.data.Dataset.sample_from_datasets
    assert _ints(sample([a, b], weights=tf.constant([0.5, 0.5]), seed=2)) == [10, 0, 11, 1, 2, 3, 4, 12]
    assert _ints(sample([a, b], weights=[0.0, 1.0], seed=2)) == [10, 11, 12]  # zero-weight inputs dropped
    assert _ints(sample([a, b], weights=[0.2, 0.8], seed=2, stop_on_empty_dataset=True)) == [10, 11, 12]
    weights = tf.data.Dataset.from_tensors([0.1, 0.9]).repeat()
    assert _ints(sample([a, b], weights=weights, seed=2)) == [10, 11, 12, 0, 1, 2, 3, 4]


def test_list_files_shuffle_as_tf(tmp_path):
    for c in "abcdefg":
        (tmp_path / f"{c}.txt").write_text("")
    tf.random.set_seed(3)
    names = [x.numpy().decode()[-5:] for x in tf.data.Dataset.list_files(str(tmp_path / "*.txt"))]
    assert names == ["b.txt", "d.txt", "f.txt", "e.txt", "a.txt", "c.txt", "g.txt"]
    names = [x.numpy().decode()[-5:] for x in tf.data.Dataset.list_files(str(tmp_path / "*.txt"), seed=9)]
    assert names == ["g.txt", "d.txt", "e.txt", "b.txt", "c.txt", "f.txt", "a.txt"]
    a, b = tf.data.Dataset.range(5), tf.data.Dataset.range(10, 13)  # the second op seed of global seed 3
    assert _ints(tf.data.Dataset.sample_from_datasets([a, b])) == [10, 11, 12, 0, 1, 2, 3, 4]


def _pass_number(make, use) -> int:
    """Which pass of ``make()``'s dataset a fresh ``for`` loop sees after ``use(ds)`` (1: no pass drawn)."""
    orders = []
    ds = make()
    for _ in range(6):
        orders.append(_ints(ds))
    ds = make()
    use(ds)
    return orders.index(_ints(ds)) + 1


def _shuffled():
    tf.random.set_seed(0)
    return tf.data.Dataset.range(20).shuffle(5)


def test_iter_draws_the_shuffle_seeds_when_created():
    # TF's iterator draws a reshuffling shuffle's seeds when it is created, even if never read; it creates
    # its inputs' iterators then too, except a shuffle's input and a concatenation's second input (pinned
    # from TF 2.21)
    wrappers = {"plain": lambda d: d, "repeat()": lambda d: d.repeat(), "batch.map.prefetch":
                lambda d: d.batch(3).map(lambda v: v * 2).prefetch(2),
                "zip second": lambda d: tf.data.Dataset.zip((tf.data.Dataset.range(3), d)),
                "concat second": lambda d: tf.data.Dataset.range(3).concatenate(d),
                "concat first": lambda d: d.concatenate(tf.data.Dataset.range(3)),
                "filter": lambda d: d.filter(lambda v: v > 2), "shuffle again": lambda d: d.shuffle(3),
                "flat_map": lambda d: d.flat_map(lambda v: tf.data.Dataset.from_tensors(v))}
    got = {name: _pass_number(_shuffled, lambda d, w=w: iter(w(d))) for name, w in wrappers.items()}
    assert got == {"plain": 2, "repeat()": 2, "batch.map.prefetch": 2, "zip second": 2, "concat second": 1,
                   "concat first": 2, "filter": 2, "shuffle again": 1, "flat_map": 2}
    ds = _shuffled()
    first, second = _ints(ds), _ints(ds)
    ds = _shuffled()
    a, b = iter(ds), iter(ds)  # each drew its pass at creation: the order of reading does not matter
    assert _ints(b) == second and _ints(a) == first


def test_keras_fit_makes_the_next_passs_iterator_at_each_epoch_end():
    # Keras 3's EpochIterator makes a fresh iterator per epoch and, after a pass of known length, the
    # next one at once: fit(epochs=2) draws passes 1-4, evaluate and predict 1-2 (pinned from TF 2.21)
    def make():
        tf.random.set_seed(0)
        x = tf.data.Dataset.range(20)
        return tf.data.Dataset.zip((x.map(lambda v: tf.cast(v, tf.float32)[None]), x)).shuffle(5).batch(4)

    def ints(ds):
        return [int(v) for _, y in ds for v in y]

    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    orders = []
    ds = make()
    for _ in range(6):
        orders.append(ints(ds))
    for use, expected in ((lambda d: model.fit(d, epochs=2, verbose=0), 5),
                          (lambda d: model.fit(d.repeat(), epochs=2, steps_per_epoch=3, verbose=0), 3),
                          (lambda d: model.evaluate(d, verbose=0), 3),
                          (lambda d: model.evaluate(d.repeat(), steps=3, verbose=0), 2),
                          (lambda d: model.predict(d, verbose=0), 3)):
        ds = make()
        use(ds)
        assert orders.index(ints(ds)) + 1 == expected


def test_keras_fit_under_a_strategy_builds_on_a_batch_first():
    # a model made in a strategy's scope: Keras 3 reads one batch of a fresh iterator before fit/evaluate
    # (its symbolic build), so training starts on the next pass (pinned from TF 2.21, MirroredStrategy on CPU)
    def make():
        tf.random.set_seed(0)
        x = tf.data.Dataset.range(20)
        return tf.data.Dataset.zip((x.map(lambda v: tf.cast(v, tf.float32)[None]), x)).shuffle(5).batch(4)

    def ints(ds):
        return [int(v) for _, y in ds for v in y]

    ds = make()
    orders = [ints(ds) for _ in range(7)]
    with tf.distribute.MirroredStrategy().scope():
        model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
        model.compile("sgd", "mse")
    for use, expected in ((lambda d: model.fit(d, epochs=1, verbose=0), 4),
                          (lambda d: model.fit(d, epochs=2, verbose=0), 6),
                          (lambda d: model.evaluate(d, verbose=0), 4), (lambda d: model.predict(d, verbose=0), 3)):
        ds = make()
        use(ds)
        assert orders.index(ints(ds)) + 1 == expected
