"""A TF2 program checked under ``mpirun -n N`` and in one process (tests/test_distribute_mpi.py).

Written as TF's distributed-training tutorials write it, with ``import tapeflow as tf``. Every rank
writes what it ended with to ``OUT/<check>_rank<R>.npz``; the test compares ranks with each other and
with the single-process run (same global batch). ``python train_checks.py OUT [what...]``.
"""

import os
import sys

import numpy as np

import tapeflow as tf

OUT = sys.argv[1]
WHAT = sys.argv[2:] or ["fit", "loop", "sparse", "lso", "data", "tail", "logsync", "tutorial", "syncbn"]
os.makedirs(OUT, exist_ok=True)

strategy = tf.distribute.MultiWorkerMirroredStrategy()
RANK = strategy.cluster_resolver.task_id or 0
N = strategy.num_replicas_in_sync
GLOBAL_BATCH = 8
rng = np.random.default_rng(1)
X = rng.normal(size=(37, 5))  # 37: the last global batch (5) does not split evenly over 2 or 4 ranks
Y = (X @ rng.normal(size=(5, 1)) + 0.1 * rng.normal(size=(37, 1)) > 0).astype(np.int64).ravel()


def save(name, *weights, **arrays):
    arrays.update({f"w{i}": w for i, w in enumerate(weights)})
    np.savez(os.path.join(OUT, f"{name}_rank{RANK}.npz"), **arrays)


def fault_time():
    """Writes when this rank fails (the test measures how long the job takes to end after it)."""
    import time

    with open(os.path.join(OUT, "fault_time"), "w") as f:
        f.write(repr(time.time()))


def make_model(dtype):
    return tf.keras.Sequential(
        [
            tf.keras.Input((5,), dtype=dtype),
            tf.keras.layers.Dense(16, activation="relu", dtype=dtype),
            tf.keras.layers.Dense(2, dtype=dtype),
        ]
    )


if "fit" in WHAT:
    for dtype in ("float64", "float32"):
        tf.keras.utils.set_random_seed(0)
        with strategy.scope():
            model = make_model(dtype)
            model.compile(
                optimizer=tf.keras.optimizers.Adam(0.01),
                loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"],
            )
        # progress bar on the chief only, as tutorials write it (the other ranks must still agree on the logs)
        verbose = 0 if RANK != 0 else (2 if dtype == "float64" else 1)
        callbacks = [
            tf.keras.callbacks.ModelCheckpoint(
                os.path.join(OUT, f"best_{dtype}.weights.h5"),
                monitor="loss",
                save_best_only=True,
                save_weights_only=True,
            ),
            tf.keras.callbacks.EarlyStopping(monitor="loss", patience=0),
        ]
        history = model.fit(
            X.astype(dtype), Y, batch_size=GLOBAL_BATCH, epochs=3, shuffle=True, verbose=verbose, callbacks=callbacks
        )
        model.save(os.path.join(OUT, f"model_{dtype}.keras"))
        ev = model.evaluate(X.astype(dtype), Y, batch_size=GLOBAL_BATCH, verbose=0, return_dict=True)
        pred = model.predict(X.astype(dtype), batch_size=GLOBAL_BATCH, verbose=0)
        save(
            f"fit_{dtype}",
            *model.get_weights(),
            loss=history.history["loss"],
            accuracy=history.history["accuracy"],
            eval_loss=ev["loss"],
            eval_acc=ev["accuracy"],
            pred=pred,
        )

