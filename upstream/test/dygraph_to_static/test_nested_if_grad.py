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
    test_ast_only,
    test_pir_only,
)

import paddle


def nested_if(x):
    if x.mean() > 0:
        a = paddle.tanh(x)
        if x.sum() > 1:
            y = a * x * 2.0
        else:
            y = a
    else:
        y = x * 0.5
    return y


def nested_cond(x):
    def outer_true():
        a = paddle.tanh(x)
        return paddle.static.nn.cond(
            x.sum() > 1, lambda: a * x * 2.0, lambda: a
        )

    return paddle.static.nn.cond(x.mean() > 0, outer_true, lambda: x * 0.5)


def inputs():
    x = np.abs(np.random.default_rng(20).standard_normal([4]))
    # both branches taken; outer taken, inner not taken
    return [x + 1.0, x / x.sum() * 0.5]


def eager_grad(fn, a):
    x = paddle.to_tensor(a, stop_gradient=False)
    fn(x).sum().backward()
    return x.grad.numpy()


class TestNestedIfGrad(Dy2StTestBase):
    """The gradient of a value of an outer ``if`` branch that an inner
    ``if`` reads (``a``) reaches the input, as in eager."""

    @test_ast_only
    @test_pir_only
    def test_to_static(self):
        static_fn = paddle.jit.to_static(nested_if)
        for a in inputs():
            np.testing.assert_allclose(
                eager_grad(static_fn, a),
                eager_grad(nested_if, a),
                rtol=1e-12,
            )


class TestNestedIfGradStaticProgram(unittest.TestCase):
    """The same in a static program built with ``paddle.static.nn.cond``."""

    def test_static_program(self):
        for a in inputs():
            want = eager_grad(nested_if, a)
            paddle.enable_static()
            try:
                main = paddle.static.Program()
                with paddle.static.program_guard(main):
                    x = paddle.static.data('x', [4], 'float64')
                    x.stop_gradient = False
                    y = nested_cond(x)
                    (dx,) = paddle.static.gradients([y.sum()], [x])
                exe = paddle.static.Executor(paddle.CPUPlace())
                (got,) = exe.run(main, feed={'x': a}, fetch_list=[dx])
            finally:
                paddle.disable_static()
            np.testing.assert_allclose(got, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
