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


class DetachedForward(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x.detach() * 2.0

    @staticmethod
    def backward(ctx, d):
        return d * 3.0


def fn(x):
    return DetachedForward.apply(x) * x


class TestPyLayerOutputDifferentiable(Dy2StTestBase):
    """A PyLayer output is differentiable when an input is, however its
    forward computed it: its gradient comes from `backward`."""

    def setUp(self):
        self.x = np.random.default_rng(40).standard_normal([2, 3])

    def grad(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        f(x).sum().backward()
        return x.grad.numpy()

    @test_ast_only
    @test_pir_only
    def test_grad_matches_eager(self):
        np.testing.assert_allclose(
            self.grad(paddle.jit.to_static(fn)),
            self.grad(fn),
            rtol=1e-12,
        )


if __name__ == '__main__':
    unittest.main()
