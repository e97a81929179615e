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


def only_return_none(x):
    return None


class OnlyReturnsNone(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, d):
        return None


class TestReturnNoneOnly(Dy2StTestBase):
    """A function whose body is only `return None` converts (the return
    transformer left an empty body: IndentationError)."""

    @test_ast_only
    @test_pir_only
    def test_function(self):
        x = paddle.to_tensor([1.0, 2.0])
        static_fn = paddle.jit.to_static(only_return_none)
        self.assertIsNone(static_fn(x))

    @test_ast_only
    @test_pir_only
    def test_pylayer_backward(self):
        # `PyLayer.backward` is converted too
        def fn(x, y):
            return OnlyReturnsNone.apply(x) + y

        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        y = paddle.to_tensor([3.0, 4.0], stop_gradient=False)
        paddle.jit.to_static(fn)(x, y).sum().backward()
        np.testing.assert_allclose(y.grad.numpy(), [1.0, 1.0])


if __name__ == '__main__':
    unittest.main()
