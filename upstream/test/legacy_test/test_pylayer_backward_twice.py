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


class Double(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Identity(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, dy):
        return dy


class TestPyLayerBackwardTwice(unittest.TestCase):
    """The grad node of a PyLayer frees its context after its first
    backward, even in a pass with retain_graph=True: a second pass through
    it is a clear error instead of a crash."""

    def check_second_pass(self, layer, x, input):
        y = layer.apply(input)
        l1, l2 = y.sum(), (y * y).sum()
        l1.backward(retain_graph=True)
        first = x.grad.numpy().copy()
        with self.assertRaisesRegex(
            OSError, f"PyLayer {layer.__name__}: its backward already ran"
        ):
            l2.backward()
        np.testing.assert_array_equal(x.grad.numpy(), first)

    def test_second_pass(self):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        self.check_second_pass(Double, x, x)

    def test_second_pass_input_returned(self):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        self.check_second_pass(Identity, x, x * 1.0)


if __name__ == '__main__':
    unittest.main()
