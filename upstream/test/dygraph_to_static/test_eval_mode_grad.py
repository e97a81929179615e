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
        self.bn = paddle.nn.BatchNorm1D(3)
        self.fc = paddle.nn.Linear(3, 2)
        self.drop = paddle.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(self.bn(x))).sum()


class TestEvalModeGrad(Dy2StTestBase):
    def grads(self, to_static):
        paddle.seed(2026)
        net = Net()
        net.eval()
        if to_static:
            net = paddle.jit.to_static(net)
        x = paddle.to_tensor(
            np.linspace(-1.0, 1.0, 6).reshape([2, 3]).astype('float32'),
            stop_gradient=False,
        )
        net(x).backward()
        self.assertIsNotNone(x.grad)
        self.assertIsNotNone(net.fc.weight.grad)
        return x.grad.numpy(), net.fc.weight.grad.numpy()

    @test_ast_only
    @test_pir_only
    def test_eval_mode_layer_gives_eager_gradients(self):
        for got, want in zip(self.grads(True), self.grads(False)):
            np.testing.assert_allclose(got, want, rtol=1e-6)

    def parameter_grads(self, to_static):
        # fine-tuning with frozen batch-norm statistics: the input needs no
        # gradient, the parameters do
        paddle.seed(2026)
        net = Net()
        net.eval()
        if to_static:
            net = paddle.jit.to_static(net)
        x = paddle.to_tensor(
            np.linspace(-1.0, 1.0, 6).reshape([2, 3]).astype('float32')
        )
        net(x).backward()
        self.assertIsNotNone(net.fc.weight.grad)
        self.assertIsNotNone(net.bn.weight.grad)
        return net.fc.weight.grad.numpy(), net.bn.weight.grad.numpy()

    @test_ast_only
    @test_pir_only
    def test_eval_mode_layer_gives_parameters_gradients(self):
        for got, want in zip(
            self.parameter_grads(True), self.parameter_grads(False)
        ):
            np.testing.assert_allclose(got, want, rtol=1e-6)


if __name__ == '__main__':
    unittest.main()
