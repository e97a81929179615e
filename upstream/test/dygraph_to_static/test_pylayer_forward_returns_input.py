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


class Id(PyLayer):
    @staticmethod
    def forward(ctx, a):
        return a

    @staticmethod
    def backward(ctx, d):
        return d * 2


def used_after(x):
    y = x * 2
    return Id.apply(y) + y  # eager: both terms go through backward


def not_used_after(x):
    return Id.apply(x * 2) * 3


class TestPyLayerForwardReturnsInput(Dy2StTestBase):
    """A ``forward`` returning its input: eager applies the layer in place,
    which static graphs cannot do; they raise a clear error where the
    result would differ from eager's."""

    def setUp(self):
        self.x = np.random.default_rng(27).standard_normal([2, 3])

    def grad(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        f(x).sum().backward()
        return x.grad.numpy()

    def check(self, f):
        static_f = paddle.jit.to_static(f)
        np.testing.assert_allclose(
            self.grad(static_f), self.grad(f), rtol=1e-12
        )

    @test_ast_only
    @test_pir_only
    def test_input_used_after_apply_is_clear_error(self):
        static_f = paddle.jit.to_static(used_after)
        with self.assertRaisesRegex(
            NotImplementedError, 'returns its input Tensor'
        ):
            self.grad(static_f)

    @test_ast_only
    @test_pir_only
    def test_input_not_used_after_apply_matches_eager(self):
        self.check(not_used_after)
        with self.assertRaisesRegex(
            NotImplementedError, 'returns its input Tensor'
        ):
            self.grad(paddle.jit.to_static(used_after))


if __name__ == '__main__':
    unittest.main()
