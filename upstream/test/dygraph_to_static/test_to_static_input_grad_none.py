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


class NoneGrad(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, d):
        return d * 2.0, None


def detached(x, y):
    return x * 2.0 + y.detach()


def pylayer_none_grad(x, y):
    return NoneGrad.apply(x, y)


class TestToStaticInputGradNone(Dy2StTestBase):
    """An input that gets no gradient from a to_static program keeps
    ``grad`` None, as in eager."""

    def setUp(self):
        self.x, self.y = np.random.default_rng(33).standard_normal([2, 3])

    def grads(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        y = paddle.to_tensor(self.y, stop_gradient=False)
        f(x, y).sum().backward()
        return x.grad, y.grad

    def check(self, f):
        want_x, want_y = self.grads(f)
        self.assertIsNone(want_y)
        static_f = paddle.jit.to_static(f)
        got_x, got_y = self.grads(static_f)
        self.assertIsNone(got_y)
        np.testing.assert_allclose(got_x.numpy(), want_x.numpy(), rtol=1e-12)

    @test_pir_only
    def test_detached(self):
        self.check(detached)

    @test_ast_only
    @test_pir_only
    def test_pylayer_none_grad(self):
        self.check(pylayer_none_grad)


if __name__ == '__main__':
    unittest.main()
