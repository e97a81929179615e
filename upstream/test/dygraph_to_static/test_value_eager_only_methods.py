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


def retains(x):
    t = x * 2.0
    t.retain_grads()
    return (t * t).sum()


def calls_backward(x):
    t = x * 2.0
    loss = (t * t).sum()
    loss.backward()
    return loss


class TestValueEagerOnlyMethods(Dy2StTestBase):
    @test_ast_only
    @test_pir_only
    def test_to_static_raises_a_clear_error(self):
        for fn, what in (
            (retains, 'retain_grads'),
            (calls_backward, 'backward'),
        ):
            x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
            with self.assertRaisesRegex(
                NotImplementedError, f'Tensor.{what}\\(\\) on a value'
            ):
                paddle.jit.to_static(fn)(x)


if __name__ == '__main__':
    unittest.main()
