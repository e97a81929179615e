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


class TwoOutputs(PyLayer):
    # `backward` returns the zero gradient of its unused first output
    @staticmethod
    def forward(ctx, a):
        t = paddle.cos(a)
        return t * t, t - 0.5

    @staticmethod
    def backward(ctx, d0, d1):
        return d0


class NoneGradients(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return paddle.tanh(a) * b

    @staticmethod
    def backward(ctx, d):
        return None, None


def only_zeros(x, y):
    out = paddle.square(NoneGradients.apply(x, y))
    return out + TwoOutputs.apply(x)[1].sum() + y


class TestGradOfInputNoOpReads(unittest.TestCase):
    def setUp(self):
        self.a = np.array([0.5, 1.0, -0.3])
        self.b = np.array([1.5, -2.0, 0.25])

    def grads(self, fn):
        x = paddle.to_tensor(self.a, stop_gradient=False)
        y = paddle.to_tensor(self.b, stop_gradient=False)
        fn(x, y).sum().backward()
        return x.grad.numpy(), y.grad.numpy()

    def test_to_static(self):
        want = self.grads(only_zeros)
        np.testing.assert_array_equal(want[0], np.zeros(3))
        got = self.grads(paddle.jit.to_static(only_zeros, full_graph=True))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)

    def test_append_backward(self):
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [3], 'float64')
                y = paddle.static.data('y', [3], 'float64')
                x.stop_gradient = y.stop_gradient = False
                out = only_zeros(x, y).sum()
                pairs = paddle.static.append_backward(
                    out, parameter_list=[x, y]
                )
            got = paddle.static.Executor().run(
                main,
                feed={'x': self.a, 'y': self.b},
                fetch_list=[g for _, g in pairs],
            )
        finally:
            paddle.disable_static()
        np.testing.assert_array_equal(got[0], np.zeros(3))


if __name__ == '__main__':
    unittest.main()
