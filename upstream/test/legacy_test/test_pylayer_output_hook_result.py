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


class Pair(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x, x * 3.0

    @staticmethod
    def backward(ctx, da, db):
        (x,) = ctx.saved_tensor()
        return 2.0 * x * da + 3.0 * db


class TestPyLayerOutputHookResult(unittest.TestCase):
    """The result of a hook on a PyLayer's output is the gradient that
    `backward` gets, as for the output of any other op."""

    def test_hook_result_replaces_gradient(self):
        x = paddle.to_tensor([0.5, -1.0, 2.0], stop_gradient=False)
        a, b = Pair.apply(x)
        a.register_hook(lambda g: g * 10.0)
        (a + b).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2.0 * 10.0 * x.numpy() + 3.0)

    def test_hooks_chain_in_order(self):
        x = paddle.to_tensor([0.5, -1.0, 2.0], stop_gradient=False)
        a, b = Pair.apply(x)
        b.register_hook(lambda g: g + 1.0)
        b.register_hook(lambda g: g * 4.0)
        (a + b).sum().backward()
        np.testing.assert_allclose(
            x.grad.numpy(), 2.0 * x.numpy() + 3.0 * (1.0 + 1.0) * 4.0
        )


if __name__ == '__main__':
    unittest.main()
