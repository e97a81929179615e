# Copyright (c) 2026 PaddlePaddle Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import os
import unittest

import numpy as np
from dygraph_to_static_utils import Dy2StTestBase, test_pir_only

import paddle
from paddle.base import core

WIDTH = 256


def block(x, params):
    for weight, bias in zip(params[::2], params[1::2]):
        x = paddle.tanh(paddle.matmul(x, weight) + bias)
    return x


class Recompute(paddle.autograd.PyLayer):
    """Keeps its input; runs the block again in backward."""

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


class Net(paddle.nn.Layer):
    def __init__(self, blocks):
        super().__init__()
        self.layers = paddle.nn.LayerList(
            [paddle.nn.Linear(WIDTH, WIDTH) for _ in range(4 * blocks)]
        )

    def forward(self, x):
        params = [
            p for layer in self.layers for p in (layer.weight, layer.bias)
        ]
        for i in range(0, len(params), 8):
            x = Recompute.apply(x, *params[i : i + 8])
        return x.mean()


def step_memory(net, batch=1024):
    """(MiB the forward leaves allocated, MiB at the peak of the step)."""
    x = paddle.randn([batch, WIDTH])  # an activation: 1 MiB at 1024
    x.stop_gradient = False
    for _ in range(2):
        core.host_memory_stat_reset_peak_value("Allocated", 0)
        before = core.host_memory_stat_current_value("Allocated", 0)
        loss = net(x)
        held = core.host_memory_stat_current_value("Allocated", 0)
        loss.backward()
        peak = core.host_memory_stat_peak_value("Allocated", 0)
        net.clear_gradients()
    return (held - before) / 2**20, (peak - before) / 2**20


class TestPyLayerRecomputeMemory(Dy2StTestBase):
    """A PyLayer that saves its input and recomputes its block in
    ``backward`` holds in to_static what it holds in eager."""

    def setUp(self):
        os.environ["MIN_GRAPH_SIZE"] = "0"

    @test_pir_only
    def test_memory_and_gradients_are_eagers(self):
        paddle.seed(0)
        net = Net(6)
        eager_held, eager_peak = step_memory(net)
        held, peak = step_memory(paddle.jit.to_static(net))
        # what enters each block; no copy of the saved tensors
        self.assertLessEqual(held, eager_held + 1.5)
        # each block's activations only while its gradients need them
        self.assertLessEqual(peak, 1.1 * eager_peak)

        static = paddle.jit.to_static(net)
        for batch in (4, 6):
            x = paddle.to_tensor(
                np.random.default_rng(batch).standard_normal((batch, WIDTH)),
                dtype="float32",
            )
            grads = []
            for f in (net, static):
                x.stop_gradient = False
                x.clear_gradient()
                f(x).backward()
                grads.append(
                    [x.grad.numpy()]
                    + [p.grad.numpy() for p in net.parameters()]
                )
                net.clear_gradients()
            for got, want in zip(grads[1], grads[0]):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


if __name__ == '__main__':
    unittest.main()
