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
from paddle.jit.sot.utils.info_collector import InfoCollector, InfoType

LOG = []


class LogsGradient(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        LOG.append(float(dy.sum()))
        return dy * 2.0


def halve(g):
    return g * 0.5


def fn(x):
    y = paddle.tanh(x)
    y.register_hook(halve)
    return LogsGradient.apply(y).sum()


class TestHookDecisionInfo(unittest.TestCase):
    """`SOT_COLLECT_INFO=hook_decision` records, for each hook and PyLayer
    of a to_static function, whether it was compiled into the program or
    runs at run time, and why."""

    def setUp(self):
        self.saved = os.environ.get("SOT_COLLECT_INFO")
        os.environ["SOT_COLLECT_INFO"] = "hook_decision"
        InfoCollector().clear()

    def tearDown(self):
        InfoCollector().clear()
        if self.saved is None:
            del os.environ["SOT_COLLECT_INFO"]
        else:
            os.environ["SOT_COLLECT_INFO"] = self.saved

    def test_decisions_of_a_hook_and_a_pylayer(self):
        x = paddle.to_tensor(np.ones([2, 3]), stop_gradient=False)
        paddle.jit.to_static(fn, full_graph=True)(x).backward()
        infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
        decisions = {
            (i.kind, i.decision, i.why)
            for i in infos["HookDecisionInfo"]
            if "halve" in i.what or "LogsGradient" in i.what
        }
        self.assertEqual(
            decisions,
            {
                ("hook", "compiled into the program", "pure tensor math"),
                ("PyLayer", "runs at run time", "it calls `LOG.append`"),
            },
        )
        self.assertEqual(LOG, [6.0])


if __name__ == '__main__':
    unittest.main()
