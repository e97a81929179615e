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


class Quant(paddle.nn.Layer):
    """PaddleSlim's quantizers make their input differentiable."""

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 2)

    def forward(self, activation):
        activation.stop_gradient = False
        return self.fc(paddle.tanh(activation))


class TestInputMadeDifferentiableInFunction(Dy2StTestBase):
    """``x.stop_gradient = False`` in the function on an input the caller
    passed with ``stop_gradient=True``: eager changes the caller's Tensor,
    which gets a gradient; so does a to_static call."""

    def run_steps(self, net):
        grads = []
        for batch in (2, 3, 4):
            x = paddle.to_tensor(
                np.random.default_rng(batch).standard_normal([batch, 3])
            )
            net(x).sum().backward()
            self.assertFalse(x.stop_gradient)
            grads.append(x.grad.numpy())
        return grads

    @test_pir_only
    def test_input_gets_its_gradient(self):
        paddle.seed(3)
        paddle.set_default_dtype('float64')
        try:
            net = Quant()
        finally:
            paddle.set_default_dtype('float32')
        want = self.run_steps(net)
        got = self.run_steps(paddle.jit.to_static(net))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
