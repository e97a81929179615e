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


def sets_stop_gradient(x, w):
    t = x * w
    a = t * t
    t.stop_gradient = True
    return (a + t * 3.0).sum()


def branches_on_stop_gradient(x):
    y = paddle.tanh(x)
    if y.stop_gradient:
        return y * 0.0
    return y * 3.0


class TestSotStopGradientSetattr(unittest.TestCase):
    """`t.stop_gradient = True` in one function traced by SOT changes `t`
    only: a later function with a tensor of the same dtype and shape still
    sees its own flag (infer-meta caches one variable per dtype, shape and
    flag, and the setattr used to change the cached one)."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        os.environ['MIN_GRAPH_SIZE'] = '0'

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def test_flag_of_a_later_function(self):
        rng = np.random.default_rng(68)
        x = paddle.to_tensor(rng.standard_normal([2, 3]), stop_gradient=False)
        w = paddle.to_tensor(rng.standard_normal([3]), stop_gradient=False)
        paddle.jit.to_static(sets_stop_gradient, full_graph=False)(
            x, w
        ).backward()
        x = paddle.to_tensor(rng.standard_normal([2, 3]), stop_gradient=False)
        static_fn = paddle.jit.to_static(
            branches_on_stop_gradient, full_graph=False
        )
        np.testing.assert_allclose(
            static_fn(x).numpy(),
            branches_on_stop_gradient(x).numpy(),
            rtol=1e-12,
        )


if __name__ == '__main__':
    unittest.main()
