"""``paddle.DataParallel`` on 2 processes (gloo on CPU) with a hook on a
parameter, a hook on an activation and a PyLayer, eager and converted (AST,
SOT; both wrap orders), against one process trained on the whole batches.

The run is real: ``paddle.distributed.launch`` with 2 processes on
127.0.0.1. Paddle's TCP store listens on all addresses, so the launch runs in
fresh user, network and PID namespaces (``unshare``): nothing it opens can be
reached from outside this machine, and killing the ``unshare`` process (by
PID, on every exit path) kills every process of the run; the test then
checks that no process of the run is left.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import data_parallel_worker as worker
import numpy as np
import paddle
import pytest

WORKER = Path(worker.__file__)
TIMEOUT_S = 300
UNSHARE = [
    "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child",
    "--mount-proc",
]  # fmt: skip


def log_tail(log_dir, n=40):
    text = []
    for f in sorted(Path(log_dir).glob("*")):
        if f.is_file():
            lines = f.read_text(errors="replace").splitlines()[-n:]
            text.append(f"--- {f.name}\n" + "\n".join(lines))
    return "\n".join(text) or "(no log)"


def processes_running(marker):
    """PIDs of the processes whose command line contains ``marker``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:  # exited meanwhile
                continue
            if marker.encode() in cmdline:
                pids.append(int(entry.name))
    return pids


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.fail("the 2-process test needs `unshare` (util-linux)")
    probe = subprocess.run(
        [unshare, *UNSHARE, "true"], capture_output=True, text=True
    )
    if probe.returncode:
        pytest.fail(
            "the 2-process test needs user, network and PID namespaces "
            f"(`unshare {' '.join(UNSHARE)} true` failed: {probe.stderr.strip()})"
        )
    out = tmp_path_factory.mktemp("dp")
    log_dir = out / "log"
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    cmd = [unshare, *UNSHARE, sys.executable, str(WORKER), "launch"]
    proc = subprocess.Popen(
        [*cmd, str(out), str(log_dir)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"the 2-process run took over {TIMEOUT_S} s:\n{log_tail(log_dir)}"
        )
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        left = processes_running(str(out))
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes of the run outlived it: {left}"
    files = [out / f"rank{r}.json" for r in range(2)]
    if proc.returncode or not all(f.exists() for f in files):
        pytest.fail(
            f"the 2-process run failed (exit {proc.returncode}):\n"
            f"{output[-3000:]}\n{log_tail(log_dir)}"
        )
    return [json.loads(f.read_text()) for f in files]


@pytest.fixture(scope="module")
def one_process():
    dtype = paddle.get_default_dtype()
    paddle.set_default_dtype("float64")
    try:
        net, calls = worker.make_net()
        params = worker.train(net, net, worker.batch)
    finally:
        paddle.set_default_dtype(dtype)
    return [np.array(p) for p in params], len(calls)


@pytest.mark.parametrize("variant", worker.VARIANTS)
def test_two_processes_train_like_one(ranks, one_process, variant):
    want, want_calls = one_process
    assert want_calls == len(worker.BATCHES)
    for rank, result in enumerate(ranks):
        got = result[variant]
        for i, (g, w) in enumerate(zip(got["params"], want)):
            np.testing.assert_allclose(
                np.array(g), w, rtol=1e-12, atol=1e-15,
                err_msg=f"rank {rank}, parameter {i}",
            )  # fmt: skip
        # the parameter hook runs once per backward in each process
        assert got["hook_calls"] == want_calls, (rank, got["hook_calls"])
        assert got["breaks"] == [], (rank, got["breaks"])