if "loop" in WHAT:
    # The custom training loop of TF's "Custom training with tf.distribute.Strategy" tutorial.
    tf.keras.utils.set_random_seed(0)
    dataset = tf.data.Dataset.from_tensor_slices((X.astype("float32"), Y)).batch(GLOBAL_BATCH)
    dist_dataset = strategy.experimental_distribute_dataset(dataset)
    with strategy.scope():
        model = make_model("float32")
        model.layers[0].kernel_regularizer = None
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

        def compute_loss(labels, predictions):
            per_example_loss = loss_object(labels, predictions)
            return tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH)

        optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)
        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
        checkpoint = tf.train.Checkpoint(optimizer=optimizer, model=model)
        manager = tf.train.CheckpointManager(checkpoint, os.path.join(OUT, "ckpt"), max_to_keep=2)

    def train_step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(features, training=True)
            loss = compute_loss(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_accuracy.update_state(labels, predictions)
        return loss

    @tf.function
    def distributed_train_step(dataset_inputs):
        per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    losses, accs, seen_ckpt = [], [], []
    for _epoch in range(3):
        total_loss, num_batches = 0.0, 0
        for x in dist_dataset:
            total_loss += distributed_train_step(x)
            num_batches += 1
        losses.append(float(total_loss / num_batches))
        accs.append(float(train_accuracy.result()))
        train_accuracy.reset_state()
        path = manager.save()
        # written by rank 0 only; save() returns on every rank after a barrier, so every rank already sees it
        seen_ckpt.append(
            tf.train.latest_checkpoint(os.path.join(OUT, "ckpt")) == path and len(tf.train.list_variables(path)) > 4
        )
    save(
        "loop",
        *model.get_weights(),
        loss=losses,
        accuracy=accs,
        slots=np.concatenate([v.numpy().ravel() for v in optimizer.variables]),
        seen_ckpt=seen_ckpt,
    )

if "sparse" in WHAT:
    # Two Embeddings: their gradients are IndexedSlices, all-gathered together, never densified.
    tf.keras.utils.set_random_seed(0)
    ids = np.random.default_rng(2).integers(0, 10, size=(24, 3))
    target = np.random.default_rng(3).normal(size=(24, 4)).astype("float32")
    with strategy.scope():
        emb = tf.keras.layers.Embedding(10, 4)
        emb.build((None, 3))
        emb2 = tf.keras.layers.Embedding(10, 4)
        emb2.build((None, 3))
        opt = tf.keras.optimizers.Adagrad(0.5)
    seen_sparse = []

    @tf.function
    def sparse_step(i, t):
        def step(i, t):
            with tf.GradientTape() as tape:
                h = tf.reduce_mean(emb(i), 1) + 0.5 * tf.reduce_mean(emb2(i[:, ::-1] % 7), 1)
                loss = tf.nn.compute_average_loss(tf.reduce_sum((h - t) ** 2, 1), global_batch_size=12)
            grads = tape.gradient(loss, [emb.embeddings, emb2.embeddings])
            seen_sparse.extend(isinstance(g, tf.IndexedSlices) for g in grads)
            opt.apply_gradients(zip(grads, [emb.embeddings, emb2.embeddings]))
            return loss

        return strategy.reduce("SUM", strategy.run(step, args=(i, t)), axis=None)

    ds = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((ids, target)).batch(12))
    comm = strategy._comm
    reduced, calls = [], []  # what travels between the ranks: element counts of each reduction; MPI calls

    def spy(method, log):
        def call(arrays, *args, **kwargs):
            log.append([int(np.size(a)) for a in arrays] if isinstance(arrays, (list, tuple)) else [np.size(arrays)])
            return method(arrays, *args, **kwargs)

        return call

    class CountingComm:  # MPI's communicator, counting the gathers
        def __init__(self, inner):
            self._inner = inner

        def __getattr__(self, name):
            attr = getattr(self._inner, name)
            if name.startswith("Allgather"):
                def counted(*a, **k):
                    calls.append(name)
                    return attr(*a, **k)

                return counted
            return attr

    if comm.is_mpi:
        comm.comm = CountingComm(comm.comm)
    comm.allreduce = spy(comm.allreduce, reduced)
    try:
        for _ in range(2):
            for i, t in ds:
                sparse_step(i, t)
    finally:
        del comm.allreduce
        if comm.is_mpi:
            comm.comm = comm.comm._inner
    save(
        "sparse",
        emb.embeddings.numpy(),
        emb2.embeddings.numpy(),
        sparse=np.array(seen_sparse),
        reduced=np.array([n for call in reduced for n in call]),
        gathers=len(calls),
    )

if "lso" in WHAT:  # dynamic loss scaling: one rank's inf gradient makes every rank skip the step together
    with strategy.scope():
        w = tf.Variable(np.ones(3, np.float32))
        lso = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))

    @tf.function
    def lso_step(bad):
        def step(bad):
            with tf.GradientTape() as tape:
                loss = lso.scale_loss(tf.reduce_sum(w * w) * bad)
            lso.apply_gradients([(tape.gradient(loss, w), w)])

        strategy.run(step, args=(bad,))

    for i in range(3):
        lso_step(tf.constant(np.inf if (i == 1 and RANK == N - 1) else 1.0, tf.float32))
    save("lso", w.numpy(), scale=lso.dynamic_scale.numpy())

