"""Peak host memory of one training step with and without
``paddle.distributed.fleet.utils.recompute``, in eager, SOT and AST.

Model: N blocks (6, 12 and 24) of 4 ``Linear(256, 256)`` + ``tanh`` layers
(float32, batch 1024, so one activation is 1 MiB), then ``Linear(256, 1)``;
with recompute, each block is recomputed: by ``recompute`` (both variants)
or by a user's PyLayer whose ``backward`` runs the block again under
``enable_grad`` and calls ``paddle.grad``. The peak is Paddle's own host
allocator statistic (``core.host_memory_stat_peak_value``) over forward +
backward, less what was allocated before the step; each configuration runs
in its own process (3 steps, the last one reported).

    .venv/bin/python benchmarks/bench_recompute_memory.py [--blocks 6 12 24]
"""

import argparse
import os
import subprocess
import sys

CONFIGS = [
    ("no recompute", None),
    ("recompute, use_reentrant=True", True),
    ("recompute, use_reentrant=False", False),
    ("a PyLayer recomputing in backward", "pylayer"),
]
MODES = ("eager", "sot", "ast")


import paddle  # noqa: E402
from paddle.base import core  # noqa: E402
from paddle.distributed.fleet.utils import recompute  # noqa: E402


def block(x, params):
    for weight, bias in zip(params[::2], params[1::2]):
        x = paddle.tanh(paddle.matmul(x, weight) + bias)
    return x


class RecomputeBlock(paddle.autograd.PyLayer):
    """A user's recompute: keep the input, run the block again in
    ``backward``."""

    @staticmethod
    def forward(ctx, x, *params):
        ctx.save_for_backward(x, *params)
        return block(x, params)

    @staticmethod
    def backward(ctx, dy):
        x, *params = ctx.saved_tensor()
        with paddle.enable_grad():
            inputs = [x.detach(), *(p.detach() for p in params)]
            for t in inputs:
                t.stop_gradient = False
            y = block(inputs[0], inputs[1:])
            return tuple(paddle.grad([y], inputs, [dy]))


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

    def params(self):
        return [p for fc in self.fcs for p in (fc.weight, fc.bias)]


class Net(paddle.nn.Layer):
    def __init__(self, reentrant, blocks):
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block() for _ in range(blocks)])
        self.out = paddle.nn.Linear(256, 1)
        self.reentrant = reentrant

    def forward(self, x):
        for block in self.blocks:
            if self.reentrant is None:
                x = block(x)
            elif self.reentrant == "pylayer":
                x = RecomputeBlock.apply(x, *block.params())
            else:
                x = recompute(block, x, use_reentrant=self.reentrant)
        return self.out(x).mean()


def step_peak(mode, reentrant, blocks):
    """The peak allocation of the third step, in MiB."""
    paddle.seed(0)
    net = Net(reentrant, blocks)
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
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--blocks", nargs="+", type=int, default=[6, 12, 24])
    args = parser.parse_args()
    if args.child:
        mode, config, blocks = args.child
        print(step_peak(mode, CONFIGS[int(config)][1], int(blocks)))
        return
    env = dict(os.environ, MIN_GRAPH_SIZE="0", GLOG_minloglevel="2")
    for blocks in args.blocks:
        print(f"\n{blocks} blocks\n")
        print("| configuration | " + " | ".join(MODES) + " |")
        print("|---|" + "---:|" * len(MODES))
        for i, (name, _) in enumerate(CONFIGS):
            cells = []
            for mode in MODES:
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--child",
                        mode,
                        str(i),
                        str(blocks),
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                cells.append(f"{float(out.split()[-1]):.2f} MiB")
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
