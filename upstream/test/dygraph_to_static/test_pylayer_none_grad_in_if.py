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


class NoneForMiddle(PyLayer):
    @staticmethod
    def forward(ctx, a, b, c):
        ctx.save_for_backward(c)
        return paddle.sin(paddle.sin(b)) * 1.5

    @staticmethod
    def backward(ctx, d):
        (c,) = ctx.saved_tensor()
        return d, None, d * c


def fn(y, z):
    v = z - z
    if y.mean() > 0:
        r = v * z * -1.5
    else:
        r = v / (paddle.square(v) + 1.0) * 2.0
    return paddle.tanh(NoneForMiddle.apply(r, z, v))


class TestPyLayerNoneGradInIf(Dy2StTestBase):
    """`PyLayer.backward` returning None for an input that an `if` branch
    also reads: the `if`'s backward treats it as no gradient."""

    def grads(self, f, y, z):
        y = paddle.to_tensor(y, stop_gradient=False)
        z = paddle.to_tensor(z, stop_gradient=False)
        f(y, z).sum().backward()
        return [None if t.grad is None else t.grad.numpy() for t in (y, z)]

    @test_ast_only
    @test_pir_only
    def test_grads_match_eager(self):
        rng = np.random.default_rng(3)
        y, z = -np.abs(rng.standard_normal([3])), rng.standard_normal([1, 3])
        want = self.grads(fn, y, z)
        got = self.grads(paddle.jit.to_static(fn), y, z)
        for g, w in zip(got, want):
            self.assertEqual(g is None, w is None)
            if w is not None:
                np.testing.assert_allclose(g, w, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