if "data" in WHAT:
    seen = []
    for batch in strategy.experimental_distribute_dataset(tf.data.Dataset.range(37).batch(GLOBAL_BATCH)):
        seen.append(strategy.gather(batch, axis=0).numpy())
    local = np.concatenate(
        list(strategy.experimental_distribute_dataset(tf.data.Dataset.range(37).batch(GLOBAL_BATCH)))
    )

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(GLOBAL_BATCH)
        d = tf.data.Dataset.range(40).shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return d.batch(batch)

    from_fn = np.concatenate(list(strategy.distribute_datasets_from_function(dataset_fn)))
    sums = strategy.reduce("SUM", tf.constant([1.0, float(RANK)]), axis=None)
    means = strategy.reduce("MEAN", tf.constant([[1.0 + RANK], [3.0]]), axis=0)
    ctx_sum = strategy.run(lambda: tf.distribute.get_replica_context().all_reduce("MEAN", tf.constant(float(RANK))))
    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.range(37).batch(GLOBAL_BATCH))

    @tf.function
    def fn_epoch(dataset):  # the tutorial's distributed_train_epoch: a loop over the dataset in the function
        total = tf.constant(0, tf.int64)
        for x in dataset:
            total += strategy.reduce("SUM", strategy.run(tf.reduce_sum, args=(x * x,)), axis=None)
        return total

    @tf.function
    def fn_next(iterator):  # the CTL tutorial's train_step(iterator): next() inside the function
        return strategy.reduce("SUM", strategy.run(tf.reduce_sum, args=(next(iterator),)), axis=None)

    @tf.function
    def fn_optional(iterator):  # the distributed input tutorial's get_next_as_optional loop
        total, i = tf.constant(0, tf.int64), tf.constant(0)
        while i < 10:
            i += 1
            optional = iterator.get_next_as_optional()
            if not optional.has_value():
                break
            total += strategy.reduce("SUM", strategy.run(tf.reduce_sum, args=(optional.get_value(),)), axis=None)
        return total

    iterator = iter(dist)
    in_function = [int(fn_epoch(dist)), int(fn_epoch(dist))] + [int(fn_next(iterator)) for _ in range(5)]
    in_function.append(int(fn_optional(iter(dist))))
    vff = strategy.experimental_distribute_values_from_function(
        lambda ctx: (ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync))
    save(
        "data",
        vff=vff,
        in_function=in_function,
        seen=np.concatenate(seen),
        local=local,
        from_fn=from_fn,
        sums=sums.numpy(),
        means=means.numpy(),
        ctx=ctx_sum.numpy(),
        nrep=N,
    )

if "reuse" in WHAT:  # eager reductions reuse their result buffers only while nobody holds them
    SUM = tf.distribute.ReduceOp.SUM
    m = tf.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3) + RANK)
    held = strategy.reduce(SUM, tf.constant([1.0, float(RANK)]), axis=None)  # kept across the next calls
    held_np = strategy.reduce(SUM, tf.constant([2.0, float(RANK)]), axis=None).numpy()  # only its array kept
    for _ in range(3):
        strategy.reduce(SUM, tf.constant([5.0, 5.0]), axis=None)  # dropped: its buffer is reused
    again = [float(strategy.reduce(SUM, tf.constant(float(RANK)), axis=None)) for _ in range(3)]  # 0-d, reused
    as_f64 = strategy.reduce(SUM, tf.constant([1.0, float(RANK)], tf.float64), axis=None)  # same shape, new dtype

    @tf.function
    def compiled_transposed(x):
        return strategy.reduce(SUM, tf.transpose(x), axis=None)

    kernel, bias = tf.constant(np.ones((3, 2), np.float32) * (RANK + 1)), tf.constant(np.ones(2, np.float32))
    g1 = strategy._aggregate_gradients([kernel, bias])  # kept
    g2 = strategy._aggregate_gradients([kernel * 2, bias * 2])  # a new buffer: g1 still holds the last one
    del g2
    g3 = strategy._aggregate_gradients([kernel * 3, bias * 3])  # g2's buffer, free again
    g64 = strategy._aggregate_gradients([tf.cast(kernel, tf.float64), tf.cast(bias, tf.float64)])  # same shapes
    # eager steps again and again: each result's tensors are the buffer's own while nobody holds them
    import weakref

    steps, kept_np, objects, ref = [], None, set(), None
    for i in range(6):
        out = strategy._aggregate_gradients([kernel * (i + 1), bias])
        objects.add(id(out[0]))
        steps.append(float(out[0].numpy()[0, 0]))
        if i == 5:
            weak_reused = ref() is out[0]
        if i == 2:
            kept_np = out[0].numpy()  # a kept view: the next steps reduce elsewhere
        if i == 4:
            ref = weakref.ref(out[0])  # a weakly referenced tensor is not reused (a Keras mask would follow it)
        del out
    # an eager apply_gradients: the optimizer's checked gradient arrays, one fused allreduce in a kept buffer
    sgd_vars = [tf.Variable(np.zeros((3, 2), np.float32)), tf.Variable(np.zeros(2, np.float32))]
    sgd = tf.keras.optimizers.SGD(1.0)
    for i in range(3):
        sgd.apply_gradients(zip([kernel * (i + 1), bias], sgd_vars))
    total = strategy._sum_gradient_arrays
    first = total([kernel.numpy(), bias.numpy()], sgd_vars)
    was = first[0]
    del first
    second = total([kernel.numpy() * 2, bias.numpy()], sgd_vars)  # the same buffer: nobody held the first
    array_reused = np.shares_memory(second[0], was)
    del was
    third = total([kernel.numpy() * 3, bias.numpy()], sgd_vars)  # `second` is held: elsewhere
    array_held = [float(second[0][0, 0]), float(third[0][0, 0]), bool(np.shares_memory(second[0], third[0]))]
    save(
        "reuse",
        sgd=np.concatenate([v.numpy().ravel() for v in sgd_vars]),
        array_reused=array_reused,
        array_held=array_held,
        steps=steps,
        kept_np=kept_np,
        reused=len(objects) < 6,
        weak_reused=weak_reused,
        held=held.numpy(),
        held_np=held_np,
        again=again,
        f64=as_f64.numpy(),
        f64_dtype=str(as_f64.dtype.name),
        transposed=strategy.reduce(SUM, tf.transpose(m), axis=None).numpy(),
        transposed_ctx=strategy.run(lambda: tf.distribute.get_replica_context().all_reduce(SUM, tf.transpose(m))),
        compiled=compiled_transposed(m).numpy(),
        compiled2=compiled_transposed(m).numpy(),
        g1=np.concatenate([g.numpy().ravel() for g in g1]),
        g3=np.concatenate([g.numpy().ravel() for g in g3]),
        g64=np.concatenate([g.numpy().ravel() for g in g64]),
        g64_dtype=str(g64[0].dtype.name),
    )

