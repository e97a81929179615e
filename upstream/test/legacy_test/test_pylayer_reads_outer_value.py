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

import paddle
from paddle.autograd import PyLayer


class UsesParameter(PyLayer):
    @staticmethod
    def forward(ctx, x, layer):
        return x * layer.weight.sum()

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = paddle.nn.Linear(2, 2)

    def forward(self, x):
        return UsesParameter.apply(x, self.lin) + self.lin(x)


class TestPyLayerReadsOuterValue(unittest.TestCase):
    def grads(self, to_static):
        paddle.seed(2026)
        net = Net()
        if to_static:
            net = paddle.jit.to_static(net, full_graph=True)
        x = paddle.to_tensor([[1.0, 2.0], [-0.5, 0.25]], stop_gradient=False)
        net(x).sum().backward()
        return x.grad.numpy(), net.lin.weight.grad.numpy()

    def test_to_static(self):
        for got, want in zip(self.grads(True), self.grads(False)):
            np.testing.assert_allclose(got, want, rtol=1e-6)


if __name__ == '__main__':
    unittest.main()
