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


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(3, 2)

    def forward(self, x):
        return self.linear(x) * 2.0


class TestProgramCacheGradMode(Dy2StTestBase):
    """A program traced with the grad mode off has no backward: a call
    with the grad mode on traces its own program."""

    @test_ast_only
    @test_pir_only
    def test_call_with_grad_after_call_without(self):
        paddle.seed(2026)
        net = paddle.jit.to_static(Net())
        x = paddle.ones([4, 3])
        with paddle.no_grad():
            self.assertTrue(net(x).stop_gradient)
        out = net(x)
        self.assertFalse(out.stop_gradient)
        out.sum().backward()
        np.testing.assert_allclose(
            net.linear.weight.grad.numpy(), np.full([3, 2], 8.0)
        )
        with paddle.no_grad():
            self.assertTrue(net(x).stop_gradient)
        self.assertEqual(len(net.forward._program_cache), 2)


if __name__ == '__main__':
    unittest.main()