if "tail" in WHAT:  # 33 examples, global batch 8: the last batch has one example, so some ranks get none
    XT, YT = X[:33].astype("float32"), Y[:33]
    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = make_model("float32")
        model.compile(
            optimizer=tf.keras.optimizers.SGD(0.1),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
    history = model.fit(XT, YT, batch_size=GLOBAL_BATCH, epochs=2, shuffle=False, verbose=0)
    fit_weights = model.get_weights()
    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = make_model("float32")
        optimizer = tf.keras.optimizers.SGD(0.1)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    @tf.function
    def tail_step(batch):
        def step(batch):
            x, y = batch
            with tf.GradientTape() as tape:
                per_example_loss = loss_object(y, model(x, training=True))
                loss = tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH)
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss

        return strategy.reduce("SUM", strategy.run(step, args=(batch,)), axis=None)

    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((XT, YT)).batch(GLOBAL_BATCH))
    rows = [int(x.shape[0]) for x, _ in dist]
    losses = [float(tail_step(b)) for b in dist]
    save("tail", *fit_weights, *model.get_weights(), loss=history.history["loss"], loop_loss=losses, rows=rows)

if "dropout" in WHAT:  # Keras Dropout draws the global batch's mask and keeps each rank's rows: one process's masks
    def dropout_model():
        tf.keras.utils.set_random_seed(0)
        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(16, activation="relu"),
                                         tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(2)])
            model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                          loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    XD = X.astype("float32")
    model = dropout_model()
    history = model.fit(XD, Y, batch_size=GLOBAL_BATCH, epochs=2, verbose=0)  # (37: an uneven last batch)
    fit_weights = model.get_weights()
    model = dropout_model()
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    @tf.function
    def dropout_step(batch):
        def step(batch):
            x, y = batch
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_object(y, model(x, training=True)),
                                                  global_batch_size=GLOBAL_BATCH)
            grads = tape.gradient(loss, model.trainable_variables)
            model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return strategy.reduce("SUM", strategy.run(step, args=(batch,)), axis=None)

    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((XD, Y)).batch(GLOBAL_BATCH))
    losses = [float(dropout_step(b)) for b in dist]
    save("dropout", *fit_weights, *model.get_weights(), loss=history.history["loss"], loop_loss=losses)

