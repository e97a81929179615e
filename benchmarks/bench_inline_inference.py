"""Paddle Inference latency: a saved model with its PyLayer inlined vs not.

Saves the seed ``SimpleNet`` (``Linear(4, 8)`` then the ``cus_tanh`` PyLayer)
twice, with ``paddle.jit.save(..., inline_pylayer=True)`` and without, and
times ``predictor.run()`` for both in one process, interleaved round by round
(the machines are noisy), reporting medians and their ratio.

    .venv/bin/python benchmarks/bench_inline_inference.py [--rounds 30] [--runs 200]
"""

import argparse
import os
import tempfile
import time

import numpy as np
import paddle
from paddle.autograd import PyLayer


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - ctx.func(y))


class SimpleNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        return cus_tanh.apply(self.linear(x), func1=paddle.tanh)


def predictor(prefix, x):
    config = paddle.inference.Config(prefix + ".json", prefix + ".pdiparams")
    config.disable_gpu()
    config.disable_glog_info()
    pred = paddle.inference.create_predictor(config)
    handle = pred.get_input_handle(pred.get_input_names()[0])
    handle.reshape(x.shape)
    handle.copy_from_cpu(x)
    return pred


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--batch", type=int, default=7)
    args = parser.parse_args()

    paddle.seed(0)
    net = SimpleNet()
    spec = [paddle.static.InputSpec([-1, 4], "float32", "x")]
    x = np.random.default_rng(0).standard_normal([args.batch, 4])
    x = x.astype("float32")
    with tempfile.TemporaryDirectory() as d:
        paddle.jit.save(net, os.path.join(d, "plain"), input_spec=spec)
        paddle.jit.save(
            net,
            os.path.join(d, "inlined"),
            input_spec=spec,
            inline_pylayer=True,
        )
        preds = {
            n: predictor(os.path.join(d, n), x) for n in ("plain", "inlined")
        }
        for pred in preds.values():
            for _ in range(50):
                pred.run()
        times = {n: [] for n in preds}
        for _ in range(args.rounds):
            for name, pred in preds.items():
                start = time.perf_counter()
                for _ in range(args.runs):
                    pred.run()
                times[name].append((time.perf_counter() - start) / args.runs)
    med = {n: float(np.median(v)) * 1e6 for n, v in times.items()}
    print("| program | median us/run |")
    print("|---|---|")
    for name, us in med.items():
        print(f"| {name} | {us:.1f} |")
    print(f"\ninlined / plain = {med['inlined'] / med['plain']:.3f}")


if __name__ == "__main__":
    main()
