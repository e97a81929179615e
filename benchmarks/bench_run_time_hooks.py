"""Cost of a gradient hook that runs at run time (a Python-function op).

A hook that is not pure tensor math -- here ``record``, which reads the
gradient's maximum as a Python float -- runs with the gradient Tensor at
every run of the backward program. This times one training step (forward,
``backward()``) of a stack of 8 ``Linear(64, 64)`` + ``tanh`` layers, batch
32, float32, CPU, with a hook registered in ``forward`` on each of the 8
layer outputs:

* ``none``: no hook;
* ``compiled``: ``lambda g: g * 0.5`` (pure: compiled into the backward);
* ``run_time``: ``record`` (runs at run time, 8 calls per step);

for eager, SOT (``MIN_GRAPH_SIZE=0``) and AST (``full_graph=True``). All
configurations run in one process, interleaved: each repetition times
``--steps`` steps of every configuration in turn, so noise hits them alike.
The table gives the median step time over repetitions and the extra time
per hook call against the hook-free step of the same mode; the run-time
hook's cost per call is compared with eager's cost of the same hook.

Run (about a minute on a 2-core CPU)::

    .venv/bin/python benchmarks/bench_run_time_hooks.py
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("MIN_GRAPH_SIZE", "0")

import paddle

HOOKS = 8
SEEN = []


def record(g):
    SEEN.append(float(g.abs().max()))


class Net(paddle.nn.Layer):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.layers = paddle.nn.LayerList(
            [paddle.nn.Linear(64, 64) for _ in range(HOOKS)]
        )

    def forward(self, x):
        for layer in self.layers:
            x = paddle.tanh(layer(x))
            if self.kind == "compiled":
                x.register_hook(lambda g: g * 0.5)
            elif self.kind == "run_time":
                x.register_hook(record)
        return x.sum()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--reps", type=int, default=25)
    args = p.parse_args()
    paddle.seed(0)
    x = paddle.randn([32, 64])
    configs = {}
    for mode in ("eager", "sot", "ast"):
        for kind in ("none", "compiled", "run_time"):
            net = Net(kind)
            if mode != "eager":
                net = paddle.jit.to_static(net, full_graph=mode == "ast")
            for _ in range(5):
                net(x).backward()
            configs[mode, kind] = net
    times = {key: [] for key in configs}
    keys = list(configs)
    for rep in range(args.reps):
        for key in keys[rep % len(keys) :] + keys[: rep % len(keys)]:
            net = configs[key]
            start = time.perf_counter()
            for _ in range(args.steps):
                net(x).backward()
            times[key].append((time.perf_counter() - start) / args.steps)
    median = {key: statistics.median(ts) for key, ts in times.items()}
    print(
        "| mode | no hook | 8 compiled hooks | 8 run-time hooks "
        "| run-time cost per hook call |"
    )
    print("|---|---|---|---|---|")
    eager_cost = (median["eager", "run_time"] - median["eager", "none"]) / HOOKS
    for mode in ("eager", "sot", "ast"):
        none, comp, rt = (
            median[mode, k] for k in ("none", "compiled", "run_time")
        )
        cost = (rt - none) / HOOKS
        print(
            f"| {mode} | {none * 1e6:.0f} us | {comp * 1e6:.0f} us "
            f"({comp / none:.3f}x) | {rt * 1e6:.0f} us ({rt / none:.3f}x) "
            f"| {cost * 1e6:.1f} us ({cost / eager_cost:.2f}x eager's) |"
        )


if __name__ == "__main__":
    main()
