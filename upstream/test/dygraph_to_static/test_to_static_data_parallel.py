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
    test_pir_only,
)

import paddle


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return paddle.tanh(self.fc(x))


class TestToStaticDataParallel(Dy2StTestBase):
    """`paddle.jit.to_static(paddle.DataParallel(net))` converts the wrapped
    Layer and keeps DataParallel's own step eager, as the other order does."""

    @test_pir_only
    def test_to_static_of_data_parallel(self):
        paddle.seed(2026)
        net = Net()
        x = paddle.to_tensor(np.random.RandomState(0).rand(2, 4), 'float32')
        x.stop_gradient = False
        want = net(x)
        want.sum().backward()
        want_grads = [x.grad.numpy(), net.fc.weight.grad.numpy()]
        x.clear_gradient()
        net.clear_gradients()

        dp = paddle.DataParallel(net)
        static_dp = paddle.jit.to_static(dp)
        self.assertIs(static_dp, dp)
        self.assertIsInstance(
            net.forward, paddle.jit.dy2static.program_translator.StaticFunction
        )
        got = static_dp(x)
        got.sum().backward()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), want_grads[0], rtol=1e-6)
        np.testing.assert_allclose(
            net.fc.weight.grad.numpy(), want_grads[1], rtol=1e-6
        )


if __name__ == '__main__':
    unittest.main()
