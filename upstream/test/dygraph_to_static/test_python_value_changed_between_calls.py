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

import unittest

import numpy as np
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle

SCALE = 2.0


class GradReverse(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x, coeff):
        ctx.coeff = coeff
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        return -g * ctx.coeff


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 2)
        self.coeff = 1.0

    def forward(self, x):
        h = self.fc(x)
        h.register_hook(lambda g: g * SCALE)
        return GradReverse.apply(h, self.coeff).sum() * SCALE


def scaled(x):
    return x * SCALE


class TestPythonValueChangedBetweenCalls(Dy2StTestBase):
    """A global, a Layer attribute passed to `PyLayer.apply` and a global
    read by a hook that change between calls: the program traced with the
    old values is not reused."""

    def run_steps(self, to_static):
        global SCALE
        paddle.seed(2026)
        net = Net()
        fn = scaled
        if to_static:
            net = paddle.jit.to_static(net)
            fn = paddle.jit.to_static(scaled)
        x = paddle.to_tensor(
            np.linspace(-1.0, 1.0, 6).reshape([2, 3]).astype('float32')
        )
        out = []
        try:
            for step in range(3):
                SCALE = 2.0 + step
                net.coeff = 0.5 * step
                loss = net(x)
                loss.backward()
                out += [loss.numpy(), net.fc.weight.grad.numpy()]
                out.append(fn(x).numpy())
                net.clear_gradients()
        finally:
            SCALE = 2.0
        return out

    @test_ast_only
    @test_pir_only
    def test_equals_eager(self):
        for got, want in zip(self.run_steps(True), self.run_steps(False)):
            np.testing.assert_allclose(got, want, rtol=1e-6)


if __name__ == '__main__':
    unittest.main()
