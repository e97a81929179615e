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


def hook_on_value(x):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    return t * 3.0, x * 4.0


def hook_on_input(x, y):
    x.register_hook(lambda g: g + 1.0)
    return paddle.tanh(x) * 3.0 + y, y * 4.0


class TwoHeads(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(3, 3)
        self.b = paddle.nn.Linear(3, 3)

    def forward(self, x):
        self.b.weight.register_hook(lambda g: g + 1.0)
        return self.a(x), self.b(x)


class TestRegisterHookUndifferentiatedOutput(Dy2StTestBase):
    """A hook on a value that feeds only outputs of a to_static program
    that the caller does not differentiate must not run (eager gives the
    value no gradient), though the program's grad node gives them zeros."""

    def grads(self, fn, inputs, picked):
        xs = [paddle.to_tensor(a, stop_gradient=False) for a in inputs]
        outs = fn(*xs)
        outs = [outs] if isinstance(outs, paddle.Tensor) else outs
        sum(outs[i].sum() for i in picked).backward()
        return [None if x.grad is None else x.grad.numpy() for x in xs]

    def check(self, fn, inputs, picked):
        static_fn = paddle.jit.to_static(fn)
        got = self.grads(static_fn, inputs, picked)
        want = self.grads(fn, inputs, picked)
        for g, w in zip(got, want):
            if w is None:
                self.assertTrue(g is None or not np.any(g))
            else:
                np.testing.assert_allclose(g, w, rtol=1e-12)

    @test_pir_only
    def test_hook_on_value(self):
        x = np.random.default_rng(50).standard_normal([3])
        for picked in ((0,), (1,), (0, 1)):
            self.check(hook_on_value, [x], picked)

    @test_pir_only
    def test_hook_on_input_gets_no_gradient(self):
        x, y = np.random.default_rng(50).standard_normal([2, 3])
        static_fn = paddle.jit.to_static(hook_on_input)
        grad_x, _ = self.grads(static_fn, [x, y], (1,))
        self.assertIsNone(grad_x)
        self.check(hook_on_input, [x, y], (0,))

    @test_ast_only
    @test_pir_only
    def test_non_leaf_input_without_gradient_raises(self):
        w, y = (
            paddle.to_tensor(a, stop_gradient=False)
            for a in np.random.default_rng(50).standard_normal([2, 3])
        )
        static_fn = paddle.jit.to_static(hook_on_input)
        _, second = static_fn(w * 1.0, y)
        with self.assertRaisesRegex(OSError, "not a leaf Tensor"):
            second.sum().backward()

    @test_pir_only
    def test_parameter_hook_gets_no_gradient(self):
        net = paddle.jit.to_static(TwoHeads())
        first, _ = net(paddle.ones([2, 3]))
        first.sum().backward()
        self.assertIsNone(net.b.weight.grad)


if __name__ == '__main__':
    unittest.main()
