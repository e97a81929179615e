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
import tempfile
import unittest

import numpy as np

import paddle
from paddle.static import InputSpec


def f(x):
    step = x[2:3].sum(axis=0, keepdim=True)
    h = paddle.cos(x) * 1.0
    i = paddle.zeros([], 'int64')
    while i < 3:
        h = h + step
        i = i + 1
    return paddle.tanh(h).mean()


class TestJitLoadWhileLoopGrad(unittest.TestCase):
    """The serializer writes no attribute of a block argument: the loop
    variables of a loaded `while` stopped gradient (stock: `The variable
    middle_0 should exist`). Fine-tuning the loaded program gives eager's
    gradients."""

    def test_loaded_while_loop_gradient(self):
        def grad(fn):
            x = paddle.to_tensor(
                np.array([0.3, -0.7, 1.1, 0.4]), stop_gradient=False
            )
            fn(x).backward()
            return x.grad.numpy()

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'f')
            paddle.jit.save(
                paddle.jit.to_static(f, full_graph=True),
                path,
                input_spec=[InputSpec([4], 'float64', 'x')],
            )
            loaded = paddle.jit.load(path)
        loaded.train()
        np.testing.assert_allclose(grad(loaded), grad(f), rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
