"""Peak host memory of one training step with and without
``paddle.distributed.fleet.utils.recompute``, in eager, SOT and AST.

Model: 6 blocks of 4 ``Linear(256, 256)`` + ``tanh`` layers (float32, batch
1024, so one activation is 1 MiB), then ``Linear(256, 1)``; with recompute,
each block is recomputed. The peak is Paddle's own host allocator statistic
(``core.host_memory_stat_peak_value``) over forward + backward, less what
was allocated before the step; each configuration runs in its own process
(3 steps, the last one reported).

    .venv/bin/python benchmarks/bench_recompute_memory.py
"""

import argparse
import os
import subprocess
import sys

CONFIGS = [
    ("plain", None),
    ("recompute, use_reentrant=True", True),
    ("recompute, use_reentrant=False", False),
]
MODES = ("eager", "sot", "ast")


import paddle  # noqa: E402
from paddle.base import core  # noqa: E402
from paddle.distributed.fleet.utils import recompute  # noqa: E402


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fcs = paddle.nn.LayerList(
            [paddle.nn.Linear(256, 256) for _ in range(4)]
        )

    def forward(self, x):
        for fc in self.fcs:
            x = paddle.tanh(fc(x))
        return x


class Net(paddle.nn.Layer):
    def __init__(self, reentrant):
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block() for _ in range(6)])
        self.out = paddle.nn.Linear(256, 1)
        self.reentrant = reentrant

    def forward(self, x):
        for block in self.blocks:
            if self.reentrant is None:
                x = block(x)
            else:
                x = recompute(block, x, use_reentrant=self.reentrant)
        return self.out(x).mean()


def step_peak(mode, reentrant):
    """The peak allocation of the third step, in MiB."""
    paddle.seed(0)
    net = Net(reentrant)
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    x = paddle.randn([1024, 256])
    x.stop_gradient = False
    for _ in range(3):
        core.host_memory_stat_reset_peak_value("Allocated", 0)
        before = core.host_memory_stat_current_value("Allocated", 0)
        net(x).backward()
        peak = core.host_memory_stat_peak_value("Allocated", 0) - before
        net.clear_gradients()
        x.clear_gradient()
    return peak / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, config = args.child
        print(step_peak(mode, CONFIGS[int(config)][1]))
        return
    env = dict(os.environ, MIN_GRAPH_SIZE="0", GLOG_minloglevel="2")
    print("| configuration | " + " | ".join(MODES) + " |")
    print("|---|" + "---:|" * len(MODES))
    for i, (name, _) in enumerate(CONFIGS):
        cells = []
        for mode in MODES:
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode, str(i)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            cells.append(f"{float(out.split()[-1]):.2f} MiB")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
