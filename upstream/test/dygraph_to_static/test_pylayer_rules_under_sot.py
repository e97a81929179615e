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
    test_sot_mgs0_only,
)
from test_pylayer_forward_returns_input import used_after
from test_pylayer_output_differentiable import fn as detached_forward

import paddle


class TestPyLayerRulesUnderSot(Dy2StTestBase):
    """SOT captures ``PyLayer.apply`` with the rules of a static PyLayer:
    an output is differentiable when an input is, and a ``forward``
    returning its input used again is a clear error. (With
    MIN_GRAPH_SIZE=10 SOT runs these small graphs eagerly.)"""

    def setUp(self):
        self.x = np.random.default_rng(40).standard_normal([2, 3])

    def grad(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        f(x).sum().backward()
        return x.grad.numpy()

    @test_sot_mgs0_only
    @test_pir_only
    def test_output_differentiable_when_input_is(self):
        np.testing.assert_allclose(
            self.grad(paddle.jit.to_static(detached_forward)),
            self.grad(detached_forward),
            rtol=1e-12,
        )

    @test_sot_mgs0_only
    @test_pir_only
    def test_input_used_after_apply_is_clear_error(self):
        with self.assertRaisesRegex(
            NotImplementedError, 'returns its input Tensor'
        ):
            self.grad(paddle.jit.to_static(used_after))


if __name__ == '__main__':
    unittest.main()
