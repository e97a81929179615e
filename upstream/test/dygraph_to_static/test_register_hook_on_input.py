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


def fn(x):
    x.register_hook(lambda g: g * 10)
    return paddle.tanh(x)


class TestRegisterHookOnInput(Dy2StTestBase):
    """A hook on an input of a to_static function sees the input's total
    gradient, uses by the caller included, as in eager."""

    def setUp(self):
        self.x = np.random.default_rng(17).standard_normal([2, 3])

    def run_caller(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        (f(x).sum() + (x * x).sum()).backward()
        return x.grad.numpy()

    @test_pir_only
    def test_caller_uses_included(self):
        np.testing.assert_allclose(
            self.run_caller(paddle.jit.to_static(fn)),
            self.run_caller(fn),
            rtol=1e-12,
        )

    @test_ast_only
    @test_pir_only
    def test_hook_reading_a_traced_tensor_is_a_clear_error(self):
        def reads_traced(x):
            w = paddle.exp(x)
            x.register_hook(lambda g: g * w)
            return x * w

        static_fn = paddle.jit.to_static(reads_traced)
        with self.assertRaisesRegex(
            NotImplementedError, 'reads a tensor computed in the function'
        ):
            self.run_caller(static_fn)


if __name__ == '__main__':
    unittest.main()
