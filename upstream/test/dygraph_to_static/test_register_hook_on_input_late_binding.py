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


def fn(x):
    x.register_hook(lambda g: g * s)
    s = 2.0
    return paddle.tanh(x)


class TestRegisterHookOnInputLateBinding(Dy2StTestBase):
    @test_ast_only
    @test_pir_only
    def test_to_static_reads_the_variable_when_the_hook_runs(self):
        def grad(f):
            x = paddle.to_tensor([0.5, -1.0], stop_gradient=False)
            f(x).sum().backward()
            return x.grad.numpy()

        np.testing.assert_allclose(
            grad(paddle.jit.to_static(fn)),
            grad(fn),
            rtol=1e-6,
        )


if __name__ == '__main__':
    unittest.main()
