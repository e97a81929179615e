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
from dygraph_to_static_utils import Dy2StTestBase, test_pir_only

import paddle


def grad_of_unused_input(x, y):
    z = paddle.tanh(x) * 2.0
    gx, gy = paddle.grad([z.sum()], [x, y], allow_unused=True)
    return z, gx, gy


class TestToStaticReturnsNoneGrad(Dy2StTestBase):
    """A to_static function returning the None gradient that
    `paddle.grad(..., allow_unused=True)` gives an unused input."""

    def run_fn(self, fn):
        a = np.linspace(-1.0, 1.0, 4)
        x = paddle.to_tensor(a, stop_gradient=False)
        y = paddle.to_tensor(a * 2.0, stop_gradient=False)
        z, gx, gy = fn(x, y)
        self.assertIsNone(gy)
        (z * z).sum().backward()
        return z.numpy(), gx.numpy(), x.grad.numpy()

    @test_pir_only
    def test_matches_eager(self):
        static_fn = paddle.jit.to_static(grad_of_unused_input)
        for got, want in zip(
            self.run_fn(static_fn), self.run_fn(grad_of_unused_input)
        ):
            np.testing.assert_allclose(got, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
