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


def helper(x):
    return x * 2.0


def recurse(x, n):
    if n == 0:
        return helper(x)
    return recurse(x + 1.0, n - 1)


def fn(x):
    return recurse(x, 2)


class TestRecursiveCallReadsModuleGlobals(Dy2StTestBase):
    """A recursive function calls a module-level helper at the deepest
    level: the converted function finds it at every depth."""

    @test_ast_only
    @test_pir_only
    def test_ast(self):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        want = fn(x)
        want.sum().backward()
        want_grad = x.grad.numpy()
        x.clear_gradient()
        got = paddle.jit.to_static(fn)(x)
        got.sum().backward()
        np.testing.assert_allclose(got.numpy(), want.numpy())
        np.testing.assert_allclose(x.grad.numpy(), want_grad)


if __name__ == '__main__':
    unittest.main()
