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

import paddle

SCALE = {'value': 2.0}


def inspect(log):
    def hook(g):
        log.append(g.abs().max().item())
        if g.abs().max() > 0.5:
            return g * SCALE['value']
        return None

    return hook


def fn(x, hook):
    t = x * 1.5
    t.register_hook(hook)
    return (paddle.tanh(t) * t).sum()


class TestTensorHookRunTime(unittest.TestCase):
    def run_calls(self, f):
        log, grads = [], []
        hook = inspect(log)
        for i, batch in enumerate((2, 3)):
            SCALE['value'] = 2.0 + i
            x = paddle.to_tensor(
                np.linspace(-1.0, 1.0, batch * 2).reshape([batch, 2]),
                stop_gradient=False,
            )
            f(x, hook).backward()
            grads.append(x.grad.numpy())
        return grads, log

    def check(self, **kwargs):
        want_grads, want_log = self.run_calls(fn)
        got_grads, got_log = self.run_calls(paddle.jit.to_static(fn, **kwargs))
        self.assertEqual(len(got_log), len(want_log))
        for got, want in zip(got_log, want_log):
            self.assertIsInstance(got, float)
            np.testing.assert_allclose(got, want, rtol=1e-12)
        for got, want in zip(got_grads, want_grads):
            np.testing.assert_allclose(got, want, rtol=1e-12)

    def test_to_static_ast(self):
        self.check(full_graph=True)


if __name__ == '__main__':
    unittest.main()
