"""How AST's first call grows with the number of gradient hooks.

A stack of N ``Linear(16, 16)`` + ``tanh`` layers (batch 4, float32, CPU)
under ``paddle.jit.to_static(full_graph=True)``, with no hook or with one
pure hook (``lambda g: g * 0.5``) on each layer's output, registered in
``forward``: N hooks. The first call is split into

* ``build``: the first ``net(x)``: conversion, tracing, building the
  forward and backward programs (the hooks are applied here), and the
  forward run;
* ``first backward``: the first ``loss.backward()``, most of it the
  executor preparing the backward program (stock Paddle's executor builds
  its op dependencies in time quadratic in the ops).

Each configuration runs in a fresh process; per repetition the hook-free
and the hooked process of one N run back to back, in alternating order,
and the extra time per hook is the difference of the pair divided by N.
The table gives the medians over repetitions and the range of the per-hook
cost.

Run (a few minutes on a 2-core CPU; 1,000 layers take about 10 s a
process)::

    .venv/bin/python benchmarks/bench_hook_scaling.py --sizes 64 256 1000
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def child(n, hooks):
    import paddle

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.layers = paddle.nn.LayerList(
                [paddle.nn.Linear(16, 16) for _ in range(n)]
            )

        def forward(self, x):
            for layer in self.layers:
                x = paddle.tanh(layer(x))
                if hooks:
                    x.register_hook(lambda g: g * 0.5)
            return x.sum()

    paddle.seed(0)
    net = paddle.jit.to_static(Net(), full_graph=True)
    x = paddle.randn([4, 16])
    t0 = time.perf_counter()
    loss = net(x)
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    grad = float(net.layers[0].weight.grad.abs().sum())
    print(json.dumps({"build": t1 - t0, "backward": t2 - t1, "grad": grad}))


def run(python, n, hooks):
    out = subprocess.run(
        [python, __file__, "--child", str(n), str(int(hooks))],
        check=True,
        capture_output=True,
        text=True,
        env=dict(os.environ, GLOG_v="0"),
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--child", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], bool(args.child[1]))
        return

    print(
        "| hooks | first call, no hook | first call, hooks | per hook: "
        "build | per hook: first backward | per hook: first call (range) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        none, hooked, per_build, per_bwd, per_total = [], [], [], [], []
        for rep in range(args.reps):
            order = (False, True) if rep % 2 == 0 else (True, False)
            got = {h: run(args.python, n, h) for h in order}
            a, b = got[False], got[True]
            none.append(a["build"] + a["backward"])
            hooked.append(b["build"] + b["backward"])
            per_build.append((b["build"] - a["build"]) / n * 1e3)
            per_bwd.append((b["backward"] - a["backward"]) / n * 1e3)
            per_total.append(per_build[-1] + per_bwd[-1])
            # the hooks halve each layer's gradient: the first layer's
            # weight gradient is 2**-n of the hook-free one
            assert b["grad"] <= a["grad"], (a, b)
        med = statistics.median
        print(
            f"| {n} | {med(none):.2f} s | {med(hooked):.2f} s | "
            f"{med(per_build):.2f} ms | {med(per_bwd):.2f} ms | "
            f"{med(per_total):.2f} ms ({min(per_total):.2f}-"
            f"{max(per_total):.2f}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
