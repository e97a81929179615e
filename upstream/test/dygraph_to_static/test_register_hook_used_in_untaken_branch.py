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


def used_in_branch(x):
    t = x * 2.0
    t.register_hook(lambda g: g + 1.0)
    if x.mean() > 0:
        y = paddle.tanh(t)
    else:
        y = x * 3.0
    return y


def used_by_dead_code_of_branch(x):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    if x.mean() > 0:
        d = x - t  # noqa: F841 (reaches nothing)
        y = x * 2.0
    else:
        y = x * 3.0
    return y


def returned_by_branch(x):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    if x.mean() > 0:
        y = t
    else:
        y = x * 3.0
    return y


def used_in_inner_branch(x):
    # The inner condition is computed inside the outer branch; the second
    # use of ``t`` only feeds it (no gradient).
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    if x.mean() > 0:
        if (t * x).sum() + paddle.exp(x).sum() > 20.0:
            y = t * x
        else:
            y = x * 2.0
    else:
        y = x * 3.0
    return y


def used_outside_branch_by_dead_code(x):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    m = t.mean(axis=0, keepdim=True)  # noqa: F841 (reaches no output)
    if x.mean() > 0:
        y = x * 2.0
    else:
        y = t * x
    return y


def grad(fn, x):
    x = paddle.to_tensor(x, stop_gradient=False)
    fn(x).sum().backward()
    return x.grad.numpy()


class TestRegisterHookUsedInUntakenBranch(Dy2StTestBase):
    """A hook on a value used only in an `if` branch runs only when that
    branch ran, as in eager (it ran on the zeros the `if` gave)."""

    def assert_ast_matches_eager(self, fn, scales=(1.0, -1.0)):
        x = np.abs(np.random.default_rng(41).standard_normal([4]))
        static_fn = paddle.jit.to_static(fn)
        for scale in scales:
            np.testing.assert_allclose(
                grad(static_fn, x * scale),
                grad(fn, x * scale),
                rtol=1e-12,
            )

    @test_ast_only
    @test_pir_only
    def test_ast(self):
        self.assert_ast_matches_eager(used_in_branch)

    @test_ast_only
    @test_pir_only
    def test_ast_dead_code(self):
        self.assert_ast_matches_eager(used_by_dead_code_of_branch)

    @test_ast_only
    @test_pir_only
    def test_ast_value_returned_by_branch(self):
        self.assert_ast_matches_eager(returned_by_branch)

    @test_ast_only
    @test_pir_only
    def test_ast_inner_condition_computed_in_outer_branch(self):
        self.assert_ast_matches_eager(used_in_inner_branch, (1.0, -1.0, 10.0))

    @test_ast_only
    @test_pir_only
    def test_ast_use_outside_branch_reaching_no_output(self):
        self.assert_ast_matches_eager(used_outside_branch_by_dead_code)


if __name__ == '__main__':
    unittest.main()
