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

LOG = []


def func(x):
    y = paddle.tanh(x * 1.5)

    def keep(g):
        LOG.append(g.numpy().copy())

    y.register_hook(keep)
    z = y * y
    z.register_hook(lambda g: LOG.append(g.numpy().tolist()))
    return z.sum()


class TestRegisterHookNumpy(Dy2StTestBase):
    """A hook defined in a to_static function keeps its `numpy()` calls: it
    runs at every backward with the gradient Tensor."""

    def run_func(self, fn):
        LOG.clear()
        x = paddle.to_tensor([[0.5, -1.0], [2.0, 0.25]], stop_gradient=False)
        fn(x).backward()
        return list(LOG), x.grad.numpy()

    @test_ast_only
    @test_pir_only
    def test_numpy_in_hooks(self):
        want_log, want_grad = self.run_func(func)
        got_log, got_grad = self.run_func(paddle.jit.to_static(func))
        self.assertEqual(
            [type(v) for v in got_log], [type(v) for v in want_log]
        )
        for got, want in zip(got_log, want_log):
            np.testing.assert_allclose(got, want, rtol=1e-6)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)


if __name__ == "__main__":
    unittest.main()
