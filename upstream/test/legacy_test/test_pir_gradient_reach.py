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
from paddle.autograd.gradient_reach import (
    IfLiteral,
    OutputLiteral,
    is_always,
    reach_formula,
)


def _literals(formula):
    return [
        sorted(
            (type(literal).__name__, getattr(literal, 'in_true', None))
            for literal in conjunction
        )
        for conjunction in formula
    ]


class TestGradientReach(unittest.TestCase):
    """When a gradient reaches a value of a PIR program: the conditions
    (the branches that ran, the targets that got a gradient) under which
    some differentiable path joins it to a backward target."""

    def setUp(self):
        paddle.enable_static()
        self.main = paddle.static.Program()
        self.startup = paddle.static.Program()

    def tearDown(self):
        paddle.disable_static()

    def data(self, name):
        value = paddle.static.data(name, [2], 'float32')
        value.stop_gradient = False
        return value

    def test_value_read_only_by_one_branch(self):
        with paddle.static.program_guard(self.main, self.startup):
            x, y = self.data('x'), self.data('y')
            t = paddle.sin(x)
            a = t * 2.0  # read only by the else branch
            out = paddle.static.nn.cond(
                y.sum() > 0, lambda: y * 3.0, lambda: a + y
            )
            loss = (out + paddle.cos(x)).sum()
        block = self.main.global_block()
        formula = reach_formula(t, [loss], set(), block)
        self.assertEqual(_literals(formula), [[('IfLiteral', False)]])
        (conjunction,) = formula
        (literal,) = conjunction
        self.assertIsInstance(literal, IfLiteral)
        self.assertEqual(literal.if_op.name(), 'pd_op.if')
        # x also reaches the loss through cos(x), outside the `if`
        self.assertTrue(is_always(reach_formula(x, [loss], set(), block)))
        # y through both branches
        self.assertTrue(is_always(reach_formula(y, [loss], set(), block)))

    def test_value_read_only_in_a_while_body(self):
        with paddle.static.program_guard(self.main, self.startup):
            x = self.data('x')
            t = paddle.tanh(x)
            i = paddle.zeros([1], 'int64')
            n = paddle.full([1], 3, 'int64')

            def body(i, h):
                return i + 1, h * t

            _, h = paddle.static.nn.while_loop(
                lambda i, h: i < n, body, [i, paddle.ones([2])]
            )
            loss = h.sum()
        formula = reach_formula(t, [loss], set(), self.main.global_block())
        self.assertEqual(_literals(formula), [[('IfLiteral', True)]])
        (literal,) = formula[0]
        self.assertEqual(literal.if_op.name(), 'pd_op.while')

    def test_target_the_caller_may_not_differentiate(self):
        with paddle.static.program_guard(self.main, self.startup):
            x, y = self.data('x'), self.data('y')
            t = paddle.sin(x)
            first = (t * 2.0).sum()
            second = (paddle.cos(x) + y).sum()
        block = self.main.global_block()
        # Only `first` reads t: t gets a gradient when target 0 gets one.
        formula = reach_formula(t, [first, second], {0, 1}, block)
        self.assertEqual(formula, [frozenset({OutputLiteral(0)})])
        # A target that always gets a gradient adds no condition.
        self.assertTrue(
            is_always(reach_formula(t, [first, second], {1}, block))
        )
        # No path: never.
        self.assertEqual(reach_formula(y, [first], set(), block), [])


if __name__ == '__main__':
    unittest.main()
