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
from paddle.autograd import PyLayer

LOG = []


class LogsGradient(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        LOG.append(float(dy.abs().max()))
        return dy * (1 - paddle.tanh(x) ** 2)


class LogsThroughBase(LogsGradient):
    @staticmethod
    def backward(ctx, dy):
        return LogsGradient.backward(ctx, dy)


def apply(layer):
    def fn(x):
        return (layer.apply(x * 2.0) * 3.0).sum()

    return fn


class TestPyLayerPythonEffects(Dy2StTestBase):
    """A PyLayer whose backward stores into a global: eager stores at every
    backward, a static graph would store one symbolic value when it builds
    the program: a clear error under AST."""

    @test_ast_only
    @test_pir_only
    def test_ast_backward_with_effects_is_an_error(self):
        fn = paddle.jit.to_static(apply(LogsGradient))
        x = paddle.to_tensor(np.ones([2, 4]), stop_gradient=False)
        with self.assertRaisesRegex(NotImplementedError, 'LOG.append'):
            fn(x).backward()

    @test_ast_only
    @test_pir_only
    def test_effect_in_the_base_class_backward_is_found(self):
        fn = paddle.jit.to_static(apply(LogsThroughBase))
        x = paddle.to_tensor(np.ones([2, 4]), stop_gradient=False)
        with self.assertRaisesRegex(NotImplementedError, 'LOG.append'):
            fn(x).backward()


if __name__ == '__main__':
    unittest.main()
