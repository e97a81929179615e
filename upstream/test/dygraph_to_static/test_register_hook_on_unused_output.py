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


def split_fn(x):
    parts = paddle.split(x * 2.0, [2, 1], axis=0)
    parts[1].register_hook(lambda g: g + 1.0)
    return parts[0] * 3.0


def unbind_fn(x):
    parts = paddle.unbind(x * 2.0, axis=0)
    parts[-1].register_hook(lambda g: g + 1.0)
    return parts[0] * 3.0


class TestRegisterHookOnUnusedOutput(Dy2StTestBase):
    """A hook on the unused output of a multi-output op runs on the zero
    gradient the op's backward gives it, as in eager."""

    def setUp(self):
        self.x = np.random.default_rng(22).standard_normal([3, 2])

    def grad(self, fn):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        fn(x).sum().backward()
        return x.grad.numpy()

    def check(self, fn):
        static_fn = paddle.jit.to_static(fn)
        np.testing.assert_allclose(
            self.grad(static_fn), self.grad(fn), rtol=1e-12
        )

    @test_pir_only
    def test_split(self):
        self.check(split_fn)

    @test_ast_only
    @test_pir_only
    def test_unbind(self):
        self.check(unbind_fn)


if __name__ == '__main__':
    unittest.main()
