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

PROGRAM_VALUES = {}


def register_hook_on_global(g):
    print(g)  # runs when the backward runs
    PROGRAM_VALUES['z'].register_hook(lambda gz: gz * 2.0)


def paddle_grad_of_global(g):
    print(g)  # runs when the backward runs
    return g + paddle.grad([PROGRAM_VALUES['z']], [PROGRAM_VALUES['y']])[0]


class TestTensorHookRunTimeProgramValues(unittest.TestCase):
    """A gradient hook that runs when a static program's backward runs and
    registers a hook on, or calls ``paddle.grad`` with, tensors of that
    program gets an error that says why and what to do, instead of one
    about control flow blocks or "Elements of outputs must be Tensor"."""

    def run_program(self, make_hook):
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [3], 'float32')
                x.stop_gradient = False
                y = x * 2.0
                z = (y * y).sum()
                PROGRAM_VALUES.update(y=y, z=z)
                y.register_hook(make_hook(y, z))
                grads = paddle.static.gradients([z], [x])
            paddle.static.Executor().run(
                main, feed={'x': np.ones(3, 'float32')}, fetch_list=grads
            )
        finally:
            paddle.disable_static()

    def test_paddle_grad_in_a_hook(self):
        def make_hook(y, z):
            def hook(g):
                print(g)  # runs when the backward runs
                return g + paddle.grad([z], [y])[0]

            return hook

        with self.assertRaisesRegex(
            Exception, 'Cannot call paddle.grad, in a gradient hook that runs'
        ):
            self.run_program(make_hook)

    def test_hooks_reading_program_values_from_globals(self):
        for hook, what in (
            (register_hook_on_global, 'register_hook'),
            (paddle_grad_of_global, 'paddle.grad'),
        ):
            with self.assertRaisesRegex(
                Exception, f'Cannot call {what}, in a gradient hook'
            ):
                self.run_program(lambda y, z, hook=hook: hook)


if __name__ == '__main__':
    unittest.main()
