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
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_pir_only,
)

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


X = np.random.default_rng(24).standard_normal([2, 3])


def grad(f):
    x = paddle.to_tensor(X, stop_gradient=False)
    f(x).sum().backward()
    return x.grad.numpy()


class TestPyLayerSaveForBackwardTwice(Dy2StTestBase):
    """``ctx.save_for_backward(a, a)``: both saved tensors are ``a`` in the
    backward, as in eager (no in-place reuse of a shared buffer)."""

    @test_pir_only
    def test_grad_matches_eager(self):
        static_f = paddle.jit.to_static(fn)
        np.testing.assert_allclose(grad(static_f), grad(fn), rtol=1e-12)


class TestPyLayerSaveForBackwardTwiceStaticProgram(unittest.TestCase):
    """The same in a static program."""

    def test_static_program(self):
        want = grad(fn)
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [2, 3], 'float64')
                x.stop_gradient = False
                (dx,) = paddle.static.gradients([fn(x).sum()], [x])
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={'x': X}, fetch_list=[dx])
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
