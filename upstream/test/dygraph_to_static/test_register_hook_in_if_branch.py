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


def hook_reads_branch_tensor(x):
    if x.mean() > 0:
        b = paddle.square(x)
        b.register_hook(lambda g: g * b)
        y = b * 3.0
    else:
        y = x * 0.5
    return y


def hook_reads_reassigned_branch_variable(x):
    if x.mean() > 0:
        b = paddle.square(x)
        c = b * 2.0
        b.register_hook(lambda g: g * c)
        y = b * 3.0
        c = paddle.exp(x)  # eager's hook reads c at backward()
    else:
        y = x * 0.5
    return y


class TestRegisterHookInIfBranch(Dy2StTestBase):
    """A hook registered in a tensor-dependent ``if`` branch reads the
    branch's tensors, as in eager."""

    def setUp(self):
        self.x = np.abs(np.random.default_rng(21).standard_normal([2, 3]))

    def grad(self, fn, a):
        x = paddle.to_tensor(a, stop_gradient=False)
        fn(x).sum().backward()
        return x.grad.numpy()

    def check(self, fn):
        static_fn = paddle.jit.to_static(fn)
        for a in (self.x, -self.x):  # the branch taken and not taken
            np.testing.assert_allclose(
                self.grad(static_fn, a), self.grad(fn, a), rtol=1e-12
            )

    @test_ast_only
    @test_pir_only
    def test_hook_reads_branch_tensor(self):
        self.check(hook_reads_branch_tensor)

    @test_ast_only
    @test_pir_only
    def test_hook_reads_reassigned_branch_variable(self):
        self.check(hook_reads_reassigned_branch_variable)


if __name__ == '__main__':
    unittest.main()
