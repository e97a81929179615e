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


def split_fn(x):
    parts = paddle.split(x * 2.0, [2, 1], axis=0)
    parts[1].register_hook(lambda g: g + 1.0)
    return parts[0] * 3.0


def unbind_fn(x):
    parts = paddle.unbind(x * 2.0, axis=0)
    parts[-1].register_hook(lambda g: g + 1.0)
    return parts[0] * 3.0


class TestRegisterHookOnUnusedOutput(unittest.TestCase):
    """A hook on the unused output of a multi-output op runs on the zero
    gradient the op's backward gives it, as in eager."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        # SOT runs subgraphs under 10 ops eagerly by default
        os.environ['MIN_GRAPH_SIZE'] = '0'
        self.x = np.random.default_rng(22).standard_normal([3, 2])

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def grad(self, fn):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        fn(x).sum().backward()
        return x.grad.numpy()

    def check(self, fn, full_graph):
        static_fn = paddle.jit.to_static(fn, full_graph=full_graph)
        np.testing.assert_allclose(
            self.grad(static_fn), self.grad(fn), rtol=1e-12
        )

    def test_split_ast(self):
        self.check(split_fn, full_graph=True)

    def test_unbind_ast(self):
        self.check(unbind_fn, full_graph=True)

    def test_split_sot(self):
        self.check(split_fn, full_graph=False)


if __name__ == '__main__':
    unittest.main()
