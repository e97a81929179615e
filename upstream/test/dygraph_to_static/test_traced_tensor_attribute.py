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


class GradCamNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = paddle.nn.Linear(4, 3)
        self.head = paddle.nn.Linear(3, 2)
        self.activations = None

    def forward(self, x):
        a = paddle.tanh(self.features(x))
        self.activations = a
        return self.head(a)


class TestTracedTensorAttribute(Dy2StTestBase):
    """A tensor that `forward` stores on its Layer, used after an AST call,
    says why it is not the call's Tensor, instead of failing later with an
    error about static `Value`s."""

    @test_ast_only
    @test_pir_only
    def test_use_after_the_call_is_a_clear_error(self):
        net = paddle.jit.to_static(GradCamNet())
        net(paddle.rand([2, 4]))
        with self.assertRaisesRegex(RuntimeError, 'GradCamNet.activations'):
            (net.activations * 2.0).numpy()
        with self.assertRaisesRegex(RuntimeError, 'full_graph=False'):
            net.activations.numpy()


if __name__ == '__main__':
    unittest.main()