if "logsync" in WHAT:  # per-batch logs (a callback reads them): all metrics over all ranks in one collective a batch
    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = make_model("float32")
        model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy", tf.keras.metrics.SparseTopKCategoricalAccuracy(k=1, name="top1")])
    batch_logs = []

    class Logs(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            batch_logs.append([logs["loss"], logs["accuracy"], logs["top1"]])

    reductions = []
    comms = {id(c): c for c in (strategy._comm, strategy._comm.metrics)}.values()  # (metrics: their own comm)

    def counting(method):
        def counted(arrays, *args, **kwargs):
            reductions.append(len(arrays))
            return method(arrays, *args, **kwargs)

        return counted

    model.fit(X[:32].astype("float32"), Y[:32], batch_size=GLOBAL_BATCH, epochs=1, verbose=0, callbacks=[Logs()])
    for comm in comms:
        comm.allreduce = counting(comm.allreduce)  # the second fit: traced already
    try:
        model.fit(X[:32].astype("float32"), Y[:32], batch_size=GLOBAL_BATCH, epochs=1, verbose=0, callbacks=[Logs()])
    finally:
        for comm in comms:
            del comm.allreduce
    save("logsync", logs=np.array(batch_logs), reductions=np.array(reductions))

if "tutorial" in WHAT:  # TF's multi-worker tutorials, as written there (Keras fit on a dataset, then a custom loop)
    tf.keras.utils.set_random_seed(0)
    task_type, task_id = strategy.cluster_resolver.task_type, strategy.cluster_resolver.task_id
    images = np.random.default_rng(4).random((96, 10, 10)).astype(np.float32)
    labels = (images[:, :5].sum((1, 2)) > images[:, 5:].sum((1, 2))).astype(np.int64)

    def _is_chief(task_type, task_id):
        return task_type is None or task_type == "chief" or (task_type == "worker" and task_id == 0)

    def _get_temp_dir(dirpath, task_id):
        temp_dir = os.path.join(dirpath, "workertemp_" + str(task_id))
        tf.io.gfile.makedirs(temp_dir)
        return temp_dir

    def write_filepath(filepath, task_type, task_id):
        dirpath, base = os.path.dirname(filepath), os.path.basename(filepath)
        if not _is_chief(task_type, task_id):
            dirpath = _get_temp_dir(dirpath, task_id)
        return os.path.join(dirpath, base)

    def build_cnn_model(regularizer=None):
        return tf.keras.Sequential([
            tf.keras.Input(shape=(10, 10)),
            tf.keras.layers.Reshape(target_shape=(10, 10, 1)),
            tf.keras.layers.Conv2D(4, 3, activation="relu", kernel_regularizer=regularizer),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(2, kernel_regularizer=regularizer),
        ])

    global_batch_size = 16
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(96).repeat().batch(global_batch_size)
    with strategy.scope():
        model = build_cnn_model()
        model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      optimizer=tf.keras.optimizers.SGD(learning_rate=0.1), metrics=["accuracy"])
    callbacks = [tf.keras.callbacks.BackupAndRestore(backup_dir=os.path.join(OUT, "tutorial_backup")),
                 tf.keras.callbacks.CSVLogger(os.path.join(OUT, "tutorial_log.csv")),
                 tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=10.0)]
    history = model.fit(dataset, epochs=2, steps_per_epoch=3, callbacks=callbacks, verbose=0)
    model_path = os.path.join(OUT, "tutorial_model", "model.keras")
    write_model_path = write_filepath(model_path, task_type, task_id)
    model.save(write_model_path)
    if not _is_chief(task_type, task_id):
        tf.io.gfile.rmtree(os.path.dirname(write_model_path))
    fit_weights = model.get_weights()
    fit_lr = history.history["learning_rate"] + [float(np.asarray(model.optimizer.learning_rate))]

    def dataset_fn(global_batch_size, input_context):
        batch_size = input_context.get_per_replica_batch_size(global_batch_size)
        d = tf.data.Dataset.from_tensor_slices((images, labels))
        d = d.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return d.batch(batch_size)

    with strategy.scope():
        model = build_cnn_model(tf.keras.regularizers.L2(1e-2))
        dist_dataset = strategy.distribute_datasets_from_function(lambda ctx: dataset_fn(global_batch_size, ctx))
        optimizer = tf.keras.optimizers.RMSprop(learning_rate=0.01)
        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    @tf.function
    def train_step(iterator):
        def step_fn(inputs):
            x, y = inputs
            with tf.GradientTape() as tape:
                predictions = model(x, training=True)
                per_example_loss = tf.keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True, reduction=tf.keras.losses.Reduction.NONE)(y, predictions)
                loss = tf.nn.compute_average_loss(per_example_loss)
                if model.losses:
                    loss += tf.nn.scale_regularization_loss(tf.add_n(model.losses))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            train_accuracy.update_state(y, predictions)
            return loss

        per_replica_losses = strategy.run(step_fn, args=(next(iterator),))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    checkpoint_dir = os.path.join(OUT, "tutorial_ckpt")
    epoch = tf.Variable(initial_value=tf.constant(0, dtype=tf.dtypes.int64), name="epoch")
    step_in_epoch = tf.Variable(initial_value=tf.constant(0, dtype=tf.dtypes.int64), name="step_in_epoch")
    checkpoint = tf.train.Checkpoint(model=model, epoch=epoch, step_in_epoch=step_in_epoch)
    write_checkpoint_dir = write_filepath(checkpoint_dir, task_type, task_id)
    checkpoint_manager = tf.train.CheckpointManager(checkpoint, directory=write_checkpoint_dir, max_to_keep=1)
    losses, accs = [], []
    while epoch.numpy() < 2:
        iterator = iter(dist_dataset)
        total_loss, num_batches = 0.0, 0
        while step_in_epoch.numpy() < 5:
            total_loss += train_step(iterator)
            num_batches += 1
            step_in_epoch.assign_add(1)
        losses.append(float(total_loss / num_batches))
        accs.append(float(train_accuracy.result()))
        train_accuracy.reset_state()
        checkpoint_manager.save()
        if not _is_chief(task_type, task_id):
            tf.io.gfile.rmtree(write_checkpoint_dir)
        epoch.assign_add(1)
        step_in_epoch.assign(0)
    save("tutorial", *fit_weights, *model.get_weights(), loss=history.history["loss"], lr=fit_lr,
         accuracy=history.history["accuracy"], loop_loss=losses, loop_acc=accs)

