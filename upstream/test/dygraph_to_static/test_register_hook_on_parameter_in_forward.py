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


class HookedLinear(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 2)

    def forward(self, x):
        self.fc.weight.register_hook(lambda g: g * 0.5)
        return paddle.tanh(self.fc(x))


class TestRegisterHookOnParameterInForward(Dy2StTestBase):
    """A hook registered on a parameter inside forward: eager adds one more
    hook at every call, and so does to_static (AST)."""

    def grads(self, layer, x):
        layer(paddle.to_tensor(x)).sum().backward()
        grads = [p.grad.numpy() for p in layer.parameters()]
        layer.clear_gradients()
        return grads

    @test_ast_only
    @test_pir_only
    def test_every_call_matches_eager(self):
        paddle.seed(2026)
        eager = HookedLinear()
        static = HookedLinear()
        static.set_state_dict(eager.state_dict())
        static = paddle.jit.to_static(static)
        rng = np.random.default_rng(7)
        for _ in range(3):
            x = rng.standard_normal([4, 3]).astype("float32")
            for g, w in zip(self.grads(static, x), self.grads(eager, x)):
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


if __name__ == '__main__':
    unittest.main()
