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
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
    test_sot_only,
)

import paddle


def leaf_forms(x):
    w = paddle.to_tensor([1.0, 2.0, 3.0], dtype='float64', stop_gradient=False)
    v = paddle.full([3], 2.0, dtype='float64')
    v.stop_gradient = False
    d = x.detach().clone()
    d.stop_gradient = False
    u = paddle.to_tensor(np.array([0.5, 1.0, 1.5]), stop_gradient=False)
    e = (x * 1.0).detach()
    e.stop_gradient = False
    return x * w * v * d * u * e, w, v, d, u, e


def creates_parameter(x):
    p = paddle.create_parameter([3], 'float64')
    return x * p, p


def reads_its_flag(x):
    d = x.detach().clone()
    d.stop_gradient = False
    return x * (2.0 if d.stop_gradient else 3.0)


class LeafProbe(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)
        self.log = []

    def forward(self, x):
        d = x.detach().clone()
        d.stop_gradient = False
        d.register_hook(lambda g: self.log.append(g.sum().item()) or g * 2)
        return paddle.tanh(self.fc(x) * d), d


def grads(*tensors):
    return [None if t.grad is None else t.grad.numpy() for t in tensors]


class MultiMethodNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.first = paddle.nn.Linear(3, 2)
        self.second = paddle.nn.Linear(3, 2)

    def forward(self, x):
        return self.first(x)

    def forward_general(self, x):
        return self.first(x) + self.second(x) * 0.5


class TestCreatedLeafGrad(Dy2StTestBase):
    """A leaf Tensor the function creates and returns gets its gradient in
    ``grad`` (the caller's uses and the function's own), as in eager."""

    def assert_same(self, got, want):
        self.assertEqual(len(got), len(want))
        for a, b in zip(got, want):
            self.assertEqual(a is None, b is None)
            if b is not None:
                np.testing.assert_allclose(a, b, rtol=1e-13)

    def run_leaf_forms(self, fn):
        out = []
        for seed in (1, 2):
            a = np.random.default_rng(seed).standard_normal(3)
            x = paddle.to_tensor(a, stop_gradient=False)
            y, w, v, d, u, e = fn(x)
            loss = (y * y).sum() + (w * w).sum() + (v * 3.0).sum()
            (loss + d.sum() + (u * u).sum() + (e * e).sum()).backward()
            out += grads(x, w, v, d, u, e)
        return out

    @test_pir_only
    def test_leaves_get_their_gradient(self):
        self.assert_same(
            self.run_leaf_forms(paddle.jit.to_static(leaf_forms)),
            self.run_leaf_forms(leaf_forms),
        )

    def train(self, net):
        out = []
        opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
        for batch in (2, 3, 4):
            a = np.random.default_rng(batch).standard_normal([batch, 3])
            x = paddle.to_tensor(a, stop_gradient=False)
            h, d = net(x)
            ((h * h).sum() + (d * 3.0).sum()).backward()
            out += grads(x, d, net.fc.weight)
            opt.step()
            opt.clear_grad()
        return out

    @test_pir_only
    def test_hook_on_leaf_sees_its_total_gradient(self):
        paddle.seed(7)
        paddle.set_default_dtype('float64')
        try:
            eager, converted = LeafProbe(), LeafProbe()
        finally:
            paddle.set_default_dtype('float32')
        converted.set_state_dict(eager.state_dict())
        want = self.train(eager)
        got = self.train(paddle.jit.to_static(converted))
        self.assert_same(got, want)
        np.testing.assert_allclose(converted.log, eager.log, rtol=1e-13)

    def run_creates_parameter(self, fn):
        out = []
        for seed in (3, 4):
            paddle.seed(seed)
            x = paddle.to_tensor([1.0, 2.0, 3.0], 'float64')
            x.stop_gradient = False
            y, p = fn(x)
            ((y * y).sum() + (p * 3.0).sum()).backward()
            out += [p.numpy(), *grads(x, p)]
        return out

    @test_sot_only
    @test_pir_only
    def test_parameter_created_in_function(self):
        self.assert_same(
            self.run_creates_parameter(paddle.jit.to_static(creates_parameter)),
            self.run_creates_parameter(creates_parameter),
        )

    @test_ast_only
    @test_pir_only
    def test_parameter_created_in_function_is_a_clear_error(self):
        with self.assertRaisesRegex(
            NotImplementedError, 'creates the parameter'
        ):
            self.run_creates_parameter(paddle.jit.to_static(creates_parameter))
        # a `jit.load`ed program names its parameters apart from the
        # Tensors loaded for them: they are not parameters it creates
        net = paddle.jit.to_static(MultiMethodNet(), full_graph=True)
        net.forward_general = paddle.jit.to_static(
            net.forward_general, full_graph=True
        )
        x = paddle.ones([2, 3])
        want = [net(x).numpy(), net.forward_general(x).numpy()]
        with tempfile.TemporaryDirectory() as tmp:
            paddle.jit.save(net, os.path.join(tmp, 'model'))
            loaded = paddle.jit.load(os.path.join(tmp, 'model'))
            got = [loaded(x).numpy(), loaded.forward_general(x).numpy()]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)

    @test_pir_only
    def test_stop_gradient_read_after_it_is_set(self):
        x = paddle.to_tensor([1.0, 2.0], 'float64')
        np.testing.assert_array_equal(
            paddle.jit.to_static(reads_its_flag)(x).numpy(),
            reads_its_flag(x).numpy(),
        )


if __name__ == '__main__':
    unittest.main()
