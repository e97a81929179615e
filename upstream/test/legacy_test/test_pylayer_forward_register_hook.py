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

MESSAGE = 'Cannot register hook on a tensor that stop gradient'


class HookInForward(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = x * 2.0
        y.register_hook(lambda g: g * 10.0)
        return y

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


def fn(x):
    return HookInForward.apply(x * 1.0)


class TestPyLayerForwardRegisterHook(unittest.TestCase):
    def test_to_static(self):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        with self.assertRaisesRegex(RuntimeError, MESSAGE):
            paddle.jit.to_static(fn, full_graph=True)(x)

    def test_static_program(self):
        paddle.enable_static()
        try:
            with paddle.static.program_guard(paddle.static.Program()):
                x = paddle.static.data('x', [2], 'float32')
                x.stop_gradient = False
                with self.assertRaisesRegex(RuntimeError, MESSAGE):
                    fn(x)
        finally:
            paddle.disable_static()


if __name__ == '__main__':
    unittest.main()
