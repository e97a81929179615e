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

import os
import unittest

import numpy as np

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


class TestPyLayerSameGradForTwoInputs(unittest.TestCase):
    """``backward`` returning one tensor as the gradient of two inputs."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        # SOT runs subgraphs under 10 ops eagerly by default
        os.environ['MIN_GRAPH_SIZE'] = '0'
        rng = np.random.default_rng(18)
        self.x0, self.x1 = rng.standard_normal([2, 3])

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def run_fn(self, f):
        xs = [
            paddle.to_tensor(a, stop_gradient=False) for a in (self.x0, self.x1)
        ]
        f(*xs).sum().backward()
        return [x.grad.numpy() for x in xs]

    def check(self, full_graph):
        want = self.run_fn(fn)
        got = self.run_fn(paddle.jit.to_static(fn, full_graph=full_graph))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)

    def test_ast(self):
        self.check(full_graph=True)

    def test_sot(self):
        self.check(full_graph=False)


if __name__ == '__main__':
    unittest.main()
