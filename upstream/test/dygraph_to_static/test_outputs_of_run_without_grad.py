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
    test_pir_only,
)

import paddle
from paddle.autograd import PyLayer


class NoInputGrad(PyLayer):
    @staticmethod
    def forward(ctx, a):
        return paddle.sin(a) * 2.0

    @staticmethod
    def backward(ctx, d):
        return None


def fn(x):
    # `x` gets no gradient from this call, so it runs detached
    y = NoInputGrad.apply(x)
    return paddle.sin(y), y * y


class TestOutputsOfRunWithoutGrad(Dy2StTestBase):
    """A run that gives no input a gradient returns outputs with a grad
    node, as eager does: not leaves that keep the caller's gradient."""

    def setUp(self):
        self.x = np.random.default_rng(74).standard_normal([2, 3])

    def run_fn(self, f, hook):
        calls = []
        x = paddle.to_tensor(self.x, stop_gradient=False)
        if hook:
            x.register_hook(lambda g: calls.append(g))
        a, b = f(x)
        (a.sum() + b.sum()).backward()
        return [a.is_leaf, a.grad is None, b.grad is None, x.grad, calls]

    def check(self, hook):
        want = self.run_fn(fn, hook)
        self.assertEqual(want, [False, True, True, None, []])
        static_fn = paddle.jit.to_static(fn)
        for _ in range(2):
            self.assertEqual(self.run_fn(static_fn, hook), want)

    @test_pir_only
    def test_outputs_are_not_leaves(self):
        self.check(hook=False)

    @test_pir_only
    def test_hook_on_input_without_grad(self):
        self.check(hook=True)


if __name__ == '__main__':
    unittest.main()
