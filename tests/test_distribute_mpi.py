"""MultiWorkerMirroredStrategy under real MPI: ``mpirun -n 2`` and ``-n 4 --oversubscribe`` on loopback.

One launch per world size runs every check of tests/mpi_programs/train_checks.py (Keras fit, a
custom strategy.run loop with a checkpoint, IndexedSlices gradients, input splitting); the single-process
run of the same program with the same global batch is the reference. Fault cases: an exception on one
rank, SIGKILL of one rank, sys.exit on one rank while the others wait, and resuming from the last checkpoint.
Skipped when mpi4py or mpirun is missing (install the ``distributed`` extra).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import tapeflow as tf

PROGRAM = os.path.join(os.path.dirname(__file__), "mpi_programs", "train_checks.py")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mpirun() -> str | None:
    here = os.path.join(os.path.dirname(sys.executable), "mpirun")
    return here if os.path.exists(here) else shutil.which("mpirun")


def _missing() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install -e '.[distributed]')"
    if _mpirun() is None:
        return "mpirun is not on PATH nor next to the Python executable (pip install -e '.[distributed]')"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))
TIMEOUT = 120
FAULT_SECONDS = 15  # from the failure on one rank to the end of the whole job (typically well under 1 s)


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    # one host: ranks talk through shared memory (no network); threads pinned so 4 ranks share 2 cores sanely
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_btl="self,sm",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
    )
    env.update(extra)
    return env


def _launch(n: int, out: str, *what: str, **env: str) -> subprocess.CompletedProcess:
    cmd = [_mpirun(), "-n", str(n)] + (["--oversubscribe"] if n > 2 else []) + ["-x", "PYTHONPATH"]
    for k in env:
        cmd += ["-x", k]
    cmd += [sys.executable, PROGRAM, out, *what]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=_env(**env))


def _load(out: str, name: str) -> list:
    files = sorted(glob.glob(os.path.join(out, f"{name}_rank*.npz")), key=lambda f: int(f[:-4].split("rank")[-1]))
    return [dict(np.load(f)) for f in files]


def _tf_config(n: int) -> str:
    return json.dumps({"cluster": {"worker": [f"localhost:{12345 + i}" for i in range(n)]},
                       "task": {"type": "worker", "index": 0}})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("mpi")
    ref = str(base / "single")
    proc = subprocess.run(
        [sys.executable, PROGRAM, ref, "fit", "loop", "sparse", "data", "tail", "logsync", "tutorial", "tfconfig",
         "crash", "syncbn", "metrics", "tfdocs", "dropout"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_env(TF_CONFIG=_tf_config(1)),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = {"single": ref}
    for n in (2, 4):
        d = str(base / f"n{n}")
        # every rank gets the same TF_CONFIG (as `mpirun -x TF_CONFIG` gives it): the ranks tell the tasks apart
        proc = _launch(n, d, "fit", "loop", "sparse", "lso", "data", "reuse", "tail", "logsync", "tutorial",
                       "tfconfig", "syncbn", "metrics", "tfdocs", "dropout", TF_CONFIG=_tf_config(n))
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        assert f"done {n}" in proc.stdout
        assert proc.stdout.count("Epoch 1/3\n5/5 - ") == 1  # verbose=2's epoch line, from rank 0 only
        out[n] = d
    out["base"] = str(base)
    return out


def _check_equal(ref: dict, ranks: list, keys: list, rtol: float) -> None:
    for k in keys:
        for r, got in enumerate(ranks):
            scale = max(np.max(np.abs(ref[k])), 1e-30)
            err = np.max(np.abs(got[k] - ref[k])) / scale
            assert err <= rtol, f"{k} on rank {r}: relative difference {err:.3g} from the single-process run"
        for r, got in enumerate(ranks[1:], 1):
            np.testing.assert_array_equal(got[k], ranks[0][k], err_msg=f"{k}: rank {r} differs from rank 0")


@pytest.mark.parametrize("n", [2, 4])
def test_fit_equals_single_process_with_the_global_batch(runs, n):
    for dtype, rtol in (("float64", 1e-13), ("float32", 1e-5)):
        ref = _load(runs["single"], f"fit_{dtype}")[0]
        ranks = _load(runs[n], f"fit_{dtype}")
        assert len(ranks) == n
        weights = sorted(k for k in ref if k.startswith("w"))
        assert len(weights) == 4
        _check_equal(ref, ranks, weights + ["pred"], rtol)
        # the history, evaluate() and metrics are aggregated over all ranks: the same everywhere
        _check_equal(ref, ranks, ["loss", "accuracy", "eval_loss", "eval_acc"], 1e-6)


@pytest.mark.parametrize("n", [2, 4])
def test_custom_loop_with_compute_average_loss_and_reduce(runs, n):
    ref = _load(runs["single"], "loop")[0]
    ranks = _load(runs[n], "loop")
    weights = sorted(k for k in ref if k.startswith("w"))
    _check_equal(ref, ranks, weights + ["slots"], 1e-5)
    _check_equal(ref, ranks, ["loss", "accuracy"], 1e-5)
    for r, d in enumerate(ranks):  # each checkpoint, written by rank 0, was there for every rank when save() returned
        assert d["seen_ckpt"].tolist() == [True] * 3, f"rank {r} did not see the checkpoint right after save()"


@pytest.mark.parametrize("n", [2, 4])
def test_synchronized_batch_normalization_uses_the_global_batch(runs, n):
    # BatchNormalization(synchronized=True): mean and variance over every rank's part of the batch (Keras' TF
    # backend all-reduces the sums), so fit and a strategy.run loop give the single-process weights, moving
    # statistics included, on every rank
    ref = _load(runs["single"], "syncbn")[0]
    ranks = _load(runs[n], "syncbn")
    weights = sorted(k for k in ref if k.startswith("w"))
    assert len(weights) == 7  # kernel, gamma, beta, moving mean and variance, kernel, bias
    _check_equal(ref, ranks, weights + ["loop"], 1e-12)
    _check_equal(ref, ranks, ["loss"], 1e-6)  # (Keras 3 losses compute in float32: the ranks' sums round there)


@pytest.mark.parametrize("n", [2, 4])
def test_indexed_slices_gradients_are_gathered(runs, n):
    ref = _load(runs["single"], "sparse")[0]
    ranks = _load(runs[n], "sparse")
    assert all(r["sparse"].all() and r["sparse"].size >= 2 for r in ranks)  # both gradients stayed IndexedSlices
    _check_equal(ref, ranks, ["w0", "w1"], 1e-6)
    for d in ranks:  # both travelled as values + indices, never densified: at each of the 4 steps, three MPI
        assert int(d["gathers"]) == 3 * 4  # gathers for the two (row counts, all values, all indices)
        assert d["reduced"].size == 0 or d["reduced"].max() < 10 * 4, d["reduced"]


@pytest.mark.parametrize("n", [2, 4])
def test_eager_reductions_reuse_only_unheld_results(runs, n):
    ranks = _load(runs[n], "reuse")
    tri = n * (n - 1) / 2  # the sum of the ranks
    m = np.arange(6.0).reshape(2, 3)
    for d in ranks:
        np.testing.assert_array_equal(d["held"], [n, tri])  # a kept result is not overwritten by the next calls
        np.testing.assert_array_equal(d["held_np"], [2 * n, tri])  # nor a kept .numpy() of one
        np.testing.assert_array_equal(d["again"], [tri] * 3)
        np.testing.assert_array_equal(d["f64"], [n, tri])
        assert str(d["f64_dtype"]) == "float64"
        # a transposed (Fortran-ordered) tensor, eager and compiled: mpi4py would take its memory order as is
        for k in ("transposed", "transposed_ctx", "compiled", "compiled2"):
            np.testing.assert_array_equal(d[k], n * m.T + tri, err_msg=k)
        np.testing.assert_array_equal(d["g1"], [n * (n + 1) / 2] * 6 + [n] * 2)
        np.testing.assert_array_equal(d["g3"], [3 * n * (n + 1) / 2] * 6 + [3 * n] * 2)
        np.testing.assert_array_equal(d["g64"], [n * (n + 1) / 2] * 6 + [n] * 2)
        assert str(d["g64_dtype"]) == "float64"
        tri1 = n * (n + 1) / 2
        np.testing.assert_array_equal(d["steps"], [tri1 * (i + 1) for i in range(6)])
        np.testing.assert_array_equal(d["kept_np"], np.full((3, 2), 3 * tri1))
        assert bool(d["reused"]) and not bool(d["weak_reused"])
        np.testing.assert_array_equal(d["sgd"], [-6 * tri1] * 6 + [-3 * n] * 2)  # eager apply_gradients, 3 steps
        assert bool(d["array_reused"])
        np.testing.assert_array_equal(d["array_held"], [2 * tri1, 3 * tri1, 0])


@pytest.mark.parametrize("n", [2, 4])
def test_dropout_masks_are_the_single_process_ones(runs, n):
    ref = _load(runs["single"], "dropout")[0]
    ranks = _load(runs[n], "dropout")
    _check_equal(ref, ranks, sorted(k for k in ref if k.startswith("w")) + ["loss", "loop_loss"], 1e-5)


@pytest.mark.parametrize("n", [2, 4])
def test_last_global_batch_smaller_than_the_number_of_ranks(runs, n):
    ref = _load(runs["single"], "tail")[0]
    ranks = _load(runs[n], "tail")
    rows = [d["rows"].tolist() for d in ranks]
    assert [sum(col) for col in zip(*rows)] == [8, 8, 8, 8, 1] and 0 in rows[-1]  # some ranks hold no example
    _check_equal(ref, ranks, sorted(k for k in ref if k.startswith("w")) + ["loss", "loop_loss"], 1e-5)


@pytest.mark.parametrize("n", [2, 4])
def test_loss_scale_optimizer_skips_a_step_on_every_rank_alike(runs, n):
    ranks = _load(runs[n], "lso")
    for r in ranks[1:]:
        np.testing.assert_array_equal(r["w0"], ranks[0]["w0"])
    assert all(float(r["scale"]) == float(ranks[0]["scale"]) for r in ranks)
    assert float(ranks[0]["scale"]) == 32768.0 / 2  # the step with an inf gradient (on one rank) was skipped once
    assert not np.allclose(ranks[0]["w0"], 1.0)  # the other two steps were applied


@pytest.mark.parametrize("n", [2, 4])
def test_each_example_once_per_epoch_and_reductions(runs, n):
    ranks = _load(runs[n], "data")
    for r, d in enumerate(ranks):
        np.testing.assert_array_equal(d["seen"], np.arange(37))  # gathered global batches, in order
        assert int(d["nrep"]) == n
        np.testing.assert_allclose(d["sums"], [n, n * (n - 1) / 2])
        np.testing.assert_allclose(d["means"], [(sum(1.0 + i for i in range(n)) + 3.0 * n) / (2 * n)])
        np.testing.assert_allclose(d["ctx"], (n - 1) / 2)
        assert d["vff"].tolist() == [r, n]  # experimental_distribute_values_from_function: this rank's value
        # inside tf.function: a for loop over the distributed dataset (twice), then next(iterator) 5 times
        b = [list(range(37))[i : i + 8] for i in range(0, 37, 8)]
        assert d["in_function"].tolist() == [sum(i * i for i in range(37))] * 2 + [sum(x) for x in b] + [666], r
    local = np.concatenate([d["local"] for d in ranks])
    np.testing.assert_array_equal(np.sort(local), np.arange(37))  # each example on exactly one rank
    from_fn = np.concatenate([d["from_fn"] for d in ranks])
    np.testing.assert_array_equal(np.sort(from_fn), np.arange(40))  # shard(num_input_pipelines, pipeline id)


@pytest.mark.parametrize("n", [2, 4])
def test_batch_logs_over_all_ranks_in_one_collective_a_batch(runs, n):
    ref = _load(runs["single"], "logsync")[0]
    ranks = _load(runs[n], "logsync")
    _check_equal(ref, ranks, ["logs"], 1e-5)  # loss, accuracy and top-1 after each batch, as one process
    for d in ranks:  # 4 batches: their 3 metrics in one allreduce each (the gradients go by the step's own buffer)
        # (+ at most one to agree on per-batch logs and one for the epoch's logs)
        assert len(d["reductions"]) <= 4 + 2 and (d["reductions"] == 6).sum() >= 4, d["reductions"]


@pytest.mark.parametrize("n", [2, 4])
def test_confusion_metrics_with_a_1d_sample_weight_agree_over_all_ranks(runs, n):
    # AUC / Precision / Recall / TruePositives / SensitivityAtSpecificity on a (batch, 1) output with a 1-D
    # sample_weight, in compile's metrics and weighted_metrics: fit's history and evaluate as one process
    ref = _load(runs["single"], "metrics")[0]
    ranks = _load(runs[n], "metrics")
    assert [str(k) for k in ref["keys"]] == ["auc", "loss", "p", "r", "wacc", "wauc", "wp", "wpr", "wr", "wsas", "wtp"]
    _check_equal(ref, ranks, ["w0", "w1", "fit", "eval"], 1e-5)


@pytest.mark.parametrize("n", [2, 4])
def test_tf_multi_worker_tutorials_as_written(runs, n):
    # Keras fit on a repeated, shuffled dataset with BackupAndRestore, CSVLogger and ReduceLROnPlateau; the custom
    # loop with distribute_datasets_from_function, next(iterator) in a tf.function, compute_average_loss without a
    # global batch, scale_regularization_loss, and the tutorials' per-worker temporary files, removed by the workers.
    ref = _load(runs["single"], "tutorial")[0]
    ranks = _load(runs[n], "tutorial")
    assert len(ranks) == n
    _check_equal(ref, ranks, sorted(k for k in ref if k.startswith("w")), 1e-5)
    _check_equal(ref, ranks, ["loss", "accuracy", "loop_loss", "loop_acc"], 1e-5)
    for d in ranks:  # ReduceLROnPlateau (patience 0, no epoch improves by 10) halved it after epoch 2 on every rank
        np.testing.assert_array_equal(d["lr"], np.float32([0.1, 0.1, 0.05]))
    out = runs[n]
    with open(os.path.join(out, "tutorial_log.csv")) as f, open(os.path.join(runs["single"], "tutorial_log.csv")) as g:
        got, want = f.read().splitlines(), g.read().splitlines()  # written by rank 0 alone
    assert len(got) == 3 and got[0] == want[0] == "epoch,accuracy,loss,val_accuracy,val_loss"
    for a, b in zip(got[1:], want[1:]):
        np.testing.assert_allclose([float(v) for v in a.split(",")[:3]], [float(v) for v in b.split(",")[:3]], 1e-5)
    assert not os.path.exists(os.path.join(out, "tutorial_backup"))  # BackupAndRestore removed it once, at the end
    assert sorted(os.listdir(os.path.join(out, "tutorial_ckpt"))) == ["checkpoint", "ckpt-2.data-00000-of-00001",
                                                                      "ckpt-2.index"]
    for r in range(1, n):  # the non-chief workers wrote their own files and removed them
        assert sorted(os.listdir(os.path.join(out, f"workertemp_{r}"))) == []
    assert sorted(os.listdir(os.path.join(out, "tutorial_model"))) == ["model.keras"]
    model = tf.keras.models.load_model(os.path.join(out, "tutorial_model", "model.keras"))
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_array_equal(w, ranks[0][f"w{i}"])


@pytest.mark.parametrize("n", [2, 4])
def test_tf_tutorials_programs_as_written_run_under_mpirun(runs, n):
    # tests/mpi_programs/tf_tutorial_keras.py and tf_tutorial_ctl.py: the main.py of TF's two multi-worker tutorials
    # (and the Keras one's saving, checkpoint and BackupAndRestore cells), TF_CONFIG from `mpirun -x`
    ref = _load(runs["single"], "tfdocs")[0]
    ranks = _load(runs[n], "tfdocs")
    assert len(ranks) == n
    for r, d in enumerate(ranks[1:], 1):
        for k in sorted(ref):
            np.testing.assert_array_equal(d[k], ranks[0][k], err_msg=f"{k}: rank {r} differs from rank 0")
    # the global batch is 16 per worker in main.py, 16 in all in the later cells: there, one process's numbers
    np.testing.assert_allclose(ranks[0]["loss"][2:], ref["loss"][2:], rtol=1e-5)
    assert not np.allclose(ranks[0]["ctl"], ref["ctl"])  # (main.py's global batch grows with the workers)
    np.testing.assert_array_equal(ranks[0]["restored"], ranks[0]["ctl"])  # the chief's last checkpoint
    assert int(ranks[0]["restored_epoch"]) == 1
    temp = [f"workertemp_{r}" for r in range(1, n)]  # non-chief workers: files removed, folders left (as in TF)
    assert ranks[0]["keras_files"].tolist() == sorted([".", "ckpt", "ckpt/checkpoint",
                                                       "ckpt/ckpt-1.data-00000-of-00001", "ckpt/ckpt-1.index",
                                                       "keras-model.keras"] + temp)
    assert ranks[0]["ctl_files"].tolist() == sorted([".", "ckpt", "ckpt/checkpoint", "ckpt/ckpt-2.data-00000-of-00001",
                                                     "ckpt/ckpt-2.index"] + temp)


@pytest.mark.parametrize("n", [2, 4])
def test_tf_config_in_the_environment_and_auto_shard_policies(runs, n):
    # The tutorials' main.py: TF_CONFIG (the same on every rank) gives num_workers; the cluster resolver gives
    # each rank its own task and TF_CONFIG's cluster; CommunicationOptions are accepted.
    ref = _load(runs["single"], "tfconfig")[0]
    ranks = _load(runs[n], "tfconfig")
    assert [d["task"].tolist() for d in ranks] == [["worker", str(r)] for r in range(n)]
    assert [bool(d["chief"]) for d in ranks] == [True] + [False] * (n - 1)
    assert [str(d["device"]) for d in ranks] == [f"/job:worker/replica:0/task:{r}/device:CPU:0" for r in range(n)]
    assert all(json.loads(str(d["spec"])) == json.loads(_tf_config(n))["cluster"] for d in ranks)
    assert ref["task"].tolist() == ["worker", "0"] and bool(ref["chief"])
    # AutoShardPolicy.DATA: the single-process numbers with the global batch
    _check_equal(ref, ranks, sorted(k for k in ref if k.startswith("data_")), 1e-5)
    # AutoShardPolicy.OFF: each step trains every rank on the same 1/n piece of a global batch (TF's rebatch),
    # which is one process training with batches of that size
    for d in ranks:
        for k in [k for k in ref if k.startswith(f"off{n}_")]:
            np.testing.assert_allclose(d[k.replace(f"off{n}_", "off_")], ref[k], rtol=1e-5, atol=1e-7, err_msg=k)
        pieces = json.loads(str(d["off_pieces"]))  # a custom loop over a finite OFF dataset: all of it, in pieces
        assert sum(pieces, []) == list(range(12)) and len(pieces) == 2 * n == int(d["off_len"])


def test_checkpoint_written_under_mpi_restores_in_one_process(runs):
    ckdir = os.path.join(runs[2], "ckpt")
    files = sorted(os.listdir(ckdir))
    assert files == ["checkpoint", "ckpt-2.data-00000-of-00001", "ckpt-2.index", "ckpt-3.data-00000-of-00001",
                     "ckpt-3.index"], files  # max_to_keep=2, no .tmp
    model = tf.keras.Sequential(
        [tf.keras.Input((5,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(2)]
    )
    optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    ckpt = tf.train.Checkpoint(optimizer=optimizer, model=model)
    ckpt.restore(tf.train.latest_checkpoint(ckdir)).assert_existing_objects_matched()
    saved = _load(runs[2], "loop")[0]
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_array_equal(w, saved[f"w{i}"])


def test_keras_files_written_once_under_mpi_load_in_one_process(runs):
    files = sorted(f for f in os.listdir(runs[2]) if not f.endswith(".npz"))
    assert [f for f in files if f.startswith(".") or "tmp" in f] == []  # no half-written or temporary files
    saved = _load(runs[2], "fit_float32")[0]
    model = tf.keras.models.load_model(os.path.join(runs[2], "model_float32.keras"))
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_array_equal(w, saved[f"w{i}"])
    best = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(16), tf.keras.layers.Dense(2)])
    best.load_weights(os.path.join(runs[2], "best_float32.weights.h5"))  # ModelCheckpoint's file, by rank 0


def test_exception_on_one_rank_aborts_the_job_and_the_job_resumes(runs):
    out = os.path.join(runs["base"], "crash")
    proc = _launch(2, out, "crash", CRASH="1")
    ended = time.time()
    assert proc.returncode != 0
    assert "RuntimeError: injected failure on rank 1" in proc.stderr
    assert "Traceback (most recent call last)" in proc.stderr
    _assert_ended_soon_after_the_fault(out, ended)
    files = sorted(os.listdir(os.path.join(out, "resume")))
    # the last complete checkpoint, nothing half-written
    assert files == ["checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index"], files
    proc = _launch(2, out, "crash")  # restarted: resumes from epoch 1's checkpoint
    assert proc.returncode == 0, proc.stderr[-3000:]
    ref = _load(runs["single"], "resume")[0]
    _check_equal(ref, _load(out, "resume"), sorted(k for k in ref if k.startswith("w")), 1e-5)


def test_sigkill_of_one_rank_ends_the_job_nonzero(runs):
    out = os.path.join(runs["base"], "kill")
    proc = _launch(2, out, "kill")
    ended = time.time()
    assert proc.returncode != 0
    _assert_ended_soon_after_the_fault(out, ended)


def test_sigkill_while_writing_a_checkpoint_keeps_the_last_one_and_the_job_resumes(runs):
    out = os.path.join(runs["base"], "killsave")
    proc = _launch(2, out, "killsave", KILL="1")
    ended = time.time()
    assert proc.returncode != 0
    _assert_ended_soon_after_the_fault(out, ended)
    ckdir = os.path.join(out, "killsave")
    files = sorted(os.listdir(ckdir))
    # and the killed write's temporary file
    assert files[1:] == ["checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index"], files
    tmp = os.path.join(ckdir, files[0])  # (never renamed to ckpt-2)
    assert files[0].startswith(".ckpt-2.data-00000-of-00001.") and files[0].endswith(".tmp"), files
    os.utime(tmp, (time.time() - 60, time.time() - 60))  # as a restart a minute later sees it
    proc = _launch(2, out, "killsave")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for d in _load(out, "killsave"):  # every rank resumed from ckpt-1 (w as saved there)
        assert str(d["restored"]) == "ckpt-1"
        np.testing.assert_array_equal(d["w0"], np.arange(4.0))
    # the half-written file removed
    assert sorted(os.listdir(ckdir)) == ["checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index"]


def test_sys_exit_on_one_rank_while_the_others_wait_ends_the_job(runs):
    out = os.path.join(runs["base"], "exit")
    proc = _launch(2, out, "exit")
    ended = time.time()
    assert proc.returncode != 0
    assert "[tapeflow rank 0/2] rank 1 has exited while this rank waits for it in a collective" in proc.stderr
    _assert_ended_soon_after_the_fault(out, ended)


def test_metric_read_on_the_chief_only_ends_the_job_naming_each_ranks_line(runs):
    # In TF the chief's read (a collective) pairs with whatever collective the others run next; here it waits on
    # a communicator of its own, and the job ends, saying where each process is.
    out = os.path.join(runs["base"], "chiefmetric")
    proc = _launch(2, out, "chiefmetric")
    ended = time.time()
    assert proc.returncode != 0
    assert "all read 1.0" in proc.stdout and "loss 2.0" in proc.stdout and "accuracy" not in proc.stdout
    assert "every process waits in a collective that the others are not in, so none can go on: rank 0 reads a " \
           "metric (its value is summed over all processes) at train_checks.py:" in proc.stderr
    assert "`print(\"accuracy\", float(accuracy.result()))" in proc.stderr
    assert "rank 1 waits in an allgather at train_checks.py:" in proc.stderr and "CheckpointManager(" in proc.stderr
    _assert_ended_soon_after_the_fault(out, ended)


def test_communication_options_timeout_ends_a_collective_that_waits_longer(runs):
    out = os.path.join(runs["base"], "timeout")
    proc = _launch(2, out, "timeout")
    ended = time.time()
    assert proc.returncode != 0
    assert "DeadlineExceededError: Collective ops timed out after 1.0 s (CommunicationOptions(timeout_seconds=1.0))" \
           ": this process waits in an allreduce at train_checks.py:" in proc.stderr
    _assert_ended_soon_after_the_fault(out, ended)


def test_tf_config_that_contradicts_mpirun_is_a_clear_error(runs):
    out = os.path.join(runs["base"], "badconfig")
    proc = _launch(2, out, "fit", TF_CONFIG=_tf_config(3))
    assert proc.returncode != 0
    assert "ValueError: MultiWorkerMirroredStrategy: TF_CONFIG describes a cluster of 3 training task(s) " \
           "(worker:0, worker:1, worker:2) but mpirun started 2 processes." in proc.stderr


def _assert_ended_soon_after_the_fault(out: str, ended: float) -> None:
    with open(os.path.join(out, "fault_time")) as f:
        took = ended - float(f.read())
    assert took < FAULT_SECONDS, f"the job took {took:.1f} s to end after a rank failed"
