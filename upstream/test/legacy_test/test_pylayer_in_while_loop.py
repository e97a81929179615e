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


class TimesTwo(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class TestPyLayerInWhileLoop(unittest.TestCase):
    """A PyLayer in the body of a static while_loop is differentiated as in
    eager's Python loop."""

    def check(self, body):
        x_np = np.random.default_rng(52).uniform(0.2, 0.9, [4])
        x = paddle.to_tensor(x_np, stop_gradient=False)
        y = x
        for _ in range(3):
            y = body(y)
        y.sum().backward()
        want_y, want_grad = y.numpy(), x.grad.numpy()

        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                xs = paddle.static.data("x", [4], "float64")
                xs.stop_gradient = False
                i = paddle.zeros([1], "int64")
                _, ys = paddle.static.nn.while_loop(
                    lambda i, y: i < 3,
                    lambda i, y: (i + 1, body(y)),
                    [i, xs],
                )
                (gx,) = paddle.static.gradients([ys.sum()], [xs])
            exe = paddle.static.Executor(paddle.CPUPlace())
            got_y, got_grad = exe.run(
                main, feed={"x": x_np}, fetch_list=[ys, gx]
            )
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got_y, want_y, rtol=1e-12)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12)

    def test_pylayer_saving_a_tensor(self):
        self.check(lambda y: paddle.sin(Cube.apply(y)))

    def test_pylayer_saving_nothing(self):
        # the backward of the body reads nothing from the loop's own stack
        self.check(TimesTwo.apply)


if __name__ == '__main__':
    unittest.main()
