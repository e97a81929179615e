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


def fn(x):
    t = paddle.tanh(x)
    t.register_hook(lambda g: g * 2)
    return t * x


def two_hooks(x):
    h = paddle.tanh(x * 2)
    h.register_hook(lambda g: g * 3)
    y = paddle.exp(h)
    y.register_hook(lambda g: g + 1)
    return y * x


class TestRegisterHookTrainProgram(Dy2StTestBase):
    """The identity op that holds a hook is not run by the to_static train
    program once its backward is built; the hook still acts."""

    def check(self, f):
        static_fn = paddle.jit.to_static(f)
        x_np = np.random.default_rng(15).standard_normal([3])
        x = paddle.to_tensor(x_np, stop_gradient=False)
        static_fn(x).sum().backward()
        _, partial_program = static_fn.get_concrete_program(x)
        train = partial_program.train_program
        for program in (train.forward_program, train.backward_program):
            names = [op.name() for op in program.global_block().ops]
            self.assertNotIn('pd_op.pylayer', names)
        x_eager = paddle.to_tensor(x_np, stop_gradient=False)
        f(x_eager).sum().backward()
        np.testing.assert_allclose(
            x.grad.numpy(), x_eager.grad.numpy(), rtol=1e-12
        )

    @test_ast_only
    @test_pir_only
    def test_train_program_has_no_hook_op(self):
        self.check(fn)

    @test_ast_only
    @test_pir_only
    def test_two_hooked_values(self):
        self.check(two_hooks)


if __name__ == '__main__':
    unittest.main()
