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

import os
import tempfile
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


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return CusTanh.apply(self.fc(x)) * 2


def all_op_names(block):
    for op in block.ops:
        yield op.name()
        for sub in op.blocks():
            yield from all_op_names(sub)


class TestJitSaveInlinePyLayer(unittest.TestCase):
    def setUp(self):
        paddle.seed(14)
        self.net = Net()
        self.net.eval()
        self.spec = [paddle.static.InputSpec([-1, 4], 'float32', 'x')]
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, 'net')
        self.x = np.random.default_rng(14).standard_normal([3, 4])
        self.x = self.x.astype('float32')

    def tearDown(self):
        self.dir.cleanup()

    def test_inline_pylayer_ops(self):
        from paddle.jit.pylayer_inline import inline_pylayer_ops

        static_net = paddle.jit.to_static(
            self.net, input_spec=self.spec, full_graph=True
        )
        program = static_net.forward.concrete_program.main_program
        program = program.clone()
        self.assertIn('pd_op.pylayer', all_op_names(program.global_block()))
        inline_pylayer_ops(program)
        ops = list(all_op_names(program.global_block()))
        self.assertNotIn('pd_op.pylayer', ops)
        self.assertIn('pd_op.tanh', ops)

    def test_saved_inference_model_matches_eager(self):
        static_net = paddle.jit.to_static(self.net, full_graph=True)
        paddle.jit.save(
            static_net, self.path, input_spec=self.spec, inline_pylayer=True
        )
        loaded = paddle.jit.load(self.path)
        loaded.eval()
        x = paddle.to_tensor(self.x)
        np.testing.assert_allclose(
            loaded(x).numpy(), self.net(x).numpy(), rtol=1e-6
        )


if __name__ == '__main__':
    unittest.main()
