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


class TransposedGrad(PyLayer):
    """A square matrix's gradient computed from the transpose of its
    output's: shape [3, -1] for an input of shape [-1, 3] in a program with
    a dynamic dimension, [3, 3] when it runs, as in eager."""

    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, d):
        return paddle.transpose(d, [1, 0]) * 2.0


class TestPyLayerDynamicShapeGrad(unittest.TestCase):
    def test_gradient_shape_known_at_run_time(self):
        xa = np.arange(9, dtype='float32').reshape(3, 3)
        w = np.arange(9, dtype='float32').reshape(3, 3) / 10.0
        x = paddle.to_tensor(xa, stop_gradient=False)
        (TransposedGrad.apply(x) * paddle.to_tensor(w)).sum().backward()
        want = x.grad.numpy()
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                xs = paddle.static.data('x', [-1, 3], 'float32')
                xs.stop_gradient = False
                ws = paddle.static.data('w', [-1, 3], 'float32')
                y = TransposedGrad.apply(xs)
                (g,) = paddle.static.gradients([(y * ws).sum()], [xs])
            (got,) = paddle.static.Executor().run(
                main, feed={'x': xa, 'w': w}, fetch_list=[g]
            )
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, want)


if __name__ == '__main__':
    unittest.main()
