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


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3.0 * x * x


class SavesSquare(PyLayer):
    @staticmethod
    def forward(ctx, x):
        s = x * x
        ctx.save_for_backward(x, s)
        return s * x

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensor()
        return dy * 2.0 * s + dy * x * x


def penalty(layer, x):
    (g,) = paddle.grad(layer.apply(x).sum(), x, create_graph=True)
    return (g * g).sum()


class TestPyLayerStaticDoubleGrad(unittest.TestCase):
    def setUp(self):
        self.x = np.array([0.5, -1.0, 2.0], dtype='float64')

    def run_static(self, build):
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data('x', [3], 'float64')
                x.stop_gradient = False
                fetch = build(x)
            exe = paddle.static.Executor(paddle.CPUPlace())
            return exe.run(main, feed={'x': self.x}, fetch_list=fetch)
        finally:
            paddle.disable_static()

    def test_static_program_double_backward(self):
        def build(x):
            y = Cube.apply(x)
            (g,) = paddle.static.gradients([y.sum()], [x])
            (gg,) = paddle.static.gradients([(g * g).sum()], [x])
            return [g, gg]

        g, gg = self.run_static(build)
        np.testing.assert_allclose(g, 3 * self.x**2, rtol=1e-12)
        # d/dx sum((3 x^2)^2) = 36 x^3
        np.testing.assert_allclose(gg, 36 * self.x**3, rtol=1e-12)

    def test_static_pylayer_backward_reading_its_input(self):
        def build(x):
            y = paddle.static.nn.static_pylayer(
                lambda a: a * a * a, [x], lambda d: d * 3.0 * x * x
            )
            (g,) = paddle.static.gradients([y.sum()], [x])
            (gg,) = paddle.static.gradients([g.sum()], [x])
            return [gg]

        (gg,) = self.run_static(build)
        np.testing.assert_allclose(gg, 6 * self.x, rtol=1e-12)

    def test_to_static_double_backward_matches_eager(self):
        for layer in (Cube, SavesSquare):
            grads = []
            for fn in (penalty, paddle.jit.to_static(penalty, full_graph=True)):
                x = paddle.to_tensor(self.x, stop_gradient=False)
                fn(layer, x).backward()
                grads.append(x.grad.numpy())
            np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
        # a tensor computed in `forward` is a constant of the double backward
        np.testing.assert_allclose(grads[0], 12 * self.x**3, rtol=1e-12)

    def test_pylayer_in_a_while_loop_is_a_clear_error(self):
        def build(x):
            i = paddle.full([1], 0, 'int64')
            _, y = paddle.static.nn.while_loop(
                lambda i, y: i < 2, lambda i, y: (i + 1, Cube.apply(y)), [i, x]
            )
            (g,) = paddle.static.gradients([y.sum()], [x])
            with self.assertRaisesRegex(NotImplementedError, 'in a loop'):
                paddle.static.gradients([(g * g).sum()], [x])
            return [g]

        (g,) = self.run_static(build)
        np.testing.assert_allclose(g, 9 * self.x**8, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
