"""Seed example (initial anchor): PyLayer with Tensor-only arguments.

Trains ``SimpleNet`` 10 steps eagerly and under ``to_static`` (AST,
``full_graph=True``, and the default SOT mode), checks the losses match,
then saves with ``paddle.jit.save``, loads with ``paddle.jit.load`` and
with ``paddle.inference`` and checks batch sizes 1, 3 and 7 against eager.
"""

import os
import sys
import tempfile

import numpy as np
import paddle
from paddle.autograd import PyLayer


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


class SimpleNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        y = self.linear(x)
        out = cus_tanh.apply(y)
        return paddle.mean(out)


def make_net():
    paddle.seed(7)
    return SimpleNet()


def train(net, steps=10):
    paddle.seed(2024)
    sgd = paddle.optimizer.SGD(0.001, parameters=net.parameters())
    losses = []
    for _ in range(steps):
        out = net(paddle.randn([2, 4]))
        out.backward()
        sgd.step()
        sgd.clear_grad()
        losses.append(out.item())
    return losses


def main():
    eager = make_net()
    want = train(eager)
    for full_graph in (True, False):
        net = paddle.jit.to_static(make_net(), full_graph=full_graph)
        got = train(net)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        print(f"full_graph={full_graph}: losses match eager", got[-1])

    net = paddle.jit.to_static(make_net(), full_graph=True)
    train(net)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "simple_net")
        spec = paddle.static.InputSpec(shape=[-1, 4], dtype="float32", name="x")
        paddle.jit.save(net, path, input_spec=[spec])
        loaded = paddle.jit.load(path)
        model = path + ".json"
        if not os.path.exists(model):
            model = path + ".pdmodel"
        config = paddle.inference.Config(model, path + ".pdiparams")
        config.disable_gpu()
        predictor = paddle.inference.create_predictor(config)
        print("predictor inputs:", predictor.get_input_names())
        rng = np.random.default_rng(0)
        for b in (1, 3, 7):
            a = rng.standard_normal([b, 4]).astype("float32")
            ref = eager(paddle.to_tensor(a)).numpy()
            np.testing.assert_allclose(
                loaded(paddle.to_tensor(a)).numpy(), ref, rtol=1e-6
            )
            inp = predictor.get_input_handle(predictor.get_input_names()[0])
            inp.reshape(a.shape)
            inp.copy_from_cpu(a)
            predictor.run()
            out = predictor.get_output_handle(predictor.get_output_names()[0])
            np.testing.assert_allclose(out.copy_to_cpu(), ref, rtol=1e-6)
            print(f"batch {b}: jit.load and inference match eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
