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

import functools
import os
import unittest

import numpy as np

import paddle
from paddle.jit.sot.utils import strict_mode_guard


def scale_by(w, g):
    return g * w


class TestSotRegisterHookAfterGraphBreak(unittest.TestCase):
    """A hook registered after a graph break on a tensor that the compiled
    code before the break used would miss that gradient: SOT raises a clear
    error instead of giving a wrong gradient."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        os.environ['MIN_GRAPH_SIZE'] = '0'
        self.x = np.random.default_rng(16).standard_normal([3])

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def check_raises(self, fn):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        static_fn = paddle.jit.to_static(fn, full_graph=False)
        # the error is raised where SOT handles the graph break
        with strict_mode_guard(False):
            with self.assertRaisesRegex(
                RuntimeError, 'computed and used before a graph break'
            ):
                static_fn(x).sum().backward()

    def test_hook_after_explicit_break_on_used_tensor(self):
        def fn(x):
            t = paddle.tanh(x)
            u = t * x
            print(t.numpy())
            t.register_hook(lambda g: g * 2)
            return u + t

        self.check_raises(fn)

    def test_partial_over_tensor_after_use(self):
        def fn(x):
            t = paddle.tanh(x)
            u = t * x
            w = paddle.exp(x)
            t.register_hook(functools.partial(scale_by, w))
            return u + t

        self.check_raises(fn)


if __name__ == '__main__':
    unittest.main()
