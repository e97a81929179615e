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
from paddle.jit.sot.opcode_translator.executor.executor_cache import (
    OpcodeExecutorCache,
)
from paddle.jit.sot.utils.info_collector import InfoCollector, InfoType

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


GRAD_SCALE = 2.0


class CountsOnCtx(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.calls = 0
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        ctx.calls += 1  # a number on `ctx`: no effect
        return dy * (1 - paddle.tanh(x) ** 2)


class CountsAndReadsAGlobal(CountsOnCtx):
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        ctx.calls += 1
        return dy * (1 - paddle.tanh(x) ** 2) * GRAD_SCALE


def logs(x):
    return (LogsGradient.apply(x * 2.0) * 3.0).sum(), (x * 5.0).sum()


def counts(x):
    return (CountsOnCtx.apply(x * 2.0) * 3.0).sum(), (x * 5.0).sum()


def counts_and_reads(x):
    return (CountsAndReadsAGlobal.apply(x * 2.0) * 3.0).sum(), (x * 5.0).sum()


def recomputes(x):
    return (RecomputeByBackwardPass.apply(x * 2.0) * 3.0).sum(), (x * 5.0).sum()


class TestSotPyLayerRunTimeBackward(unittest.TestCase):
    """SOT keeps a PyLayer whose ``backward`` has a Python effect in its
    graph; the graph runs ``backward`` with the run's Tensors in each
    backward that a gradient of the layer's outputs reaches, as eager does
    (no graph break)."""

    def setUp(self):
        self.old_env = {
            k: os.environ.get(k) for k in ('MIN_GRAPH_SIZE', 'SOT_COLLECT_INFO')
        }
        os.environ['MIN_GRAPH_SIZE'] = '0'
        os.environ['SOT_COLLECT_INFO'] = 'breakgraph_reason'
        InfoCollector().clear()
        OpcodeExecutorCache().clear()

    def tearDown(self):
        InfoCollector().clear()
        OpcodeExecutorCache().clear()
        for k, v in self.old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def run_batches(self, fn, which):
        """Outputs, input gradients and the stores over batch sizes 2, 3,
        5, differentiating output ``which``."""
        LOG.clear()
        results = []
        for batch in (2, 3, 5):
            x = paddle.to_tensor(
                np.random.default_rng(batch).standard_normal((batch, 4)),
                stop_gradient=False,
            )
            out = fn(x)[which]
            out.backward()
            results.append((out.numpy(), x.grad.numpy()))
        return results, list(LOG)

    def check(self, fn, which, stores):
        want_results, want_log = self.run_batches(fn, which)
        got_results, got_log = self.run_batches(
            paddle.jit.to_static(fn, full_graph=False), which
        )
        for (go, gg), (wo, wg) in zip(got_results, want_results):
            np.testing.assert_allclose(go, wo, rtol=1e-12)
            np.testing.assert_allclose(gg, wg, rtol=1e-12)
        self.assertEqual(len(want_log), stores)
        self.assertEqual(len(got_log), stores)
        np.testing.assert_allclose(got_log, want_log, rtol=1e-12)
        infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
        self.assertEqual(infos.get('BreakGraphReasonInfo', []), [])

    def test_backward_with_a_store_runs_in_the_graph(self):
        self.check(logs, 0, 3)

    def test_backward_running_a_backward_pass_runs_in_the_graph(self):
        self.check(recomputes, 0, 0)

    def test_backward_counting_on_ctx(self):
        # Before the layer is traced, SOT cannot tell `ctx.calls += 1` from
        # an effect; the program, built with `ctx`, traces `backward`, and
        # the layer stays in the graph
        self.check(counts, 0, 0)
        # unless the traced `backward` reads a Python value, which the
        # graph would keep: then the layer runs eagerly
        global GRAD_SCALE
        static_fn = paddle.jit.to_static(counts_and_reads, full_graph=False)
        try:
            for scale in (2.0, 5.0):
                GRAD_SCALE = scale
                want, _ = self.run_batches(counts_and_reads, 0)
                got, _ = self.run_batches(static_fn, 0)
                for (go, gg), (wo, wg) in zip(got, want):
                    np.testing.assert_allclose(go, wo, rtol=1e-12)
                    np.testing.assert_allclose(gg, wg, rtol=1e-12)
        finally:
            GRAD_SCALE = 2.0

    def test_backward_does_not_run_for_an_output_the_caller_leaves(self):
        # Eager never runs `backward` when the caller differentiates only
        # the output that does not use the layer.
        self.check(logs, 1, 0)


if __name__ == '__main__':
    unittest.main()
