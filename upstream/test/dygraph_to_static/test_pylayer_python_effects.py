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
from paddle.autograd import PyLayer

LOG = []


class LogsGradient(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        LOG.append(float(dy.abs().max()))
        return dy * (1 - paddle.tanh(x) ** 2)


class LogsThroughBase(LogsGradient):
    @staticmethod
    def backward(ctx, dy):
        return LogsGradient.backward(ctx, dy)


class RecomputeByBackwardPass(PyLayer):
    """Recomputation as ``RecomputeFunction`` does it: a backward pass."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.tanh(x) * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        with paddle.enable_grad():
            x2 = x.detach()
            x2.stop_gradient = False
            paddle.autograd.backward([paddle.tanh(x2) * x2], [dy])
        return x2.grad


def apply(layer):
    def fn(x):
        return (layer.apply(x * 2.0) * 3.0).sum()

    return fn


def run(fn):
    """Outputs, input gradients and the stores over batch sizes 2, 3, 5."""
    LOG.clear()
    results = []
    for batch in (2, 3, 5):
        x = paddle.to_tensor(
            np.random.default_rng(batch).standard_normal((batch, 4)),
            stop_gradient=False,
        )
        out = fn(x)
        out.backward()
        results.append((out.numpy(), x.grad.numpy()))
    return results, list(LOG)


class TestPyLayerPythonEffects(Dy2StTestBase):
    """A PyLayer whose backward stores into a global or runs a backward
    pass: eager runs it at every backward, with Tensors; so does the
    program under AST, in a run-time op."""

    def check(self, layer):
        want_results, want_log = run(apply(layer))
        got_results, got_log = run(paddle.jit.to_static(apply(layer)))
        for (go, gg), (wo, wg) in zip(got_results, want_results):
            np.testing.assert_allclose(go, wo, rtol=1e-12)
            np.testing.assert_allclose(gg, wg, rtol=1e-12)
        np.testing.assert_allclose(got_log, want_log, rtol=1e-12)
        self.assertEqual(len(got_log), len(want_log))

    @test_ast_only
    @test_pir_only
    def test_backward_with_a_store_runs_at_every_backward(self):
        self.check(LogsGradient)

    @test_ast_only
    @test_pir_only
    def test_effect_in_the_base_class_backward_is_found(self):
        self.check(LogsThroughBase)

    @test_ast_only
    @test_pir_only
    def test_backward_running_a_backward_pass(self):
        self.check(RecomputeByBackwardPass)

    @test_ast_only
    @test_pir_only
    def test_backward_runs_only_when_a_gradient_reaches_the_layer(self):
        # Its output feeds one branch of a tensor-dependent `if`: eager
        # runs `backward` only when that branch ran.
        def fn(x):
            y = LogsGradient.apply(x * 2.0)
            out = paddle.static.nn.cond(
                x.sum() > 0, lambda: y * 3.0, lambda: x * 5.0
            )
            return out.sum()

        static_fn = paddle.jit.to_static(fn)
        for sign, calls in ((-1.0, 0), (1.0, 1)):
            got = []
            for f in (fn, static_fn):
                LOG.clear()
                x = paddle.to_tensor(
                    sign * np.abs(np.random.default_rng(3).random((3, 4))),
                    stop_gradient=False,
                )
                f(x).backward()
                got.append((x.grad.numpy(), list(LOG)))
            np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-12)
            np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-12)
            self.assertEqual(len(got[1][1]), calls)

    @test_ast_only
    @test_pir_only
    def test_paddle_grad_of_the_function_runs_the_backward(self):
        # `paddle.grad` in the function runs `backward` in the forward
        # program, with no input getting a gradient from the backward one.
        def fn(x):
            y = LogsGradient.apply(x * 2.0)
            (g,) = paddle.grad([(y * 3.0).sum()], [x])
            return g

        got = []
        for f in (fn, paddle.jit.to_static(fn)):
            LOG.clear()
            x = paddle.to_tensor(
                np.random.default_rng(4).standard_normal((3, 4)),
                stop_gradient=False,
            )
            got.append((f(x).numpy(), list(LOG)))
        np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-12)
        np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-12)
        self.assertEqual(len(got[1][1]), 1)


if __name__ == '__main__':
    unittest.main()
