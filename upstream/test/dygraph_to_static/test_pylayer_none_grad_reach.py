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


class NoGrad(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, d):
        return None, None


class HalfOfSecond(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(b)
        return a * b

    @staticmethod
    def backward(ctx, d):
        (b,) = ctx.saved_tensor()
        return None, d * b * 0.5


def fn(x, y):
    x.register_hook(lambda g: g + 1.0)
    return NoGrad.apply(x, y) + y * 3.0, x * 2.0


def fn_computed_grad(x, y):
    x.register_hook(lambda g: g + 1.0)
    return HalfOfSecond.apply(x, y) + y * 2.0, x * 2.0


class TestPyLayerNoneGradReach(Dy2StTestBase):
    """An input that a PyLayer gives no gradient, and that otherwise feeds
    only an output the caller does not differentiate, gets no gradient and
    runs no hook, as in eager."""

    def setUp(self):
        rng = np.random.default_rng(77)
        self.x = rng.standard_normal([2, 3])
        self.y = rng.standard_normal([2, 3])

    @test_pir_only
    def test_input_without_gradient(self):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        y = paddle.to_tensor(self.y, stop_gradient=False)
        a, _ = paddle.jit.to_static(fn)(x, y)
        a.sum().backward()
        self.assertIsNone(x.grad)
        np.testing.assert_allclose(y.grad.numpy(), np.full([2, 3], 3.0))

    @test_pir_only
    def test_none_beside_a_computed_gradient(self):
        # `return None, d * b * 0.5`: the None is read though the other
        # element is not a single load.
        x = paddle.to_tensor(self.x, stop_gradient=False)
        y = paddle.to_tensor(self.y, stop_gradient=False)
        a, _ = paddle.jit.to_static(fn_computed_grad)(x, y)
        a.sum().backward()
        self.assertIsNone(x.grad)
        np.testing.assert_allclose(
            y.grad.numpy(), self.y * 0.5 + 2.0, rtol=1e-12
        )


if __name__ == '__main__':
    unittest.main()
