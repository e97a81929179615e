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


def run(fn, x_np):
    x = paddle.to_tensor(x_np, stop_gradient=False)
    out = fn(x)
    (out * out).sum().backward()
    return out.numpy(), x.grad.numpy()


class TestTensorRegisterHookFullGraph(Dy2StTestBase):
    def setUp(self):
        self.x = np.random.default_rng(1).standard_normal([2, 3])

    def check(self, fn):
        want = run(fn, self.x)
        got = run(paddle.jit.to_static(fn), self.x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)

    @test_ast_only
    @test_pir_only
    def test_hook_on_intermediate_after_use(self):
        def fn(x):
            t = paddle.tanh(x)
            u = t * x
            t.register_hook(lambda g: g * 5)
            return u + t

        self.check(fn)

    @test_ast_only
    @test_pir_only
    def test_hook_on_input(self):
        def fn(x):
            x.register_hook(lambda g: g * 2)
            return paddle.exp(x)

        self.check(fn)

    @test_ast_only
    @test_pir_only
    def test_hook_on_output(self):
        def fn(x):
            y = x * 3
            y.register_hook(lambda g: g - 1)
            return y

        self.check(fn)


if __name__ == '__main__':
    unittest.main()
