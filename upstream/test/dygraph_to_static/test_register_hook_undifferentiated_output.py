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

os.environ["MIN_GRAPH_SIZE"] = "0"


def hook_on_value(x):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    return t * 3.0, x * 4.0


def hook_on_input(x, y):
    x.register_hook(lambda g: g + 1.0)
    return paddle.tanh(x) * 3.0 + y, y * 4.0


def hook_before_graph_break(x, y):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    a = t * 3.0
    b = y * 2.0  # the graph before the break outputs `a` and `b`
    if y.sum() > 0:  # a graph break under SOT
        return b
    return a + b


def hook_used_before_graph_break(x):
    s = paddle.sum(x / (paddle.square(x) + 1.0), axis=1)
    s.register_hook(lambda g: g + 1.0)
    unused = paddle.exp(x).sum(axis=1) + s  # noqa: F841
    if x.mean() > 0:  # a graph break under SOT
        r = x * 2.0
    else:
        r = x
    return r * -1.5, s * 1.0


class TwoHeads(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(3, 3)
        self.b = paddle.nn.Linear(3, 3)

    def forward(self, x):
        self.b.weight.register_hook(lambda g: g + 1.0)
        return self.a(x), self.b(x)


class TwoPlainHeads(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(3, 3)
        self.b = paddle.nn.Linear(3, 3)

    def forward(self, x):
        return self.a(x), self.b(x)


def uses_x_in_first(x, y):
    return paddle.tanh(x) * 3.0 + y, y * 4.0


class TestRegisterHookUndifferentiatedOutput(unittest.TestCase):
    """A hook on a value that feeds only outputs of a to_static program
    that the caller does not differentiate must not run (eager gives the
    value no gradient), though the program's grad node gives them zeros."""

    def grads(self, fn, inputs, picked):
        xs = [paddle.to_tensor(a, stop_gradient=False) for a in inputs]
        outs = fn(*xs)
        outs = [outs] if isinstance(outs, paddle.Tensor) else outs
        sum(outs[i].sum() for i in picked).backward()
        return [None if x.grad is None else x.grad.numpy() for x in xs]

    def check(self, fn, inputs, picked, full_graph):
        static_fn = paddle.jit.to_static(fn, full_graph=full_graph)
        got = self.grads(static_fn, inputs, picked)
        want = self.grads(fn, inputs, picked)
        for g, w in zip(got, want):
            if w is None:
                self.assertTrue(g is None or not np.any(g))
            else:
                np.testing.assert_allclose(g, w, rtol=1e-12)

    def test_hook_on_value(self):
        x = np.random.default_rng(50).standard_normal([3])
        for full_graph in (True, False):
            for picked in ((0,), (1,), (0, 1)):
                self.check(hook_on_value, [x], picked, full_graph)

    def test_hook_on_input_gets_no_gradient(self):
        x, y = np.random.default_rng(50).standard_normal([2, 3])
        for full_graph in (True, False):
            static_fn = paddle.jit.to_static(
                hook_on_input, full_graph=full_graph
            )
            grad_x, _ = self.grads(static_fn, [x, y], (1,))
            self.assertIsNone(grad_x)
            self.check(hook_on_input, [x, y], (0,), full_graph)

    def test_hook_before_graph_break(self):
        x, y = np.random.default_rng(50).standard_normal([2, 3])
        for sign in (1.0, -1.0):
            self.check(
                hook_before_graph_break,
                [x, sign * np.abs(y)],
                (0,),
                full_graph=False,
            )

    def test_hook_used_before_graph_break_raises_without_gradient(self):
        # The graph before the break runs the hook; the graph after it
        # gives `s` zeros when `s * 1.0` is not differentiated.
        x = np.abs(np.random.default_rng(51).standard_normal([4, 2, 2]))
        static_fn = paddle.jit.to_static(
            hook_used_before_graph_break, full_graph=False
        )
        self.check(hook_used_before_graph_break, [x], (0, 1), False)
        first, _ = static_fn(paddle.to_tensor(x, stop_gradient=False))
        with self.assertRaisesRegex(OSError, "hooks cannot be skipped"):
            first.sum().backward()

    def test_non_leaf_input_without_gradient_raises(self):
        w, y = (
            paddle.to_tensor(a, stop_gradient=False)
            for a in np.random.default_rng(50).standard_normal([2, 3])
        )
        static_fn = paddle.jit.to_static(hook_on_input, full_graph=True)
        _, second = static_fn(w * 1.0, y)
        with self.assertRaisesRegex(OSError, "not a leaf Tensor"):
            second.sum().backward()

    def test_parameter_hook_gets_no_gradient(self):
        for full_graph in (True, False):
            net = paddle.jit.to_static(TwoHeads(), full_graph=full_graph)
            first, _ = net(paddle.ones([2, 3]))
            first.sum().backward()
            self.assertIsNone(net.b.weight.grad)

    def test_eager_hooks_on_parameter_and_input_get_no_gradient(self):
        x, y = np.random.default_rng(50).standard_normal([2, 3])
        for full_graph in (True, False):
            calls = []
            net = TwoPlainHeads()
            net.b.weight.register_hook(lambda g, calls=calls: calls.append(1))
            static_net = paddle.jit.to_static(net, full_graph=full_graph)
            first, _ = static_net(paddle.ones([2, 3]))
            first.sum().backward()
            self.assertIsNone(net.b.weight.grad)
            self.assertEqual(calls, [])

            xs = [paddle.to_tensor(a, stop_gradient=False) for a in (x, y)]
            xs[0].register_hook(lambda g: g + 1.0)
            static_fn = paddle.jit.to_static(
                uses_x_in_first, full_graph=full_graph
            )
            _, second = static_fn(*xs)
            second.sum().backward()
            self.assertIsNone(xs[0].grad)


if __name__ == '__main__':
    unittest.main()
