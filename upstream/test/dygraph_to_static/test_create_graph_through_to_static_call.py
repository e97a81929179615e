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


def tanh_of_product(x, w):
    return paddle.tanh(x * w)


class TestCreateGraphThroughToStaticCall(Dy2StTestBase):
    def leaves(self):
        rng = np.random.default_rng(0)
        return [
            paddle.to_tensor(a, stop_gradient=False)
            for a in rng.standard_normal((2, 3))
        ]

    @test_ast_only
    @test_pir_only
    def test_gradient_of_the_gradient_is_a_clear_error(self):
        static_fn = paddle.jit.to_static(tanh_of_product)
        x, w = self.leaves()
        (g,) = paddle.grad(static_fn(x, w).sum(), x, create_graph=True)
        ex, ew = self.leaves()
        (eg,) = paddle.grad(
            tanh_of_product(ex, ew).sum(), ex, create_graph=True
        )
        np.testing.assert_allclose(g.numpy(), eg.numpy(), rtol=1e-12)
        with self.assertRaisesRegex(OSError, 'cannot be differentiated'):
            (g * g).sum().backward()
        # a gradient whose path has no to_static call is differentiable
        x, w = self.leaves()
        y = static_fn(w.detach(), w.detach()) + x * x
        (g,) = paddle.grad(y.sum(), x, create_graph=True)
        (g * g).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 8 * x.numpy(), rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
