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
    ToStaticMode,
    set_to_static_mode,
    test_pir_only,
)

import paddle


def hooked_output(x):
    y = x * 2.0
    y.register_hook(lambda g: g * 0.25)
    return y


def output_used_inside(x):
    y = paddle.tanh(x)
    return y, y * x


class TestRegisterHookOnOutput(Dy2StTestBase):
    """Hooks on a tensor a to_static function returns run as in eager: the
    function's hooks first, then the caller's, on the total gradient."""

    def setUp(self):
        self.x = np.random.default_rng(38).standard_normal([2, 3])

    def caller_hook_grad(self, fn):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        y = fn(x)
        y.register_hook(lambda g: paddle.sin(g))
        (y * y).sum().backward()
        return x.grad.numpy()

    @test_pir_only
    def test_caller_hook_after_function_hook(self):
        static_fn = paddle.jit.to_static(hooked_output)
        np.testing.assert_allclose(
            self.caller_hook_grad(static_fn),
            self.caller_hook_grad(hooked_output),
            rtol=1e-12,
        )

    # SOT with MIN_GRAPH_SIZE=10 runs this small graph eagerly: no error
    @set_to_static_mode(ToStaticMode.AST | ToStaticMode.SOT)
    @test_pir_only
    def test_hook_on_output_used_inside_raises(self):
        static_fn = paddle.jit.to_static(output_used_inside)
        x = paddle.to_tensor(self.x, stop_gradient=False)
        y, _ = static_fn(x)
        with self.assertRaisesRegex(
            RuntimeError, "returned by a function converted by"
        ):
            y.register_hook(lambda g: g * 2.0)


if __name__ == '__main__':
    unittest.main()
