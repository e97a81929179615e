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
from paddle.autograd.gradient_reach import is_always, reach_formula
from paddle.autograd.python_effects import always_none_positions


class ScaleFirst(PyLayer):
    """Gradient only for its first input (a mask or a label second)."""

    @staticmethod
    def forward(ctx, x, mask):
        return x * mask

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0, None


class Both(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, dy):
        if dy.sum() > 0:
            return dy, None
        return dy, dy


class TestAlwaysNonePositions(unittest.TestCase):
    def test_positions_every_return_gives_none(self):
        def one(ctx, dy):
            return None

        def branches(ctx, dy):
            if dy.sum() > 0:
                return None, dy, None
            return dy, dy, None

        self.assertEqual(always_none_positions(ScaleFirst.backward, 2), {1})
        self.assertEqual(always_none_positions(Both.backward, 2), set())
        self.assertEqual(always_none_positions(one, 1), {0})
        self.assertEqual(always_none_positions(branches, 3), {2})

    def test_read_from_bytecode_without_source(self):
        namespace = {}
        exec('def backward(ctx, dy):\n    return dy, None\n', namespace)
        self.assertEqual(always_none_positions(namespace['backward'], 2), {1})
        self.assertEqual(always_none_positions(lambda ctx, dy: dy, 1), set())


class TestNoGradOperands(unittest.TestCase):
    def setUp(self):
        paddle.enable_static()

    def tearDown(self):
        paddle.disable_static()

    def build(self, layer):
        # (the test keeps the program: its ops and values live with it)
        self.main = main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data('x', [2], 'float32')
            m = paddle.static.data('m', [2], 'float32')
            x.stop_gradient = m.stop_gradient = False
            t = paddle.tanh(m)
            loss = layer.apply(x, t).sum()
        (op,) = [
            o for o in main.global_block().ops if o.name() == 'pd_op.pylayer'
        ]
        return op, x, t, loss, main.global_block()

    def test_the_op_lists_inputs_backward_gives_no_gradient(self):
        op, x, t, loss, block = self.build(ScaleFirst)
        self.assertEqual(op.str_attr('no_grad_operands'), '1')
        # so no gradient ever reaches `t` through the layer
        self.assertEqual(reach_formula(t, [loss], set(), block), [])
        self.assertTrue(is_always(reach_formula(x, [loss], set(), block)))

    def test_an_input_some_path_gives_a_gradient_is_not_listed(self):
        op, x, t, loss, block = self.build(Both)
        self.assertFalse(op.has_attr('no_grad_operands'))
        self.assertTrue(is_always(reach_formula(t, [loss], set(), block)))


if __name__ == '__main__':
    unittest.main()
