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


class TestReturnNoneOnly(unittest.TestCase):
    """A function whose body is only `return None` converts (the return
    transformer left an empty body: IndentationError)."""

    def test_function(self):
        x = paddle.to_tensor([1.0, 2.0])
        static_fn = paddle.jit.to_static(only_return_none, full_graph=True)
        self.assertIsNone(static_fn(x))

    def test_pylayer_backward(self):
        def fn(x, y):
            return OnlyReturnsNone.apply(x) + y

        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        y = paddle.to_tensor([3.0, 4.0], stop_gradient=False)
        paddle.jit.to_static(fn, full_graph=True)(x, y).sum().backward()
        self.assertIsNone(x.grad)
        np.testing.assert_allclose(y.grad.numpy(), [1.0, 1.0])


if __name__ == '__main__':
    unittest.main()
