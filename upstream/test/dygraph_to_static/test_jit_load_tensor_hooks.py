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
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle

LOG = []


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc1(x)
        h.register_hook(lambda g: g * 2.0)
        h.register_hook(lambda g: LOG.append(float(g.abs().max())))
        return self.fc2(paddle.tanh(h)).sum()


def make_net():
    paddle.seed(2026)
    return Net()


SPEC = [paddle.static.InputSpec([-1, 4], 'float32', 'x')]

SAVE = textwrap.dedent(
    '''
    import sys
    import paddle
    sys.path.insert(0, sys.argv[2])
    from test_jit_load_tensor_hooks import SPEC, make_net
    net = paddle.jit.to_static(make_net(), full_graph=True)
    paddle.jit.save(net, sys.argv[1], input_spec=SPEC)
    '''
)


class TestJitLoadTensorHooks(Dy2StTestBase):
    """A `paddle.jit.load`ed model keeps the gradient hooks its `forward`
    registered, in the process that saved it."""

    def setUp(self):
        self.temp_dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.temp_dir.name, 'net')
        self.x = np.random.default_rng(5).standard_normal([3, 4])

    def tearDown(self):
        self.temp_dir.cleanup()

    def grad_and_log(self, model):
        LOG.clear()
        x = paddle.to_tensor(self.x, dtype='float32', stop_gradient=False)
        model(x).backward()
        return x.grad.numpy(), list(LOG)

    @test_ast_only
    @test_pir_only
    def test_hooks_run_in_the_saving_process(self):
        paddle.jit.save(
            paddle.jit.to_static(make_net()),
            self.path,
            input_spec=SPEC,
        )
        want_grad, want_log = self.grad_and_log(make_net())
        loaded = paddle.jit.load(self.path)
        loaded.train()
        got_grad, got_log = self.grad_and_log(loaded)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)
        np.testing.assert_allclose(got_log, want_log, rtol=1e-6)

    @test_ast_only
    @test_pir_only
    def test_hooks_of_another_process_are_a_clear_error(self):
        script = os.path.join(self.temp_dir.name, 'save.py')
        with open(script, 'w') as f:
            f.write(SAVE)
        # the script imports this file, and what it imports
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        subprocess.run(
            [sys.executable, script, self.path, here], check=True, env=env
        )
        loaded = paddle.jit.load(self.path)
        loaded.train()
        x = paddle.to_tensor(self.x, dtype='float32', stop_gradient=False)
        with self.assertRaisesRegex(RuntimeError, 'saved by another process'):
            loaded(x).backward()


if __name__ == '__main__':
    unittest.main()
