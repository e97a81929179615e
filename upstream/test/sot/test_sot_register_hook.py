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
from paddle.jit.sot.utils.info_collector import InfoCollector, InfoType


def times5(g):
    return g * 5


def double(g):
    return g * 2


class TestSotRegisterHook(unittest.TestCase):
    """SOT compiles ``register_hook`` into the graph (no graph break), so
    the hook sees the total gradient, as in eager."""

    def setUp(self):
        self.old_env = {
            k: os.environ.get(k) for k in ('MIN_GRAPH_SIZE', 'SOT_COLLECT_INFO')
        }
        os.environ['MIN_GRAPH_SIZE'] = '0'
        os.environ['SOT_COLLECT_INFO'] = 'breakgraph_reason'
        InfoCollector().clear()
        self.x = np.random.default_rng(2).standard_normal([3, 2])

    def tearDown(self):
        InfoCollector().clear()
        for k, v in self.old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def graph_breaks(self):
        infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
        return [str(i.reason) for i in infos.get('BreakGraphReasonInfo', [])]

    def check(self, fn):
        def run(f):
            x = paddle.to_tensor(self.x, stop_gradient=False)
            out = f(x)
            (out * out).sum().backward()
            return out.numpy(), x.grad.numpy()

        want = run(fn)
        got = run(paddle.jit.to_static(fn, full_graph=False))
        self.assertEqual(self.graph_breaks(), [])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)

    def test_hook_after_use_sees_total_grad(self):
        def fn(x):
            t = paddle.tanh(x)
            u = t * x
            t.register_hook(times5)
            return u + t

        self.check(fn)

    def test_run_time_hook(self):
        # not pure math: it runs at every backward with the gradient Tensor
        log = []

        def inspect(g):
            log.append(float(g.abs().max()))
            if g.abs().max() > 0.5:
                return g * 2.0
            return None

        def fn(x):
            t = x * 1.5
            t.register_hook(inspect)
            return paddle.tanh(t) * t

        self.check(fn)
        self.assertEqual(len(log), 2)
        self.assertEqual(log[0], log[1])

    def test_lambda_hook(self):
        def fn(x):
            t = x * 3
            t.register_hook(lambda g: g + 1)
            return paddle.sin(t)

        self.check(fn)

    def test_removed_hook_is_not_applied(self):
        def fn(x):
            t = paddle.exp(x)
            handle = t.register_hook(times5)
            t.register_hook(double)
            handle.remove()
            return t * x

        self.check(fn)


if __name__ == '__main__':
    unittest.main()
