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
import inspect
import unittest

import numpy as np

import paddle
from paddle.autograd import backward_utils, ir_backward


def if_program():
    main = paddle.static.Program()
    with paddle.static.program_guard(main):
        x = paddle.static.data('x', [4], 'float32')
        w = paddle.static.data('w', [4], 'float32')
        x.stop_gradient = False
        paddle.static.nn.cond(x.mean() > 0, lambda: x * 2 + w, lambda: x * w)
    if_op = next(
        op for op in main.global_block().ops if op.name() == 'pd_op.if'
    )
    return main, if_op, x, w


def plain(x):
    if x.mean() > 0:
        y = (x * 2) * x
    else:
        y = x * x
    return y


class TestGetUsedExternalValue(unittest.TestCase):
    """The backward pass lists the values an ``if`` op uses from outside
    with a Python walk of the op, which is stable when many programs are
    built in one process."""

    def setUp(self):
        paddle.enable_static()

    def tearDown(self):
        paddle.disable_static()

    def test_if_op_external_values(self):
        """The condition first, then the values the branches read, in order
        of first use; the backward pass uses this walk."""
        main, if_op, x, w = if_program()
        got = backward_utils.get_used_external_value(if_op)
        want = [if_op.operand_source(0), x, w]
        self.assertEqual(len(got), len(want))
        for g, v in zip(got, want):
            self.assertTrue(g.is_same(v))
        # the backward pass uses this walk, not the C++ binding
        self.assertTrue(inspect.isfunction(ir_backward.get_used_external_value))
        self.assertIs(
            ir_backward.get_used_external_value,
            backward_utils.get_used_external_value,
        )


class TestManyTracedIfPrograms(unittest.TestCase):
    def grads(self, fn, a):
        x = paddle.to_tensor(a, stop_gradient=False)
        fn(x).sum().backward()
        return x.grad.numpy()

    def test_gradients_match_eager(self):
        """A new to_static function with a tensor ``if`` per step, between
        eager runs, always gets eager's gradients, and the external values
        of its ``if`` op are the same at every call."""
        # The C++ binding that the backward pass used here sometimes gave a
        # null or dangling value (zero gradients, crashes) after some dozens
        # of traces; the backward pass now walks the op in Python.
        self.assertTrue(inspect.isfunction(ir_backward.get_used_external_value))
        x = np.random.default_rng(19).standard_normal(4)
        for i in range(20):
            for sign in (1.0, -1.0):
                a = np.abs(x) * sign
                want = self.grads(plain, a)
                static_fn = paddle.jit.to_static(plain, full_graph=True)
                got = self.grads(static_fn, a)
                np.testing.assert_allclose(
                    got, want, rtol=1e-12, err_msg=f'step {i}'
                )
            _, layer = static_fn.get_concrete_program(
                paddle.to_tensor(a, stop_gradient=False)
            )
            program = layer.train_program.forward_program
            if_op = next(
                op
                for op in program.global_block().ops
                if op.name() == 'pd_op.if'
            )
            first = backward_utils.get_used_external_value(if_op)
            second = backward_utils.get_used_external_value(if_op)
            self.assertEqual(len(first), len(second))
            for u, v in zip(first, second):
                self.assertTrue(u.is_same(v))


if __name__ == '__main__':
    unittest.main()
