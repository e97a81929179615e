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


def fn(x, w):
    # The outer backward builds two `scale` ops of one gradient for the two
    # operands of `multiply_double_grad` (`y * y`); CSE merges them.
    y = x * w
    (gx,) = paddle.grad([(y * y).sum()], [x], create_graph=True)
    return (y + gx * w).sum()


class TestDoubleGradOperandsMergedByCSE(Dy2StTestBase):
    """CSE makes two operands of one op the same value: the inplace pass must
    not overwrite it before the op has read both."""

    def setUp(self):
        rng = np.random.default_rng(66)
        self.x = rng.standard_normal([2, 3])
        self.w = rng.standard_normal([3])

    def grads(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        w = paddle.to_tensor(self.w, stop_gradient=False)
        f(x, w).backward()
        return x.grad.numpy(), w.grad.numpy()

    @test_pir_only
    def test_grads_match_eager(self):
        static_fn = paddle.jit.to_static(fn)
        for _ in range(2):
            for got, want in zip(self.grads(static_fn), self.grads(fn)):
                np.testing.assert_allclose(got, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
