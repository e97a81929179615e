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


def list_vars_is_unsafe(self):
    raise AssertionError(
        'Program.list_vars() may return freed values (random segfault)'
    )


class TestCheckViewApiUsedByInplace(Dy2StTestBase):
    """The check of every to_static program walks the values that the ops
    of the program define, not ``Program.list_vars()``."""

    def setUp(self):
        self.list_vars = paddle.pir.Program.list_vars
        paddle.pir.Program.list_vars = list_vars_is_unsafe

    def tearDown(self):
        paddle.pir.Program.list_vars = self.list_vars

    @test_ast_only
    @test_pir_only
    def test_program_with_sub_block(self):
        def fn(x):
            y = x * 2
            if y.sum() > 0:
                y = y + 1
            else:
                y = y - 1
            return paddle.tanh(y)

        x = paddle.to_tensor(np.random.default_rng(13).standard_normal([3]))
        np.testing.assert_allclose(
            paddle.jit.to_static(fn)(x).numpy(),
            fn(x).numpy(),
            rtol=1e-12,
        )

    @test_ast_only
    @test_pir_only
    def test_program_with_nested_sub_blocks(self):
        def fn(x):
            y = paddle.exp(x)
            if y.mean() > 0.5:
                if y.max() > 100:
                    y = y / 100
                y = y * 2
            return y.sum()

        x = paddle.to_tensor(np.random.default_rng(14).standard_normal([4]))
        np.testing.assert_allclose(
            paddle.jit.to_static(fn)(x).numpy(),
            fn(x).numpy(),
            rtol=1e-12,
        )


if __name__ == '__main__':
    unittest.main()
