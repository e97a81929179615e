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
        return dy * 3 * x * x


class TestPyLayerStaticDoubleGrad(unittest.TestCase):
    def test_static_program_double_backward_is_a_clear_error(self):
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data('x', [2], 'float32')
                x.stop_gradient = False
                y = paddle.static.nn.static_pylayer(
                    lambda a: a * a * a, [x], lambda d: d * 3
                )
                (g,) = paddle.static.gradients([y.sum()], [x])
                with self.assertRaisesRegex(
                    NotImplementedError, 'double backward'
                ):
                    paddle.static.gradients([g.sum()], [x])
        finally:
            paddle.disable_static()

    def test_to_static_double_backward_is_a_clear_error(self):
        def fn(x):
            (g,) = paddle.grad(Cube.apply(x).sum(), x, create_graph=True)
            return g

        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        static_fn = paddle.jit.to_static(fn, full_graph=True)
        with self.assertRaisesRegex(NotImplementedError, 'double backward'):
            static_fn(x).sum().backward()


if __name__ == '__main__':
    unittest.main()
