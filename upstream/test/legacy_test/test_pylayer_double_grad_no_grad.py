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

import paddle
from paddle.autograd import PyLayer


class OnceDifferentiable(PyLayer):
    # part of `backward` under `paddle.no_grad()`: a later backward pass
    # goes through the ops outside it only
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, d):
        (x,) = ctx.saved_tensor()
        with paddle.no_grad():
            c = 3.0 * x
        return d * c * x


def penalty(x):
    y = OnceDifferentiable.apply(x)
    (gx,) = paddle.grad([y.sum()], [x], create_graph=True)
    return (gx * x).sum()


def penalty_static(x):
    y = OnceDifferentiable.apply(x)
    (gx,) = paddle.static.gradients([y.sum()], [x])
    return (gx * x).sum()


class TestPyLayerDoubleGradNoGrad(unittest.TestCase):
    def grad(self, fn, a):
        x = paddle.to_tensor(a, stop_gradient=False)
        fn(x).backward()
        return x.grad.numpy()

    def test_to_static(self):
        a = np.array([0.5, 1.0, 2.0])
        want = self.grad(penalty, a)
        np.testing.assert_allclose(want, 6.0 * a * a, rtol=1e-12)
        static_fn = paddle.jit.to_static(penalty, full_graph=True)
        np.testing.assert_allclose(self.grad(static_fn, a), want, rtol=1e-12)

    def test_static_program(self):
        a = np.array([0.5, 1.0, 2.0])
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [3], 'float64')
                x.stop_gradient = False
                (gx,) = paddle.static.gradients([penalty_static(x)], [x])
            (got,) = paddle.static.Executor().run(
                main, feed={'x': a}, fetch_list=[gx]
            )
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, 6.0 * a * a, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
