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


def body(y):
    m = paddle.cos(y)
    t = paddle.sin(y)
    t.register_hook(lambda g: g * m + 1.0)
    t.register_hook(lambda g: None)
    t.register_hook(lambda g: g + 100.0).remove()
    return t * 1.5


class TestTensorHookInWhileLoop(unittest.TestCase):
    """A hook registered in the body of a static while_loop runs at each
    iteration, as in eager's Python loop."""

    def test_hook_in_while_body(self):
        x_np = np.random.default_rng(53).standard_normal([4])
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
                    lambda i, y: i < 3, lambda i, y: (i + 1, body(y)), [i, xs]
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

    def test_hook_in_to_static_while(self):
        def fn(x):
            i = paddle.zeros([1], "int64")
            while i < 3:
                x = body(x)
                i = i + 1
            return x

        x_np = np.random.default_rng(54).standard_normal([4])
        results = []
        for f in (fn, paddle.jit.to_static(fn, full_graph=True)):
            x = paddle.to_tensor(x_np, stop_gradient=False)
            y = f(x)
            y.sum().backward()
            results.append((y.numpy(), x.grad.numpy()))
        (want_y, want_grad), (got_y, got_grad) = results
        np.testing.assert_allclose(got_y, want_y, rtol=1e-12)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
