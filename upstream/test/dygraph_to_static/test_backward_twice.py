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


def two_losses(x, w):
    y = paddle.tanh(x * w)
    return (y * y).sum(), paddle.exp(y).sum()


class TestBackwardTwice(Dy2StTestBase):
    """A pass with retain_graph=True keeps the values the backward of a
    to_static call reads, so another pass over the call gives eager's
    gradients."""

    def run_passes(self, fn):
        x = paddle.to_tensor(
            [[0.5, -1.0, 2.0], [1.5, 0.3, -0.2]], "float64", stop_gradient=False
        )
        w = paddle.to_tensor([1.5, 0.25, -0.75], "float64", stop_gradient=False)
        l1, l2 = fn(x, w)
        l1.backward(retain_graph=True)
        first = [x.grad.numpy().copy(), w.grad.numpy().copy()]
        l2.backward(retain_graph=True)
        l1.backward()
        return first, [x.grad.numpy(), w.grad.numpy()]

    @test_ast_only
    @test_pir_only
    def test_three_passes(self):
        want = self.run_passes(two_losses)
        got = self.run_passes(paddle.jit.to_static(two_losses))
        for g, e in zip(got, want):
            for a, b in zip(g, e):
                np.testing.assert_allclose(a, b, rtol=1e-12)

    @test_ast_only
    @test_pir_only
    def test_call_between_passes(self):
        fn = paddle.jit.to_static(two_losses)
        x = paddle.to_tensor([0.5, -1.0, 2.0], "float64", stop_gradient=False)
        w = paddle.to_tensor([1.5, 0.25, -0.75], "float64")
        l1, l2 = fn(x, w)
        l1.backward(retain_graph=True)
        fn(x * 3.0, w)[0].backward()
        x.clear_grad()
        l2.backward()
        y = paddle.tanh(x * w)
        (want,) = paddle.grad(paddle.exp(y).sum(), x)
        np.testing.assert_allclose(x.grad.numpy(), want.numpy(), rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
