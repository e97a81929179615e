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
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle
from paddle.autograd import PyLayer
from paddle.static import InputSpec


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
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return CusTanh.apply(self.linear(x))


def ops_named(program, name):
    def walk(block):
        for op in block.ops:
            if op.name() == name:
                yield op
            for sub in op.blocks():
                yield from walk(sub)

    return list(walk(program.global_block()))


class TestPyLayerInferProgramSavesNothing(Dy2StTestBase):
    """The forward-only program of a to_static layer in ``eval()`` mode
    does not push the tensors of ``ctx.save_for_backward`` (nothing would
    pop them); the train program still does."""

    def setUp(self):
        self.temp_dir = tempfile.TemporaryDirectory()
        self.x = np.random.default_rng(31).standard_normal([3, 4])
        self.x = self.x.astype('float32')

    def tearDown(self):
        self.temp_dir.cleanup()

    def check(self, layer, get_partial_program, want):
        for _ in range(2):
            got = layer(paddle.to_tensor(self.x)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-6)
        partial_program = get_partial_program()
        self.assertEqual(
            ops_named(partial_program.infer_program.program, 'cf.tuple_push'),
            [],
        )
        self.assertNotEqual(
            ops_named(partial_program.train_program.program, 'cf.tuple_push'),
            [],
        )

    @test_ast_only
    @test_pir_only
    def test_to_static_eval(self):
        paddle.seed(31)
        net = Net()
        net.eval()
        want = net(paddle.to_tensor(self.x)).numpy()
        static_net = paddle.jit.to_static(net)
        self.check(
            static_net,
            lambda: static_net.forward.get_concrete_program(
                paddle.to_tensor(self.x)
            )[1],
            want,
        )

    @test_ast_only
    @test_pir_only
    def test_jit_load_eval(self):
        paddle.seed(31)
        net = Net()
        want = net(paddle.to_tensor(self.x)).numpy()
        prefix = os.path.join(self.temp_dir.name, 'm')
        paddle.jit.save(
            paddle.jit.to_static(net),
            prefix,
            input_spec=[InputSpec([-1, 4], 'float32', 'x')],
        )
        loaded = paddle.jit.load(prefix)
        loaded.eval()
        self.check(
            loaded, lambda: loaded._get_partial_program_layer('forward'), want
        )


if __name__ == '__main__':
    unittest.main()
