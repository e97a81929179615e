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


def hooked_without_gradient(x, y):
    _ = y * 3.0
    y.register_hook(lambda g: g + 1.0)
    return x * 2.0


class TestRegisterHookOnInputWithoutGrad(Dy2StTestBase):
    """A hook that a to_static function registers on an input the program
    gives no gradient does not run, and the input keeps ``grad`` None, as
    in eager."""

    def setUp(self):
        self.x, self.y = np.random.default_rng(33).standard_normal([2, 3])

    def grads(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        y = paddle.to_tensor(self.y, stop_gradient=False)
        f(x, y).sum().backward()
        return x.grad, y.grad

    @test_pir_only
    def test_hooked_without_gradient(self):
        want_x, want_y = self.grads(hooked_without_gradient)
        self.assertIsNone(want_y)
        got_x, got_y = self.grads(paddle.jit.to_static(hooked_without_gradient))
        self.assertIsNone(got_y)
        np.testing.assert_allclose(got_x.numpy(), want_x.numpy(), rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
