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
from dygraph_to_static_utils import Dy2StTestBase, test_pir_only

import paddle


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 5)
        self.fc2 = paddle.nn.Linear(5, 2)

    def forward(self, x):
        return self.fc2(paddle.tanh(self.fc1(x)))


class TestGradAccumulationNewProgram(Dy2StTestBase):
    """Gradients accumulate over calls that need a new program (micro
    batches of different sizes, without clear_grad in between)."""

    def grads(self, to_static):
        paddle.seed(2026)
        net = Net()
        if to_static:
            net = paddle.jit.to_static(net)
        rng = np.random.default_rng(11)
        grads = []
        for batch in (2, 3, 4):
            x = paddle.to_tensor(
                rng.standard_normal([batch, 4]).astype('float32')
            )
            net(x).sum().backward()
            grads.append(net.fc1.weight.grad.numpy())
        return grads

    @test_pir_only
    def test_accumulates_like_eager(self):
        for got, want in zip(self.grads(True), self.grads(False)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


if __name__ == '__main__':
    unittest.main()
