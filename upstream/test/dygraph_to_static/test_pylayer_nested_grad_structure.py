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

import paddle
from paddle.autograd import PyLayer


class Nested(PyLayer):
    @staticmethod
    def forward(ctx, xs, y):
        return xs[0] * 2 + xs[1] * 3 + y * 4

    @staticmethod
    def backward(ctx, dz):
        return [dz * 2, None], dz * 4


def fn(a, b, c):
    return Nested.apply([a, b], c)


class TestPyLayerNestedGradStructure(unittest.TestCase):
    def grads(self, f):
        ts = [
            paddle.to_tensor([1.0, 2.0], stop_gradient=False) for _ in range(3)
        ]
        f(*ts).sum().backward()
        return [None if t.grad is None else t.grad.numpy() for t in ts]

    def test_to_static(self):
        got = self.grads(paddle.jit.to_static(fn, full_graph=True))
        want = self.grads(fn)
        for g, w in zip(got, want):
            self.assertEqual(g is None, w is None)
            if w is not None:
                np.testing.assert_allclose(g, w)


if __name__ == '__main__':
    unittest.main()
