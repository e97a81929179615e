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


def after_loop(t, v, s):
    return (
        (paddle.square(t) * -1.5).sum()
        + (paddle.square(v) * s).sum()
        + (v * 0.5).sum()
    )


class TestWhileLoopOuterValueGrads(unittest.TestCase):
    """A value read in a while_loop body and by ops after the loop: the
    gradients of those ops, which the backward reaches first, are summed
    before the loop's backward starts from them, instead of the loop
    starting from one and adding the others at every iteration."""

    def setUp(self):
        rng = np.random.default_rng(11)
        self.x = rng.uniform(-0.9, 0.9, [3])
        self.y = rng.uniform(-0.9, 0.9, [3])

    def eager_grads(self):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        y = paddle.to_tensor(self.y, stop_gradient=False)
        v = paddle.exp(x)
        s = v * 1.0
        t = y * 1.0
        for _ in range(2):
            t = t + v
        loss = after_loop(t, v, s)
        loss.backward()
        return loss.numpy(), x.grad.numpy(), y.grad.numpy()

    def test_static_gradients(self):
        want = self.eager_grads()
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data("x", [3], "float64")
                y = paddle.static.data("y", [3], "float64")
                x.stop_gradient = False
                y.stop_gradient = False
                v = paddle.exp(x)
                s = v * 1.0
                _, t = paddle.static.nn.while_loop(
                    lambda i, t: i < 2,
                    lambda i, t: (i + 1, t + v),
                    [paddle.zeros([1], "int64"), y * 1.0],
                )
                loss = after_loop(t, v, s)
                gx, gy = paddle.static.gradients([loss], [x, y])
            exe = paddle.static.Executor(paddle.CPUPlace())
            got = exe.run(
                main,
                feed={"x": self.x, "y": self.y},
                fetch_list=[loss, gx, gy],
            )
        finally:
            paddle.disable_static()
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-12)


if __name__ == "__main__":
    unittest.main()
