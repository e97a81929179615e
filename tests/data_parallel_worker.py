"""The training run of tests/test_data_parallel.py.

``python data_parallel_worker.py launch OUT LOG_DIR`` (run inside fresh user,
network and PID namespaces) brings the loopback interface up and execs
``paddle.distributed.launch`` with 2 processes on 127.0.0.1, each running
``python data_parallel_worker.py OUT``: one rank, which trains every variant
for ``len(BATCHES)`` SGD steps on its share of each batch and writes
``OUT/rank{N}.json`` (parameters, parameter-hook calls, SOT graph breaks).
The test imports this module to train the same model on one process.
"""

import fcntl
import json
import os
import socket
import struct
import sys

import numpy as np
import paddle
from paddle.jit.sot.utils.info_collector import InfoCollector, InfoType

NPROC = 2
BATCHES = (2, 3, 4)  # rows per process at each step (SOT re-traces on the 2nd)
# eager DataParallel, DataParallel of a converted Layer, and to_static of a
# DataParallel (the order the Layer is wrapped in does not matter)
VARIANTS = ("eager", "ast", "sot", "ast_outer", "sot_outer")


class Square(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        return g * 2.0 * x


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc1(x)
        h.register_hook(lambda g: g * 2.0)
        return self.fc2(Square.apply(paddle.tanh(h)))


def make_net():
    """A fresh Net (same initial parameters each time) with a hook on a
    parameter; returns it and the list the hook appends to at each call."""
    paddle.seed(2026)
    net = Net()
    calls = []

    def hook(g):
        calls.append(1)
        return g * 0.5

    net.fc1.weight.register_hook(hook)
    return net, calls


def batch(step):
    """The whole batch of ``step`` (all processes' rows)."""
    rng = np.random.default_rng(step)
    return rng.standard_normal((BATCHES[step] * NPROC, 4))


def train(model, net, rows):
    """SGD on ``model`` (``net`` or a wrapper of it) over ``rows(step)`` of
    each batch; the loss is the mean over those rows. Returns the final
    parameters of ``net``."""
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    for step in range(len(BATCHES)):
        x = paddle.to_tensor(rows(step))
        model(x).mean().backward()
        opt.step()
        opt.clear_grad()
    return [p.numpy().tolist() for p in net.parameters()]


def wrap(variant, net):
    if variant == "eager":
        return paddle.DataParallel(net)
    full_graph = variant.startswith("ast")
    if variant.endswith("_outer"):
        return paddle.jit.to_static(
            paddle.DataParallel(net), full_graph=full_graph
        )
    return paddle.DataParallel(paddle.jit.to_static(net, full_graph=full_graph))


def run_rank(out_dir):
    import paddle.distributed as dist

    paddle.set_default_dtype("float64")
    dist.init_parallel_env()
    rank = dist.get_rank()
    assert dist.get_world_size() == NPROC, dist.get_world_size()
    result = {}
    for variant in VARIANTS:
        InfoCollector().clear()
        net, calls = make_net()
        model = wrap(variant, net)

        def rows(step):
            n = BATCHES[step]
            return batch(step)[rank * n : (rank + 1) * n]

        params = train(model, net, rows)
        infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
        breaks = [str(i.reason) for i in infos.get("BreakGraphReasonInfo", [])]
        result[variant] = {
            "params": params,
            "hook_calls": len(calls),
            "breaks": breaks,
        }
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)


def bring_loopback_up():
    """A new network namespace has only ``lo``, and it is down."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(s, siocgifflags, ifreq)[:18])[
            1
        ]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH", b"lo", flags | iff_up))


if __name__ == "__main__":
    if sys.argv[1] == "launch":
        out_dir, log_dir = sys.argv[2:4]
        bring_loopback_up()
        launch = [sys.executable, "-m", "paddle.distributed.launch"]
        os.execv(
            sys.executable,
            launch
            + ["--nproc_per_node", str(NPROC), "--host", "127.0.0.1"]
            + ["--log_dir", log_dir, os.path.abspath(__file__), out_dir],
        )
    # SOT reads these at each use; set here, not at import, so that the
    # tests importing this module keep their environment
    os.environ.setdefault("MIN_GRAPH_SIZE", "0")
    os.environ.setdefault("SOT_COLLECT_INFO", "breakgraph_reason")
    run_rank(sys.argv[1])
