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


class TwoOutputs(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx, da, db):
        return da * 2.0 + db * 3.0


class TestTensorHookWithoutGrad(unittest.TestCase):
    """A hook on an output of a multi-output node that gets no gradient is
    not called (it was called with None), like the hook of a tensor
    computed by a single-output op; it is still called when the output
    gets a gradient."""

    def test_pylayer_output_without_grad(self):
        calls = []
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        a, b = TwoOutputs.apply(x)
        a.register_hook(lambda g: calls.append(g) or g * 10.0)
        b.sum().backward()
        self.assertEqual(calls, [])
        np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])

        calls = []
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        a, b = TwoOutputs.apply(x)
        a.register_hook(lambda g: calls.append(g.numpy()))
        (a * 4.0 + b).sum().backward()
        self.assertEqual(len(calls), 1)
        np.testing.assert_allclose(calls[0], [4.0, 4.0])
        np.testing.assert_allclose(x.grad.numpy(), [11.0, 11.0])


if __name__ == '__main__':
    unittest.main()
