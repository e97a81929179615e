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

SHRINK = 0.5


class ShrinkGradient(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, d):
        return d * SHRINK


def fn(x):
    return (ShrinkGradient.apply(x * 1.0) * x).sum()


class TestSotPyLayerReadsGlobal(unittest.TestCase):
    """A PyLayer whose `backward` reads a global changed between calls
    gives each call's gradient under SOT (it runs eagerly), instead of the
    gradient of the value the compiled layer was built with."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        os.environ['MIN_GRAPH_SIZE'] = '0'

    def tearDown(self):
        global SHRINK
        SHRINK = 0.5
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def grad(self, f):
        x = paddle.to_tensor([1.0, -2.0, 3.0], stop_gradient=False)
        f(x).backward()
        return x.grad.numpy()

    def test_each_call_reads_the_global(self):
        global SHRINK
        static_fn = paddle.jit.to_static(fn, full_graph=False)
        for shrink in (0.5, -2.0, 0.25):
            SHRINK = shrink
            np.testing.assert_allclose(
                self.grad(static_fn), self.grad(fn), rtol=1e-6
            )


if __name__ == '__main__':
    unittest.main()
