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


class CusTanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - paddle.square(y))


def fn(x):
    return CusTanh.apply(x * 2) * x


class TestPyLayerInStaticProgram(unittest.TestCase):
    def setUp(self):
        self.x = np.random.default_rng(5).standard_normal([3, 4])
        x = paddle.to_tensor(self.x, stop_gradient=False)
        out = fn(x)
        out.sum().backward()
        self.want = out.numpy(), x.grad.numpy()

    def run_static(self, use_append_backward):
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data('x', [3, 4], 'float64')
                x.stop_gradient = False
                out = fn(x)
                loss = out.sum()
                if use_append_backward:
                    ((_, gx),) = paddle.static.append_backward(
                        loss, parameter_list=[x]
                    )
                else:
                    (gx,) = paddle.static.gradients([loss], [x])
            ops = [op.name() for op in main.global_block().ops]
            self.assertIn('pd_op.pylayer', ops)
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            return exe.run(main, feed={'x': self.x}, fetch_list=[out, gx])
        finally:
            paddle.disable_static()

    def test_gradients(self):
        for got, want in zip(self.run_static(False), self.want):
            np.testing.assert_allclose(got, want, rtol=1e-12)

    def test_append_backward(self):
        for got, want in zip(self.run_static(True), self.want):
            np.testing.assert_allclose(got, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