if "tfconfig" in WHAT:  # a TF_CONFIG in the environment (the test sets the same one on every rank, as mpirun -x)
    import json

    tf_config = json.loads(os.environ["TF_CONFIG"])
    num_workers = len(tf_config["cluster"]["worker"])
    per_worker_batch_size = GLOBAL_BATCH // num_workers
    global_batch_size = per_worker_batch_size * num_workers
    communication_options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING
    )
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=communication_options)
    task_type, task_id, cluster_spec = (
        strategy.cluster_resolver.task_type,
        strategy.cluster_resolver.task_id,
        strategy.cluster_resolver.cluster_spec(),
    )
    is_chief = task_type == "chief" or (
        task_type == "worker" and task_id == 0 and "chief" not in cluster_spec.as_dict()
    )
    images = np.random.default_rng(5).random((64, 6)).astype(np.float32)
    labels = (images[:, :3].sum(1) > images[:, 3:].sum(1)).astype(np.int64)

    def make_dataset(batch_size, policy=None):
        d = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(64, seed=3).repeat().batch(batch_size)
        if policy is not None:
            options = tf.data.Options()
            options.experimental_distribute.auto_shard_policy = policy
            d = d.with_options(options)
        return d

    def build_and_compile(seed):
        tf.keras.utils.set_random_seed(seed)
        with strategy.scope():
            model = tf.keras.Sequential(
                [tf.keras.Input((6,)), tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(2)]
            )
            model.compile(
                loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                optimizer=tf.keras.optimizers.SGD(learning_rate=0.2),
                metrics=["accuracy"],
            )
        return model

    model = build_and_compile(0)  # AutoShardPolicy.DATA: each worker its share of every global batch
    h = model.fit(
        make_dataset(global_batch_size, tf.data.experimental.AutoShardPolicy.DATA),
        epochs=2,
        steps_per_epoch=3,
        verbose=0,
    )
    results = {f"data_w{i}": w for i, w in enumerate(model.get_weights())}
    results["data_loss"] = h.history["loss"]
    # AutoShardPolicy.OFF: every worker gets the whole dataset; each step, a 1/num_replicas piece of a global batch,
    # the same one on every worker. One process trains the same as with batches of that piece's size.
    pieces = [1] if num_workers > 1 else [2, 4]
    for k in pieces:
        model = build_and_compile(1)
        if num_workers > 1:
            h = model.fit(
                make_dataset(global_batch_size, tf.data.experimental.AutoShardPolicy.OFF),
                epochs=1,
                steps_per_epoch=4,
                verbose=0,
            )
            name = "off"
        else:
            h = model.fit(make_dataset(global_batch_size // k), epochs=1, steps_per_epoch=4, verbose=0)
            name = f"off{k}"
        results.update({f"{name}_w{i}": w for i, w in enumerate(model.get_weights())})
        results[f"{name}_loss"] = h.history["loss"]
    finite = tf.data.Dataset.from_tensor_slices(np.arange(12)).batch(6)  # OFF in a custom loop: all of it, in pieces
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    dist = strategy.experimental_distribute_dataset(finite.with_options(options))
    off_pieces = [strategy.experimental_local_results(x)[0].numpy().tolist() for x in dist]
    save(
        "tfconfig",
        task=np.array([str(task_type), str(task_id)]),
        chief=is_chief,
        device=strategy.extended.worker_devices[0],
        spec=json.dumps(cluster_spec.as_dict(), sort_keys=True),
        off_pieces=json.dumps(off_pieces),
        off_len=len(dist),
        nrep=strategy.num_replicas_in_sync,
        **results,
    )

if "crash" in WHAT:  # resume check: rank N-1 fails in the 2nd epoch, after the 1st epoch's checkpoint
    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = make_model("float32")
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    ckdir = os.path.join(OUT, "resume")
    ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer, epoch=tf.Variable(0))
    manager = tf.train.CheckpointManager(ckpt, ckdir, max_to_keep=1)
    manager.restore_or_initialize()
    crash = os.environ.get("CRASH") == "1"

    class Crash(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if crash and int(ckpt.epoch.numpy()) == 1 and batch == 2 and RANK == N - 1:
                fault_time()
                raise RuntimeError(f"injected failure on rank {RANK}")

    while int(ckpt.epoch.numpy()) < 3:
        model.fit(
            X.astype("float32"), Y, batch_size=GLOBAL_BATCH, epochs=1, shuffle=False, verbose=0, callbacks=[Crash()]
        )
        ckpt.epoch.assign_add(1)
        manager.save()
    save("resume", *model.get_weights())

if "killsave" in WHAT:  # rank 0 killed (SIGKILL) halfway through writing a checkpoint; the restarted job resumes
    import signal

    from tapeflow.train import checkpoint as checkpoint_lib

    with strategy.scope():
        w = tf.Variable(np.arange(4.0))
    ckpt = tf.train.Checkpoint(w=w)
    manager = tf.train.CheckpointManager(ckpt, os.path.join(OUT, "killsave"), max_to_keep=2)
    restored = manager.restore_or_initialize()
    if restored is None:
        manager.save()  # ckpt-1: complete
        w.assign_add(tf.ones(4, tf.float64))
        if os.environ.get("KILL") == "1" and RANK == 0:

            def half_then_die(f, data):
                f.write(data[: len(data) // 2])
                f.flush()
                fault_time()
                os.kill(os.getpid(), signal.SIGKILL)

            checkpoint_lib._write_bytes = half_then_die
        manager.save()
    save("killsave", w.numpy(), restored=os.path.basename(restored or ""))

if "kill" in WHAT:
    import signal

    strategy.reduce("SUM", tf.constant(1.0), axis=None)
    if RANK == N - 1:
        fault_time()
        os.kill(os.getpid(), signal.SIGKILL)
    strategy.reduce("SUM", tf.constant(1.0), axis=None)
    strategy.reduce("SUM", tf.constant(1.0), axis=None)

if "exit" in WHAT:  # one rank leaves with sys.exit while the others wait for it in a collective
    strategy.reduce("SUM", tf.constant(1.0), axis=None)
    if RANK == N - 1:
        fault_time()
        sys.exit(3)
    strategy.reduce("SUM", tf.constant(1.0), axis=None)

if "chiefmetric" in WHAT:  # a metric read on the chief only (a collective in TF too), then a checkpoint
    with strategy.scope():
        accuracy = tf.keras.metrics.Mean()
    strategy.run(lambda: accuracy.update_state(1.0))
    print("all read", float(accuracy.result()))  # every rank reads: fine
    loss = strategy.reduce("SUM", tf.constant(1.0), axis=None)
    if RANK == 0:
        print("loss", float(loss))  # printing a plain value on the chief only: fine
        fault_time()
        print("accuracy", float(accuracy.result()))  # the others are not reading it
    tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), os.path.join(OUT, "ck"), 1).save()

if "syncbn" in WHAT:  # BatchNormalization(synchronized=True): the moments of the global batch, in fit and run
    def bn_model():
        return tf.keras.Sequential([tf.keras.Input((5,), dtype="float64"),
                                    tf.keras.layers.Dense(6, use_bias=False, dtype="float64"),  # (BN cancels a bias)
                                    tf.keras.layers.BatchNormalization(synchronized=True, momentum=0.5,
                                                                       dtype="float64"),
                                    tf.keras.layers.Dense(2, dtype="float64")])

    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = bn_model()
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(X, Y, batch_size=GLOBAL_BATCH, epochs=2, shuffle=False, verbose=0)
    fit_weights = model.get_weights()
    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = bn_model()
        optimizer = tf.keras.optimizers.SGD(0.1)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def bn_step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(labels, model(features, training=True)),
                                              global_batch_size=GLOBAL_BATCH)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    @tf.function
    def bn_train(inputs):
        return strategy.reduce("SUM", strategy.run(bn_step, args=(inputs,)), axis=None)

    losses = [bn_train(b) for b in strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((X, Y)).batch(GLOBAL_BATCH))]
    save("syncbn", *fit_weights, loop=np.concatenate(
        [np.ravel(w) for w in model.get_weights()]), loss=np.array([float(v) for v in losses]))

