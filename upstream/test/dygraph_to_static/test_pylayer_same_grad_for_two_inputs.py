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
from paddle.autograd import PyLayer


class SameGrad(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, d):
        return d, d


def fn(x0, x1):
    return SameGrad.apply(x0, x1 * 2.0) * x1


class TestPyLayerSameGradForTwoInputs(Dy2StTestBase):
    """``backward`` returning one tensor as the gradient of two inputs."""

    def setUp(self):
        rng = np.random.default_rng(18)
        self.x0, self.x1 = rng.standard_normal([2, 3])

    def run_fn(self, f):
        xs = [
            paddle.to_tensor(a, stop_gradient=False) for a in (self.x0, self.x1)
        ]
        f(*xs).sum().backward()
        return [x.grad.numpy() for x in xs]

    @test_pir_only
    def test_grads_match_eager(self):
        want = self.run_fn(fn)
        got = self.run_fn(paddle.jit.to_static(fn))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
