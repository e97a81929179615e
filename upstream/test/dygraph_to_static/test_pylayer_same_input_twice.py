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
from paddle.autograd import PyLayer


class SaveBoth(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b + a

    @staticmethod
    def backward(ctx, d):
        a, b = ctx.saved_tensor()
        return d * (b + 1), d * a * 3


class SumAndNone(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a + b, a * b

    @staticmethod
    def backward(ctx, ds, dp):
        return ds * 2.0, None


def twice(x):
    return SaveBoth.apply(x, x) * x + x


def twice_one_grad_none(x):
    s, p = SumAndNone.apply(x, x)
    return s + p


class TestPyLayerSameInputTwice(Dy2StTestBase):
    """``PyLayer.apply(x, x)``: x gets the sum of the gradients ``backward``
    returns for both places, as in eager."""

    def setUp(self):
        self.x = np.random.default_rng(26).standard_normal([2, 3])

    def grad(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        f(x).sum().backward()
        return x.grad.numpy()

    def check(self, f):
        static_f = paddle.jit.to_static(f)
        np.testing.assert_allclose(
            self.grad(static_f), self.grad(f), rtol=1e-12
        )

    @test_pir_only
    def test_twice(self):
        self.check(twice)

    @test_ast_only
    @test_pir_only
    def test_twice_one_grad_none(self):
        self.check(twice_one_grad_none)


if __name__ == '__main__':
    unittest.main()
