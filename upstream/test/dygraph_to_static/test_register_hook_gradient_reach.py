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


def hook_reaching_branch_through_other_ops(x, y):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    a = t * 2.0  # used only in the else branch
    if y.sum() > 0:
        out = y * 3.0
    else:
        out = a + y
    return out + paddle.cos(x)


def hook_reading_forward_tensor_in_branch(x, y):
    t = paddle.sin(x)
    m = paddle.cos(x)
    t.register_hook(lambda g: g * m + 1.0)
    if y.sum() > 0:
        out = t * y
    else:
        out = y * 2.0
    return out + m


def grads(fn, x, y):
    x = paddle.to_tensor(x, stop_gradient=False)
    y = paddle.to_tensor(y, stop_gradient=False)
    fn(x, y).sum().backward()
    return x.grad.numpy(), y.grad.numpy()


class TestRegisterHookGradientReach(Dy2StTestBase):
    """Eager calls a hook only when a gradient reaches its tensor; a
    static backward gives zeros through the branch that did not run."""

    def check_to_static(self, fn):
        rng = np.random.default_rng(49)
        x, y = rng.standard_normal([3]), np.abs(rng.standard_normal([3]))
        static_fn = paddle.jit.to_static(fn)
        for sign in (1.0, -1.0):
            for got, want in zip(
                grads(static_fn, x, y * sign),
                grads(fn, x, y * sign),
            ):
                np.testing.assert_allclose(got, want, rtol=1e-12)

    @test_ast_only
    @test_pir_only
    def test_hook_reaching_branch_through_other_ops(self):
        self.check_to_static(hook_reaching_branch_through_other_ops)

    @test_ast_only
    @test_pir_only
    def test_hook_reading_forward_tensor_in_branch(self):
        self.check_to_static(hook_reading_forward_tensor_in_branch)

    @test_ast_only
    @test_pir_only
    def test_hook_whose_condition_cannot_be_computed_again_raises(self):
        def fn(x, y):
            t = paddle.sin(x)
            t.register_hook(lambda g: g + 1.0)
            if y.sum() > 0:
                if paddle.rand([1]) > 2.0:
                    out = t * y
                else:
                    out = y * 2.0
            else:
                out = y * 3.0
            return out

        static_fn = paddle.jit.to_static(fn)
        with self.assertRaisesRegex(NotImplementedError, "random op"):
            grads(static_fn, np.ones([3]), np.ones([3]))


if __name__ == '__main__':
    unittest.main()
