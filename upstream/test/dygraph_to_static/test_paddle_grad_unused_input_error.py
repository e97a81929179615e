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

from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle


def gradient_penalty(x):
    y = paddle.sin(x)
    (g,) = paddle.grad([y.sum()], [x], create_graph=True)
    return y + (g * g).sum()


class TestPaddleGradUnusedInputError(Dy2StTestBase):
    """`paddle.grad` with respect to an input that gets no gradient (an
    input that needs none: a prediction through a gradient penalty) raises
    eager's `ValueError` unless `allow_unused=True`, instead of returning
    None for the caller's code to fail on."""

    @test_ast_only
    @test_pir_only
    def test_input_without_gradient_raises_as_eager(self):
        x = paddle.to_tensor([1.0, 2.0])
        with self.assertRaises(ValueError):
            gradient_penalty(x)
        with self.assertRaisesRegex(ValueError, 'allow_unused=True'):
            paddle.jit.to_static(gradient_penalty)(x)


if __name__ == '__main__':
    unittest.main()
