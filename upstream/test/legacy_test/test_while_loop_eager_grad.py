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


def with_while_loop(x, w):
    def cond(i, h):
        return i < 3

    def body(i, h):
        return [i + 1, paddle.tanh(h * w) + x]

    _, h = paddle.static.nn.while_loop(
        cond, body, [paddle.zeros([1], 'int64'), x * 1.0]
    )
    return h


def with_python_loop(x, w):
    i, h = paddle.zeros([1], 'int64'), x * 1.0
    while i < 3:
        i, h = i + 1, paddle.tanh(h * w) + x
    return h


class TestWhileLoopEagerGrad(unittest.TestCase):
    """Eager `while_loop` is differentiated as the Python loop it stands
    for, instead of assigning each iteration into the loop variables."""

    def grads(self, fn, a, b):
        x = paddle.to_tensor(a, stop_gradient=False)
        w = paddle.to_tensor(b, stop_gradient=False)
        out = fn(x, w)
        out.sum().backward()
        return out.numpy(), x.grad.numpy(), w.grad.numpy()

    def test_matches_python_loop(self):
        a, b = np.random.default_rng(9).standard_normal([2, 4])
        for fn in (with_while_loop, paddle.jit.to_static(with_while_loop)):
            for got, want in zip(
                self.grads(fn, a, b), self.grads(with_python_loop, a, b)
            ):
                np.testing.assert_allclose(got, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
