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


def loop(n, t, y):
    if paddle.in_dynamic_mode():
        for _ in range(n):
            y = y * 1.5 + t
        return y
    i = paddle.zeros([1], "int64")
    _, y = paddle.static.nn.while_loop(
        lambda i, y: i < n, lambda i, y: (i + 1, y * 1.5 + t), [i, y]
    )
    return y


def fn(x, n):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    return loop(n, t, x * 2.0)


class TestTensorHookWhileLoopZeroIterations(unittest.TestCase):
    """A hook on a value that a while_loop body reads runs only if the
    loop ran, as in eager."""

    def check(self, n):
        x_np = np.random.default_rng(55).standard_normal([4])
        x = paddle.to_tensor(x_np, stop_gradient=False)
        fn(x, n).sum().backward()
        want = x.grad.numpy()

        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                xs = paddle.static.data("x", [4], "float64")
                xs.stop_gradient = False
                y = fn(xs, paddle.full([1], n, "int64"))
                (gx,) = paddle.static.gradients([y.sum()], [xs])
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={"x": x_np}, fetch_list=[gx])
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, want, rtol=1e-12)

    def test_loop_runs_zero_times_or_twice(self):
        self.check(0)
        self.check(2)


if __name__ == '__main__':
    unittest.main()
