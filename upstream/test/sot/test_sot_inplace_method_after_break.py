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
from paddle.jit.sot import psdb


def after_break(x, y):
    t = x * 1.0
    psdb.breakgraph()
    # `t` enters this graph as an input: the in-place op changes it
    t.multiply_(y)
    paddle.tanh_(t)
    return t * t


def in_tensor_while(x, y):
    t = x * 1.0
    i = paddle.zeros([], 'int64')
    while i < 2:
        t.multiply_(y)
        i += 1
    return t * t


class TestSotInplaceMethodAfterBreak(unittest.TestCase):
    """An in-place Tensor method on a tensor that a SOT graph receives as an
    input (after a graph break, in a loop body) changes that tensor, as in
    eager, instead of being dropped."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        os.environ['MIN_GRAPH_SIZE'] = '0'

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def run_fn(self, fn):
        rng = np.random.default_rng(6)
        x = paddle.to_tensor(rng.standard_normal([3]), stop_gradient=False)
        y = paddle.to_tensor(rng.standard_normal([3]), stop_gradient=False)
        out = fn(x, y)
        out.sum().backward()
        return out.numpy(), x.grad.numpy(), y.grad.numpy()

    def test_equals_eager(self):
        for fn in (after_break, in_tensor_while):
            static_fn = paddle.jit.to_static(fn, full_graph=False)
            for got, want in zip(self.run_fn(static_fn), self.run_fn(fn)):
                np.testing.assert_allclose(
                    got, want, rtol=1e-12, err_msg=fn.__name__
                )


if __name__ == '__main__':
    unittest.main()
