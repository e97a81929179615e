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
import functools
import unittest

import numpy as np
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle

ORDER = []


def log_index(i, g):
    ORDER.append(i)


def chunks_with_logging_hooks(x):
    parts = paddle.chunk(x * 1.0, 4)
    for i, part in enumerate(parts):
        part.register_hook(functools.partial(log_index, i))
    return sum(part * float(i + 1) for i, part in enumerate(parts))


LOG = []


def hooks_around_a_loop(x, y):
    a = paddle.mean(x, axis=1)
    t = y * 1.0
    i = paddle.zeros([], 'int64')
    while i < 2:
        t = t + x
        i += 1
    t.register_hook(lambda g: LOG.append(('t', float(g.sum()))))
    a.register_hook(lambda g: LOG.append(('a', float(g.sum()))))
    # a second output, not differentiated
    return (t * t).sum() + (a * a).sum(), t * 1.0


class HandleRemovedLater(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = paddle.nn.Linear(3, 2)
        self.h = None

    def forward(self, x, step):
        if step == 0:
            self.h = self.lin.weight.register_hook(lambda g: g * 3.0)
        if step == 2:
            self.h.remove()
        return self.lin(x)


class TestRegisterHookRunTimeOrderAndHandles(Dy2StTestBase):
    def orders(self, fn):
        orders = []
        for run in range(20):
            ORDER.clear()
            a = np.random.default_rng(run).standard_normal([8])
            fn(paddle.to_tensor(a, stop_gradient=False)).sum().backward()
            orders.append(list(ORDER))
        return orders

    @test_ast_only
    @test_pir_only
    def test_hooks_on_outputs_of_one_op_run_in_order(self):
        static_fn = paddle.jit.to_static(chunks_with_logging_hooks)
        self.assertEqual(
            self.orders(static_fn), self.orders(chunks_with_logging_hooks)
        )

    def loop_run(self, fn):
        LOG.clear()
        x = paddle.to_tensor(
            np.linspace(-1.0, 1.0, 6).reshape([2, 3]), stop_gradient=False
        )
        y = paddle.to_tensor(
            np.linspace(0.5, 1.5, 6).reshape([2, 3]), stop_gradient=False
        )
        fn(x, y)[0].backward()
        return x.grad.numpy(), y.grad.numpy(), list(LOG)

    @test_ast_only
    @test_pir_only
    def test_hooks_on_either_side_of_a_loop(self):
        # the first hook's result starts the loop's backward, which takes
        # it over: the second hook still runs after the first
        got = self.loop_run(paddle.jit.to_static(hooks_around_a_loop))
        want = self.loop_run(hooks_around_a_loop)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        self.assertEqual([k for k, _ in got[2]], [k for k, _ in want[2]])
        np.testing.assert_allclose(
            [v for _, v in got[2]], [v for _, v in want[2]], rtol=1e-12
        )

    def weight_grads(self, to_static):
        paddle.seed(0)
        net = HandleRemovedLater()
        if to_static:
            net = paddle.jit.to_static(net)
        x = paddle.ones([2, 3])
        grads = []
        for step in (0, 1, 2, 1, 0, 1):
            net(x, step).sum().backward()
            grads.append(net.lin.weight.grad.numpy())
            net.clear_gradients()
        return grads

    @test_ast_only
    @test_pir_only
    def test_handle_removed_in_a_later_call(self):
        for got, want in zip(self.weight_grads(True), self.weight_grads(False)):
            np.testing.assert_allclose(got, want, rtol=1e-6)


if __name__ == '__main__':
    unittest.main()
