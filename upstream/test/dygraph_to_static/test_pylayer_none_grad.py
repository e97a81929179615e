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


class NoneGrad(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(y)
        return x * y

    @staticmethod
    def backward(ctx, dz):
        (y,) = ctx.saved_tensor()
        return dz * y, None


def run(fn, *arrays):
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*xs)
    (out * out).sum().backward()
    return [out.numpy()] + [x.grad.numpy() for x in xs]


class TestPyLayerNoneGrad(Dy2StTestBase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.x, self.y = rng.standard_normal([2, 2, 3])

    @test_ast_only
    @test_pir_only
    def test_none_grad_for_input_used_elsewhere(self):
        def fn(x, y):
            return NoneGrad.apply(x, y) + y * 3

        want = run(fn, self.x, self.y)
        got = run(paddle.jit.to_static(fn), self.x, self.y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


class TestStaticPyLayerNoneGrad(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.x, self.y = rng.standard_normal([2, 2, 3])

    def test_static_pylayer_backward_returns_none(self):
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data('x', [2, 3], 'float64')
                y = paddle.static.data('y', [2, 3], 'float64')
                x.stop_gradient = y.stop_gradient = False
                out = paddle.static.nn.static_pylayer(
                    lambda a, b: a * 2 + b,
                    [x, y],
                    lambda d: (d * 2, None),
                )
                loss = (out + y * 3).sum()
                gx, gy = paddle.static.gradients([loss], [x, y])
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            res = exe.run(
                main, feed={'x': self.x, 'y': self.y}, fetch_list=[gx, gy]
            )
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(res[0], np.full([2, 3], 2.0))
        np.testing.assert_allclose(res[1], np.full([2, 3], 3.0))


if __name__ == '__main__':
    unittest.main()
