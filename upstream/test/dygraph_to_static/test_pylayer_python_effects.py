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


class LogsBatch(PyLayer):
    @staticmethod
    def forward(ctx, x):
        LOG.append(x.shape[0])
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


def apply(layer):
    def fn(x):
        return (layer.apply(x * 2.0) * 3.0).sum()

    return fn


class TestPyLayerPythonEffects(unittest.TestCase):
    """A PyLayer whose forward or backward stores into a global: eager
    stores at every call, a static graph would store one symbolic value
    when it builds the program."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        # SOT runs subgraphs under 10 ops eagerly by default
        os.environ['MIN_GRAPH_SIZE'] = '0'

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def run_fn(self, fn):
        LOG.clear()
        grads = []
        for batch in (2, 3, 5):
            x = paddle.to_tensor(
                np.random.default_rng(batch).standard_normal([batch, 4]),
                stop_gradient=False,
            )
            fn(x).backward()
            grads.append(x.grad.numpy())
        return grads, list(LOG)

    def check_sot(self, layer):
        want_grads, want_log = self.run_fn(apply(layer))
        got_grads, got_log = self.run_fn(paddle.jit.to_static(apply(layer)))
        self.assertEqual(got_log, want_log)
        for got, want in zip(got_grads, want_grads):
            np.testing.assert_allclose(got, want, rtol=1e-12)

    def test_sot_runs_backward_with_effects_eagerly(self):
        self.check_sot(LogsGradient)

    def test_sot_runs_forward_with_effects_eagerly(self):
        self.check_sot(LogsBatch)

    def test_ast_backward_with_effects_is_an_error(self):
        fn = paddle.jit.to_static(apply(LogsGradient), full_graph=True)
        x = paddle.to_tensor(np.ones([2, 4]), stop_gradient=False)
        with self.assertRaisesRegex(NotImplementedError, 'LOG.append'):
            fn(x).backward()


if __name__ == '__main__':
    unittest.main()