if "metrics" in WHAT:  # confusion-matrix metrics with a 1-D sample_weight on a (batch, 1) output, in fit and evaluate
    tf.keras.utils.set_random_seed(0)
    sw = np.random.default_rng(5).random(37).astype(np.float32)
    M = tf.keras.metrics
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(1, activation="sigmoid")])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="binary_crossentropy",
                      metrics=[M.AUC(name="auc"), M.Precision(name="p"), M.Recall(name="r", thresholds=[0.3, 0.6])],
                      weighted_metrics=[M.AUC(name="wauc"), M.AUC(curve="PR", name="wpr"), M.Precision(name="wp"),
                                        M.Recall(name="wr"), M.TruePositives(name="wtp"), M.BinaryAccuracy(name="wacc"),
                                        M.SensitivityAtSpecificity(0.5, name="wsas")])
    x, y = X.astype(np.float32), Y.astype(np.float32)
    history = model.fit(x, y, sample_weight=sw, batch_size=GLOBAL_BATCH, epochs=2, shuffle=False, verbose=0)
    ev = model.evaluate(x, y, sample_weight=sw, batch_size=GLOBAL_BATCH, verbose=0, return_dict=True)
    keys = sorted(ev)
    save("metrics", *model.get_weights(), keys=np.array(keys),  # ("r" of two thresholds: an array each epoch)
         fit=np.concatenate([np.ravel(np.array(history.history[k], np.float64)) for k in keys]),
         eval=np.concatenate([np.ravel(np.array(ev[k], np.float64)) for k in keys]))

