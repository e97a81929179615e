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
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle
from paddle.autograd import PyLayer


class SaveBoth(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b + a

    @staticmethod
    def backward(ctx, d):
        a, b = ctx.saved_tensor()
        return d * (b + 1), d * a * 3


def fn(x):
    return SaveBoth.apply(x * 2, x * 2)


def tuple_push_operands(program):
    def blocks(block):
        yield block
        for op in block.ops:
            for sub in op.blocks():
                yield from blocks(sub)

    for block in blocks(program.global_block()):
        for op in block.ops:
            if op.name() == 'cf.tuple_push':
                yield op.operands_source()[1:]


class TestPyLayerSavedValuesMergedByCSE(Dy2StTestBase):
    """CSE merges the two ``x * 2`` that a PyLayer saves: each saved tensor
    keeps its own buffer in the to_static program (with one buffer, the
    inplace pass may let an op overwrite it before the backward reads it:
    a wrong gradient, depending on the run)."""

    def setUp(self):
        self.x = np.random.default_rng(25).standard_normal([2, 3])

    @test_ast_only
    @test_pir_only
    def test_saved_values_are_not_merged(self):
        static_fn = paddle.jit.to_static(fn)
        x = paddle.to_tensor(self.x, stop_gradient=False)
        static_fn(x).sum().backward()
        x_eager = paddle.to_tensor(self.x, stop_gradient=False)
        fn(x_eager).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), x_eager.grad.numpy())
        _, layer = static_fn.get_concrete_program(x)
        # (a backward that reads the forward's values pops nothing: then
        # nothing is pushed)
        pushed = list(tuple_push_operands(layer.train_program.forward_program))
        for values in pushed:
            for i, v in enumerate(values):
                self.assertFalse(any(v.is_same(u) for u in values[:i]))


if __name__ == '__main__':
    unittest.main()
