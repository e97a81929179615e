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
import warnings

import numpy as np
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle


def residual(x, y):
    t = x * 2.0
    t.add_(y)
    return (t * t).sum()


def scaled(x, y):
    t = x * 2.0
    s = t * 1.0
    t.multiply_(y)
    return (t * t + s).sum()


def zeroed(x, y):
    t = x * 2.0
    s = t + y
    t.zero_()
    return (t + s).sum()


def set_item(x, y):
    t = x * 2.0
    t[1:3] = y[0:2]
    t[0] = -0.75
    return (t * t).sum()


def loop_update(x, y):
    # a tensor-dependent `while` under to_static
    t = x * 1.0
    i = paddle.zeros([], 'int64')
    while i < 3:
        t.multiply_(y)
        i += 1
    return (t * t).sum()


def branch_update(x, y):
    # a tensor-dependent `if` under to_static
    t = x * 2.0
    if y.sum() < 0:
        t.add_(y)
    else:
        t.scale_(0.5)
    if y.sum() > 0:
        t.add_(y)
    else:
        t.scale_(0.5)
    return (t * t).sum()


def chained(x, y):
    # `add_` returns `t` itself, which `scale_` changes again
    t = x * 2.0
    t.add_(y).scale_(0.5)
    return (t * t).sum()


def while_loop_update(x, y):
    def body(i, t):
        t.multiply_(y)
        return i + 1, t

    _, t = paddle.static.nn.while_loop(
        lambda i, t: i < 3, body, [paddle.zeros([], 'int64'), x * 1.0]
    )
    return (t * t).sum()


X = np.array([0.5, -1.0, 2.0])
Y = np.array([1.0, 0.25, -3.0])


def grads(fn):
    x = paddle.to_tensor(X, stop_gradient=False)
    y = paddle.to_tensor(Y, stop_gradient=False)
    loss = fn(x, y)
    loss.backward()
    return [loss.numpy(), x.grad.numpy(), y.grad.numpy()]


def static_grads(fn):
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data('x', [3], 'float64')
            y = paddle.static.data('y', [3], 'float64')
            x.stop_gradient = False
            y.stop_gradient = False
            loss = fn(x, y)
            gx, gy = paddle.static.gradients([loss], [x, y])
        exe = paddle.static.Executor(paddle.CPUPlace())
        return exe.run(main, feed={'x': X, 'y': Y}, fetch_list=[loss, gx, gy])
    finally:
        paddle.disable_static()


def check(run, fns=(residual, scaled, zeroed, set_item)):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for fn in fns:
            for got, want in zip(run(fn), grads(fn)):
                np.testing.assert_allclose(
                    got, want, rtol=1e-12, err_msg=fn.__name__
                )


class TestInplaceOpGrad(Dy2StTestBase):
    @test_ast_only
    @test_pir_only
    def test_to_static(self):
        check(lambda fn: grads(paddle.jit.to_static(fn)))

    @test_ast_only
    @test_pir_only
    def test_to_static_loop_and_branch(self):
        check(
            lambda fn: grads(paddle.jit.to_static(fn)),
            (loop_update, branch_update, chained),
        )


class TestInplaceOpGradStaticProgram(unittest.TestCase):
    def test_static_program(self):
        check(static_grads)

    def test_static_program_while_loop(self):
        check(static_grads, (while_loop_update, chained))


if __name__ == '__main__':
    unittest.main()
