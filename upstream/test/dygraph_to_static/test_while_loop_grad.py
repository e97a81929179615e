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


def counted_loop(x):
    i = paddle.zeros([1], "int64")
    y = x
    while i < 3:
        y = y * 2.0 + x
        i = i + 1
    return y


def value_dependent_loop(x, w):
    y = paddle.cos(x)
    while y.sum() < 10.0:
        y = y * (w + 1.0) + 0.5
    return y


def two_loops(x, w):
    i = paddle.zeros([1], "int64")
    y = x
    while i < 2:
        y = paddle.tanh(y * w)
        i = i + 1
    j = paddle.zeros([1], "int64")
    while j < 3:
        y = y + paddle.exp(y * 0.5)
        j = j + 1
    return y


class TestWhileLoopGrad(Dy2StTestBase):
    """The backward of a tensor-dependent while loop under to_static reads
    the loop's stack and its outlet, two values of one executor variable
    (it failed with "The variable middle_0 should exist")."""

    def grads(self, fn, inputs, to_static):
        tensors = [
            paddle.to_tensor(v, "float64", stop_gradient=False) for v in inputs
        ]
        if to_static:
            fn = paddle.jit.to_static(fn)
        out = fn(*tensors)
        out.sum().backward()
        return [out.numpy()] + [t.grad.numpy() for t in tensors]

    def check(self, fn, *shapes):
        rng = np.random.default_rng(2026)
        for shape in shapes:
            inputs = [
                rng.uniform(0.1, 0.9, shape)
                for _ in range(fn.__code__.co_argcount)
            ]
            want = self.grads(fn, inputs, False)
            for _ in range(2):
                got = self.grads(fn, inputs, True)
                for g, w in zip(got, want):
                    np.testing.assert_allclose(g, w, rtol=1e-12)

    @test_ast_only
    @test_pir_only
    def test_counted_loop(self):
        self.check(counted_loop, [3], [2, 4])

    @test_ast_only
    @test_pir_only
    def test_value_dependent_loop(self):
        self.check(value_dependent_loop, [3], [5])

    @test_ast_only
    @test_pir_only
    def test_two_loops(self):
        self.check(two_loops, [4])


if __name__ == '__main__':
    unittest.main()
