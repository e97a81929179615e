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


def yield_unchanged(x1, x2):
    t = paddle.sin(x2)
    if x1.mean() > 0:
        r = t
    else:
        r = t * 3.0
    return t * paddle.cos(x1) + r


def grads(fn, a1, a2):
    x1 = paddle.to_tensor(a1, stop_gradient=False)
    x2 = paddle.to_tensor(a2, stop_gradient=False)
    fn(x1, x2).sum().backward()
    return x1.grad.numpy(), x2.grad.numpy()


class TestCondYieldUnchangedGrad(unittest.TestCase):
    """A value an `if` branch yields unchanged keeps the gradients of its
    other uses."""

    def test_to_static(self):
        rng = np.random.default_rng(47)
        a2 = rng.standard_normal([3])
        a1 = np.abs(rng.standard_normal([3]))
        static_fn = paddle.jit.to_static(yield_unchanged, full_graph=True)
        for sign in (1.0, -1.0):
            for got, want in zip(
                grads(static_fn, a1 * sign, a2),
                grads(yield_unchanged, a1 * sign, a2),
            ):
                np.testing.assert_allclose(got, want, rtol=1e-12)

    def test_static_cond(self):
        rng = np.random.default_rng(47)
        a2 = rng.standard_normal([3])
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [3], 'float64')
                x.stop_gradient = False
                t = paddle.sin(x)
                r = paddle.static.nn.cond(
                    x.sum() > -100.0, lambda: t, lambda: t * 3.0
                )
                loss = (t * 2.0 + r).sum()
                (gx,) = paddle.static.gradients([loss], [x])
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={'x': a2}, fetch_list=[gx])
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, 3.0 * np.cos(a2), rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