if "tfdocs" in WHAT:  # TF's two multi-worker tutorials' programs as written (tf_tutorial_keras.py, tf_tutorial_ctl.py)
    import runpy

    here = os.path.dirname(os.path.abspath(__file__))

    def run_tutorial(name):
        os.environ["TUTORIAL_DIR"] = os.path.join(OUT, name)
        return runpy.run_path(os.path.join(here, f"{name}.py"))

    def files(name):
        top = os.path.join(OUT, name)
        return np.array(sorted(os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top)
                               for f in fs + [""]))

    tf.keras.utils.set_random_seed(0)  # (every process shuffles alike: the tutorials' shuffle has no seed)
    keras_run = run_tutorial("tf_tutorial_keras")
    ctl_run = run_tutorial("tf_tutorial_ctl")
    # (run again, the tutorial's program restores epoch 1 and step 2 of 2 and divides by zero batches, on TF too)
    import mnist

    restored = mnist.build_cnn_model()
    epoch, step_in_epoch = tf.Variable(0, dtype=tf.int64), tf.Variable(0, dtype=tf.int64)
    tf.train.Checkpoint(model=restored, epoch=epoch, step_in_epoch=step_in_epoch).restore(
        tf.train.latest_checkpoint(os.path.join(OUT, "tf_tutorial_ctl", "ckpt")))
    save("tfdocs", *keras_run["multi_worker_model"].get_weights(),
         loss=np.array(keras_run["history"].history["loss"] + keras_run["backup_history"].history["loss"]),
         ctl=np.concatenate([np.ravel(w) for w in ctl_run["multi_worker_model"].get_weights()]),
         ctl_loss=float(ctl_run["train_loss"]), restored_epoch=int(epoch.numpy()),
         restored=np.concatenate([np.ravel(w) for w in restored.get_weights()]),
         keras_files=files("tf_tutorial_keras"), ctl_files=files("tf_tutorial_ctl"))

if "timeout" in WHAT:  # CommunicationOptions(timeout_seconds=...): a collective that waits longer ends the job
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=1.0)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    strategy.reduce("SUM", tf.constant(1.0), axis=None)
    if RANK == 0:
        fault_time()
    else:
        import time

        time.sleep(30)  # (killed by the abort long before)
    strategy.reduce("SUM", tf.constant(1.0), axis=None)

if RANK == 0:
    print("done", N)
