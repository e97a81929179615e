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


def double(g):
    return g * 2


class ParamHookLinear(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)
        self.fc2 = paddle.nn.Linear(3, 3)

    def forward(self, x):
        self.fc.weight.register_hook(double)
        h = paddle.tanh(self.fc(x))
        return self.fc2(h) + paddle.matmul(x, self.fc.weight)


class TestSotRegisterHookOnParameter(unittest.TestCase):
    """A hook registered on a parameter inside ``forward`` is captured (no
    graph break) and registered on the eager parameter at each call, so the
    hooks accumulate over calls as in eager."""

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

    def test_parameter_hook_in_forward(self):
        paddle.seed(3)
        eager = ParamHookLinear()
        static = ParamHookLinear()
        static.set_state_dict(eager.state_dict())
        static = paddle.jit.to_static(static, full_graph=False)
        x = paddle.to_tensor(
            np.random.default_rng(3).standard_normal([2, 3]).astype('float32')
        )
        for _ in range(3):
            for layer in (eager, static):
                layer.clear_gradients()
                layer(x).sum().backward()
            for p, q in zip(static.parameters(), eager.parameters()):
                np.testing.assert_allclose(
                    p.grad.numpy(), q.grad.numpy(), rtol=1e-6
                )
        infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
        self.assertEqual(infos.get('BreakGraphReasonInfo', []), [])


if __name__ == '__main__':
    unittest.main()
