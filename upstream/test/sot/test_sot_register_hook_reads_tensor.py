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


def hook_reads_tensors(x, w):
    m = paddle.exp(w)
    t = paddle.tanh(x)
    u = t * x
    t.register_hook(lambda g: g * w + m)
    return u + t * w


class TestSotRegisterHookReadsTensor(unittest.TestCase):
    """A hook that reads tensors of the graph (its closure holds them) is
    captured in the graph, with no graph break: its ops read them in the
    backward program."""

    def setUp(self):
        self.old_env = {
            k: os.environ.get(k) for k in ('MIN_GRAPH_SIZE', 'SOT_COLLECT_INFO')
        }
        os.environ['MIN_GRAPH_SIZE'] = '0'
        os.environ['SOT_COLLECT_INFO'] = 'breakgraph_reason'
        InfoCollector().clear()

    def tearDown(self):
        InfoCollector().clear()
        for k, v in self.old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_hook_reading_tensors(self):
        rng = np.random.default_rng(45)
        xs = [rng.standard_normal([4]) for _ in range(2)]

        def grads(fn):
            x, w = (paddle.to_tensor(a, stop_gradient=False) for a in xs)
            fn(x, w).sum().backward()
            return x.grad.numpy(), w.grad.numpy()

        static_fn = paddle.jit.to_static(hook_reads_tensors, full_graph=False)
        for _ in range(2):
            for got, want in zip(grads(static_fn), grads(hook_reads_tensors)):
                np.testing.assert_allclose(got, want, rtol=1e-12)
        infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
        self.assertEqual(infos.get('BreakGraphReasonInfo', []), [])


if __name__ == '__main__':
    unittest.main()
