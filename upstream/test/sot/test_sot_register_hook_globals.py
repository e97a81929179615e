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


def scale_by_three(g):
    return g * 3


class TestSotRegisterHookGlobals(unittest.TestCase):
    """A hook created in the traced frame reads its module's globals."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        os.environ['MIN_GRAPH_SIZE'] = '0'
        self.x = np.random.default_rng(12).standard_normal([2, 3])

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def check(self, fn):
        def run(f):
            x = paddle.to_tensor(self.x, stop_gradient=False)
            out = f(x)
            (out * out).sum().backward()
            return out.numpy(), x.grad.numpy()

        want = run(fn)
        got = run(paddle.jit.to_static(fn, full_graph=False))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)

    def test_lambda_calling_a_module_function(self):
        def fn(x):
            t = paddle.tanh(x)
            t.register_hook(lambda g: scale_by_three(g))
            return t * x

        self.check(fn)

    def test_lambda_calling_paddle(self):
        def fn(x):
            t = x * 2
            t.register_hook(lambda g: paddle.scale(g, 4.0))
            return paddle.sin(t)

        self.check(fn)


if __name__ == '__main__':
    unittest.main()
