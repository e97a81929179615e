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


class TwoHeads(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(3, 3)
        self.b = paddle.nn.Linear(3, 3)

    def forward(self, x):
        return self.a(x), self.b(x)


def uses_x_in_first(x, y):
    return paddle.tanh(x) * 3.0 + y, y * 4.0


def uses_x_in_else(x, y):
    if y.sum() > 0:
        out = y * 3.0
    else:
        out = paddle.tanh(x) + y
    return out


class TestToStaticInputGetsNoGradient(Dy2StTestBase):
    """An input or a parameter of a to_static function that no gradient
    reaches in a backward (it feeds only outputs the caller does not
    differentiate, or only an `if` branch that did not run) gets no
    gradient, as in eager: its hooks do not run and its `grad` stays None,
    though the program's grad node gives it zeros."""

    @test_pir_only
    def test_parameter_feeding_an_output_not_differentiated(self):
        calls = []
        net = TwoHeads()
        net.b.weight.register_hook(lambda g: calls.append(1))
        static_net = paddle.jit.to_static(net)
        for _ in range(2):
            first, _ = static_net(paddle.ones([2, 3]))
            first.sum().backward()
        self.assertIsNone(net.b.weight.grad)
        self.assertEqual(calls, [])
        self.assertIsNotNone(net.a.weight.grad)

    @test_pir_only
    def test_input_feeding_an_output_not_differentiated(self):
        x, y = np.random.default_rng(51).standard_normal([2, 3])
        xs = [paddle.to_tensor(a, stop_gradient=False) for a in (x, y)]
        calls = []
        xs[0].register_hook(lambda g: calls.append(1) or g + 1.0)
        _, second = paddle.jit.to_static(uses_x_in_first)(*xs)
        second.sum().backward()
        self.assertIsNone(xs[0].grad)
        self.assertEqual(calls, [])
        np.testing.assert_allclose(xs[1].grad.numpy(), np.full([3], 4.0))

    @test_ast_only
    @test_pir_only
    def test_input_read_only_by_the_branch_that_did_not_run(self):
        rng = np.random.default_rng(52)
        x, y = rng.standard_normal([3]), np.abs(rng.standard_normal([3]))
        static_fn = paddle.jit.to_static(uses_x_in_else)
        for sign, reached in ((1.0, False), (-1.0, True)):
            got, want = [], []
            for fn, calls in ((static_fn, got), (uses_x_in_else, want)):
                xt = paddle.to_tensor(x, stop_gradient=False)
                yt = paddle.to_tensor(y * sign, stop_gradient=False)
                xt.register_hook(lambda g, calls=calls: calls.append(1))
                fn(xt, yt).sum().backward()
                calls.append(None if xt.grad is None else xt.grad.numpy())
            self.assertEqual(len(got), len(want))
            if reached:
                np.testing.assert_allclose(got[-1], want[-1], rtol=1e-12)
            else:
                self.assertEqual(got, [None])
                self.assertEqual(want, [None])


if __name__ == '__main__':
    unittest.main()
