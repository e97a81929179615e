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
    y = x * w
    (gx,) = paddle.grad([(y * y).sum()], [x], retain_graph=True)
    return (y + gx).sum()


def grads(f, x, w):
    x = paddle.to_tensor(x, stop_gradient=False)
    w = paddle.to_tensor(w, stop_gradient=False)
    f(x, w).backward()
    return x.grad.numpy(), w.grad.numpy()


class TestPaddleGradWithoutCreateGraph(Dy2StTestBase):
    """Without create_graph, the gradients paddle.grad returns inside a
    static graph are not differentiated by a later backward, as in eager."""

    def setUp(self):
        rng = np.random.default_rng(66)
        self.x = rng.standard_normal([2, 3])
        self.w = rng.standard_normal([3])

    @test_pir_only
    def test_grads_match_eager(self):
        static_fn = paddle.jit.to_static(fn)
        for got, want in zip(
            grads(static_fn, self.x, self.w), grads(fn, self.x, self.w)
        ):
            np.testing.assert_allclose(got, want, rtol=1e-12)


class TestPaddleGradWithoutCreateGraphStaticProgram(unittest.TestCase):
    """The same in a static program."""

    def setUp(self):
        rng = np.random.default_rng(66)
        self.x = rng.standard_normal([2, 3])
        self.w = rng.standard_normal([3])

    def test_static_program(self):
        want = grads(fn, self.x, self.w)
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [2, 3], 'float64')
                w = paddle.static.data('w', [3], 'float64')
                x.stop_gradient = w.stop_gradient = False
                grad_vars = paddle.static.gradients([fn(x, w)], [x, w])
            exe = paddle.static.Executor(paddle.CPUPlace())
            got = exe.run(
                main, feed={'x': self.x, 'w': self.w}, fetch_list=grad_vars
            )
        finally:
            paddle.disable_static()
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
