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


def branch(y):
    return paddle.static.nn.cond(
        y.sum() > 0, lambda: paddle.sin(y) * 2.0, lambda: paddle.cos(y)
    )


class TestCondInWhileLoopGrad(unittest.TestCase):
    """A cond whose result a while_loop body yields as the loop variable
    gets each iteration's gradient, as in eager's Python loop."""

    def test_cond_result_as_loop_variable(self):
        x_np = np.array([0.3, -0.5, 0.9])
        x = paddle.to_tensor(x_np, stop_gradient=False)
        y = x
        for _ in range(3):
            y = branch(y)
        y.sum().backward()
        want_y, want_grad = y.numpy(), x.grad.numpy()

        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                xs = paddle.static.data("x", [3], "float64")
                xs.stop_gradient = False
                i = paddle.zeros([1], "int64")
                _, ys = paddle.static.nn.while_loop(
                    lambda i, y: i < 3, lambda i, y: (i + 1, branch(y)), [i, xs]
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


if __name__ == '__main__':
    unittest.main()
