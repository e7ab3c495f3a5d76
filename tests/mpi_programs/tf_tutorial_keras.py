"""TF's "Multi-worker training with Keras" tutorial (tensorflow/docs,
site/en/tutorials/distribute/multi_worker_with_keras.ipynb): its ``main.py``, then the cells of its "Model saving
and loading", "Checkpoint saving and restoring" and "BackupAndRestore" sections, as written there, with
``import tapeflow as tf``. Changed for the test only: the data (``mnist_setup.py``'s stand-in), fewer steps,
the files under ``TUTORIAL_DIR`` instead of ``/tmp``, and the model file's ``.keras`` suffix (Keras 3 requires
it: TF 2.21 raises the same ValueError for ``/tmp/keras-model``). Run by train_checks.py's "tfdocs" check, under
``mpirun -x TF_CONFIG`` (every process gets the same TF_CONFIG; the processes are its workers).
"""

import os
import json

import tapeflow as tf  # (the one line that changes)
import mnist_setup

TUTORIAL_DIR = os.environ["TUTORIAL_DIR"]

# ---- main.py
per_worker_batch_size = 16  # (64)
tf_config = json.loads(os.environ['TF_CONFIG'])
num_workers = len(tf_config['cluster']['worker'])

strategy = tf.distribute.MultiWorkerMirroredStrategy()

global_batch_size = per_worker_batch_size * num_workers
multi_worker_dataset = mnist_setup.mnist_dataset(global_batch_size)

with strategy.scope():
  # Model building/compiling need to be within `strategy.scope()`.
  multi_worker_model = mnist_setup.build_and_compile_cnn_model()


history = multi_worker_model.fit(multi_worker_dataset, epochs=2, steps_per_epoch=2)  # (3 epochs of 70 steps)

# ---- "Dataset sharding"
options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF

global_batch_size = 16  # (64)
multi_worker_dataset = mnist_setup.mnist_dataset(batch_size=16)  # (64)
dataset_no_auto_shard = multi_worker_dataset.with_options(options)

# ---- "Model saving and loading"
model_path = os.path.join(TUTORIAL_DIR, 'keras-model.keras')

def _is_chief(task_type, task_id):
  # Note: there are two possible `TF_CONFIG` configurations.
  #   1) In addition to `worker` tasks, a `chief` task type is use;
  #      in this case, this function should be modified to
  #      `return task_type == 'chief'`.
  #   2) Only `worker` task type is used; in this case, worker 0 is
  #      regarded as the chief. The implementation demonstrated here
  #      is for this case.
  # For the purpose of this Colab section, the `task_type` is `None` case
  # is added because it is effectively run with only a single worker.
  return (task_type == 'worker' and task_id == 0) or task_type is None

def _get_temp_dir(dirpath, task_id):
  base_dirpath = 'workertemp_' + str(task_id)
  temp_dir = os.path.join(dirpath, base_dirpath)
  tf.io.gfile.makedirs(temp_dir)
  return temp_dir

def write_filepath(filepath, task_type, task_id):
  dirpath = os.path.dirname(filepath)
  base = os.path.basename(filepath)
  if not _is_chief(task_type, task_id):
    dirpath = _get_temp_dir(dirpath, task_id)
  return os.path.join(dirpath, base)

task_type, task_id = (strategy.cluster_resolver.task_type,
                      strategy.cluster_resolver.task_id)
write_model_path = write_filepath(model_path, task_type, task_id)

multi_worker_model.save(write_model_path)

if not _is_chief(task_type, task_id):
  tf.io.gfile.rmtree(os.path.dirname(write_model_path))

loaded_model = tf.keras.models.load_model(model_path)

single_worker_dataset = mnist_setup.mnist_dataset(16)  # (64; a cell of the notebook's first section)
# Now that the model is restored, and can continue with the training.
loaded_model.fit(single_worker_dataset, epochs=1, steps_per_epoch=1)  # (2 epochs of 20 steps)

# ---- "Checkpoint saving and restoring"
checkpoint_dir = os.path.join(TUTORIAL_DIR, 'ckpt')

checkpoint = tf.train.Checkpoint(model=multi_worker_model)
write_checkpoint_dir = write_filepath(checkpoint_dir, task_type, task_id)
checkpoint_manager = tf.train.CheckpointManager(
    checkpoint, directory=write_checkpoint_dir, max_to_keep=1)

checkpoint_manager.save()
if not _is_chief(task_type, task_id):
  tf.io.gfile.rmtree(write_checkpoint_dir)

latest_checkpoint = tf.train.latest_checkpoint(checkpoint_dir)
checkpoint.restore(latest_checkpoint)
multi_worker_model.fit(multi_worker_dataset, epochs=1, steps_per_epoch=1)  # (2 epochs of 20 steps)

# ---- "BackupAndRestore callback"
# Multi-worker training with `MultiWorkerMirroredStrategy`
# and the `BackupAndRestore` callback. The training state
# is backed up at epoch boundaries by default.

callbacks = [tf.keras.callbacks.BackupAndRestore(backup_dir=os.path.join(TUTORIAL_DIR, 'backup'))]
with strategy.scope():
  multi_worker_model = mnist_setup.build_and_compile_cnn_model()
multi_worker_model.fit(multi_worker_dataset,
                       epochs=2,
                       steps_per_epoch=2,  # (3 epochs of 70 steps)
                       callbacks=callbacks)

# The training state is backed up at every 30 steps because `save_freq` is set
# to an integer value of `30`.

callbacks = [tf.keras.callbacks.BackupAndRestore(backup_dir=os.path.join(TUTORIAL_DIR, 'backup'), save_freq=1)]  # (30)
with strategy.scope():
  multi_worker_model = mnist_setup.build_and_compile_cnn_model()
backup_history = multi_worker_model.fit(multi_worker_dataset,
                                        epochs=2,
                                        steps_per_epoch=2,  # (3 epochs of 70 steps)
                                        callbacks=callbacks)
