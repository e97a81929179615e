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


def reads_other_input(x, w):
    x.register_hook(lambda g: g * w + x)
    return paddle.tanh(x) * w


def reads_itself(x, w):
    x.register_hook(lambda g: g * x)
    return paddle.tanh(x) * w + x


class TestRegisterHookOnInputReadsInputs(Dy2StTestBase):
    """A hook on an input of a to_static function may read the function's
    inputs: it reads the call's eager Tensors, as in eager."""

    def setUp(self):
        self.x, self.w = np.random.default_rng(23).standard_normal([2, 3])

    def grads(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        w = paddle.to_tensor(self.w, stop_gradient=False)
        f(x, w).sum().backward()
        return x.grad.numpy(), w.grad.numpy()

    def check(self, fn):
        want = self.grads(fn)
        got = self.grads(paddle.jit.to_static(fn))
        for g, v in zip(got, want):
            np.testing.assert_allclose(g, v, rtol=1e-12)

    @test_ast_only
    @test_pir_only
    def test_hook_reads_other_input(self):
        self.check(reads_other_input)

    @test_ast_only
    @test_pir_only
    def test_hook_reads_the_input_itself(self):
        self.check(reads_itself)


if __name__ == '__main__':
    unittest.main()
