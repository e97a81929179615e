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


def body(a, b, x, w):
    # b gets a gradient from x in the body, a only from b.
    return b * w, a + x


def eager_grads(x_np, w_np, n):
    x = paddle.to_tensor(x_np, stop_gradient=False)
    w = paddle.to_tensor(w_np, stop_gradient=False)
    a, b = x.detach(), x.detach()
    for _ in range(n):
        a, b = body(a, b, x, w)
    out = a * 2.0 + b
    out.sum().backward()
    return out.numpy(), x.grad.numpy(), w.grad.numpy()


class TestWhileLoopVarGainsGrad(unittest.TestCase):
    """A while_loop variable that starts with stop_gradient=True and gets a
    gradient in the body is differentiated at every later iteration, as in
    eager's Python loop."""

    def setUp(self):
        rng = np.random.default_rng(7)
        self.x = rng.uniform(-0.9, 0.9, [4])
        self.w = rng.uniform(-0.9, 0.9, [4])

    def test_static_gradients(self):
        want = eager_grads(self.x, self.w, 3)
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data("x", [4], "float64")
                w = paddle.static.data("w", [4], "float64")
                x.stop_gradient = False
                w.stop_gradient = False
                i = paddle.zeros([1], "int64")
                _, a, b = paddle.static.nn.while_loop(
                    lambda i, a, b: i < 3,
                    lambda i, a, b: (i + 1, *body(a, b, x, w)),
                    [i, x.detach(), x.detach()],
                )
                out = a * 2.0 + b
                gx, gw = paddle.static.gradients([out.sum()], [x, w])
                self.assertIsNotNone(gw)
            exe = paddle.static.Executor(paddle.CPUPlace())
            got = exe.run(
                main,
                feed={"x": self.x, "w": self.w},
                fetch_list=[out, gx, gw],
            )
        finally:
            paddle.disable_static()
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-12)

    def test_to_static(self):
        def fn(x, w, n):
            i = paddle.zeros([1], "int64")
            a, b = x.detach(), x.detach()
            while i < n:
                a, b = body(a, b, x, w)
                i = i + 1
            return a * 2.0 + b

        static_fn = paddle.jit.to_static(fn, full_graph=True)
        for n in (3, 1):
            want = eager_grads(self.x, self.w, n)
            x = paddle.to_tensor(self.x, stop_gradient=False)
            w = paddle.to_tensor(self.w, stop_gradient=False)
            out = static_fn(x, w, paddle.to_tensor([n], "int64"))
            out.sum().backward()
            self.assertIsNotNone(w.grad)
            got = out.numpy(), x.grad.numpy(), w.grad.numpy()
            for g, e in zip(got, want):
                np.testing.assert_allclose(g, e, rtol=1e-12)


if __name__ == "__main__":
    unittest.main()
