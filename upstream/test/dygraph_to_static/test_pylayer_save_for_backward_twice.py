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
from paddle.autograd import PyLayer


class SaveTwice(PyLayer):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a, a)
        return a * 3

    @staticmethod
    def backward(ctx, d):
        a, b = ctx.saved_tensor()
        return d * (a + 1) * b


def fn(x):
    return SaveTwice.apply(x * 2)


class TestPyLayerSaveForBackwardTwice(unittest.TestCase):
    """``ctx.save_for_backward(a, a)``: both saved tensors are ``a`` in the
    backward, as in eager (no in-place reuse of a shared buffer)."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        # SOT runs subgraphs under 10 ops eagerly by default
        os.environ['MIN_GRAPH_SIZE'] = '0'
        self.x = np.random.default_rng(24).standard_normal([2, 3])

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def grad(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        f(x).sum().backward()
        return x.grad.numpy()

    def check(self, f, full_graph):
        static_f = paddle.jit.to_static(f, full_graph=full_graph)
        np.testing.assert_allclose(
            self.grad(static_f), self.grad(f), rtol=1e-12
        )

    def test_ast(self):
        self.check(fn, full_graph=True)

    def test_sot(self):
        self.check(fn, full_graph=False)

    def test_static_program(self):
        want = self.grad(fn)
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [2, 3], 'float64')
                x.stop_gradient = False
                (dx,) = paddle.static.gradients([fn(x).sum()], [x])
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={'x': self.x}, fetch_list=[dx])
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
