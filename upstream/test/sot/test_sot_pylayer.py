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


class CusTanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - ctx.func(y))


class Scale(PyLayer):
    @staticmethod
    def forward(ctx, x, fn=None, factor=2.0):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.factor


class TestSotPyLayer(unittest.TestCase):
    """SOT compiles ``PyLayer.apply`` into the graph (no graph break)."""

    def setUp(self):
        self.old_env = {
            k: os.environ.get(k) for k in ('MIN_GRAPH_SIZE', 'SOT_COLLECT_INFO')
        }
        os.environ['MIN_GRAPH_SIZE'] = '0'
        os.environ['SOT_COLLECT_INFO'] = 'breakgraph_reason'
        InfoCollector().clear()
        self.x = np.random.default_rng(10).standard_normal([2, 3])

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

    def test_function_arguments(self):
        def fn(x):
            return CusTanh.apply(x * 2, func1=paddle.tanh) + x

        self.check(fn)

    def test_pylayer_in_a_loop(self):
        def fn(x):
            for _ in range(3):
                x = CusTanh.apply(x, paddle.tanh)
            return x

        self.check(fn)

    def test_keyword_argument_named_fn(self):
        def fn(x):
            return Scale.apply(x, fn=None, factor=3.0) * x

        self.check(fn)


if __name__ == '__main__':
    unittest.main()
