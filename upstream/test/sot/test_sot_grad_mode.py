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


def by_stop_gradient(x):
    t = x * 2.0
    if t.stop_gradient:
        return t - 1.0
    return t + 1.0


class TestSotGradMode(unittest.TestCase):
    """Code SOT compiled with the grad mode off serves calls with it off
    only, and the metas it inferred then do not reach other functions."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        # SOT runs subgraphs under 10 ops eagerly by default
        os.environ['MIN_GRAPH_SIZE'] = '0'

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def run_with_grad(self, fn):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        out = fn(x)
        self.assertFalse(out.stop_gradient)
        out.sum().backward()
        return out.numpy(), x.grad.numpy()

    def test_call_with_grad_after_call_without(self):
        fn = paddle.jit.to_static(by_stop_gradient, full_graph=False)
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        with paddle.no_grad():
            out = fn(x)
        self.assertTrue(out.stop_gradient)
        np.testing.assert_allclose(out.numpy(), [1.0, 3.0])
        out, grad = self.run_with_grad(fn)
        np.testing.assert_allclose(out, [3.0, 5.0])
        np.testing.assert_allclose(grad, [2.0, 2.0])

    def test_metas_inferred_without_grad(self):
        double = paddle.jit.to_static(lambda x: x * 2.0, full_graph=False)
        with paddle.no_grad():
            double(paddle.to_tensor([1.0, 2.0], stop_gradient=False))
        fn = paddle.jit.to_static(by_stop_gradient, full_graph=False)
        out, grad = self.run_with_grad(fn)
        np.testing.assert_allclose(out, [3.0, 5.0])
        np.testing.assert_allclose(grad, [2.0, 2.0])


if __name__ == '__main__':
    unittest.main()
