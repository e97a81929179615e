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


class TestSotRegisterHookClosure(unittest.TestCase):
    """A hook captured by SOT reads its closure cells when it runs, like
    eager, not when ``register_hook`` is called."""

    def setUp(self):
        self.old_env = {
            k: os.environ.get(k) for k in ('MIN_GRAPH_SIZE', 'SOT_COLLECT_INFO')
        }
        os.environ['MIN_GRAPH_SIZE'] = '0'
        os.environ['SOT_COLLECT_INFO'] = 'breakgraph_reason'
        InfoCollector().clear()
        self.x = np.random.default_rng(9).standard_normal([2, 3])

    def tearDown(self):
        InfoCollector().clear()
        for k, v in self.old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def check(self, fn):
        def run(f):
            x = paddle.to_tensor(self.x, stop_gradient=False)
            out = f(x)
            (out * out).sum().backward()
            return out.numpy(), x.grad.numpy()

        want = run(fn)
        got = run(paddle.jit.to_static(fn, full_graph=False))
        infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
        self.assertEqual(infos.get('BreakGraphReasonInfo', []), [])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)

    def test_closure_variable_rebound_after_register_hook(self):
        def fn(x):
            t = x * 3
            s = 2.0
            t.register_hook(lambda g: g * s)
            s = 10.0
            return t * t

        self.check(fn)

    def test_closure_variable_bound_after_register_hook(self):
        def fn(x):
            t = paddle.tanh(x)
            t.register_hook(lambda g: g * s)
            s = 4.0
            return t * x

        self.check(fn)

    def test_nested_function_sees_rebound_variable(self):
        def fn(x):
            t = x * 2
            s = 3.0

            def scale(g):
                return g * s

            t.register_hook(lambda g: scale(g))
            s = 7.0
            return paddle.sin(t)

        self.check(fn)


if __name__ == '__main__':
    unittest.main()
