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


# Hooks that are functions of a module the loading process imports.
HOOK_MODULE = '''
import paddle

LOG = []


def double(g):
    return g * 2.0


def log_max(g):
    LOG.append(float(g.abs().max()))


class HookedNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc1(x)
        h.register_hook(double)
        h.register_hook(log_max)
        self.fc2.weight.register_hook(double)
        return self.fc2(paddle.tanh(h)).sum()
'''

SAVE_HOOKED = textwrap.dedent(
    '''
    import sys
    import paddle
    sys.path.insert(0, sys.argv[2])
    import jit_load_hook_functions as m
    from test_jit_load_tensor_hooks import SPEC
    paddle.seed(2026)
    net = m.HookedNet()
    paddle.jit.save(
        paddle.jit.to_static(net, full_graph=True), sys.argv[1], input_spec=SPEC
    )
    paddle.save(net.state_dict(), sys.argv[1] + '.pdparams')
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
        sys.modules.pop('jit_load_hook_functions', None)
        if self.temp_dir.name in sys.path:
            sys.path.remove(self.temp_dir.name)
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

    @test_ast_only
    @test_pir_only
    def test_hooks_of_an_imported_module_run_in_another_process(self):
        """Hooks that are functions of a module: saved by another process,
        found here in the module this process imported; Paddle Inference
        runs the export (the mark of the parameter's hooks is on an input,
        not a constant subgraph that its constant folding would fold)."""
        d = self.temp_dir.name
        with open(os.path.join(d, 'jit_load_hook_functions.py'), 'w') as f:
            f.write(HOOK_MODULE)
        script = os.path.join(d, 'save.py')
        with open(script, 'w') as f:
            f.write(SAVE_HOOKED)
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([d, *sys.path]))
        subprocess.run(
            [sys.executable, script, self.path, here], check=True, env=env
        )
        sys.path.insert(0, d)
        import jit_load_hook_functions as m

        def grad_and_log(model):
            m.LOG.clear()
            x = paddle.to_tensor(self.x, dtype='float32', stop_gradient=False)
            model(x).backward()
            return x.grad.numpy(), list(m.LOG)

        loaded = paddle.jit.load(self.path)
        loaded.train()
        net = m.HookedNet()
        net.set_state_dict(paddle.load(self.path + '.pdparams'))
        (got_grad, got_log), (want_grad, want_log) = (
            grad_and_log(loaded),
            grad_and_log(net),
        )
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)
        np.testing.assert_allclose(got_log, want_log, rtol=1e-6)

        config = paddle.inference.Config(
            self.path + '.json', self.path + '.pdiparams'
        )
        config.disable_gpu()
        predictor = paddle.inference.create_predictor(config)
        handle = predictor.get_input_handle(predictor.get_input_names()[0])
        x = self.x.astype('float32')
        handle.reshape(x.shape)
        handle.copy_from_cpu(x)
        predictor.run()
        output = predictor.get_output_names()[0]
        np.testing.assert_allclose(
            predictor.get_output_handle(output).copy_to_cpu(),
            net(paddle.to_tensor(x)).numpy(),
            rtol=1e-5,
        )

    @test_ast_only
    @test_pir_only
    def test_hook_on_the_returned_tensor_is_kept(self):
        def f(x):
            out = paddle.tanh(x) * 3.0
            out.register_hook(lambda g: g * 2.0)
            return out

        def grad(fn):
            x = paddle.to_tensor(self.x, stop_gradient=False)
            fn(x).sum().backward()
            return x.grad.numpy()

        paddle.jit.save(
            paddle.jit.to_static(f),
            self.path,
            input_spec=[paddle.static.InputSpec([3, 4], 'float64', 'x')],
        )
        loaded = paddle.jit.load(self.path)
        loaded.train()
        np.testing.assert_allclose(grad(loaded), grad(f), rtol=1e-12)

    @test_ast_only
    @test_pir_only
    def test_hooks_on_an_unused_result_of_split_are_kept(self):
        def f(x):
            a, b = paddle.split(paddle.tanh(x), 2, axis=1)
            b.register_hook(lambda g: g + 1.0)
            return (a * 3.0).sum()

        def grad(fn):
            x = paddle.to_tensor(self.x, stop_gradient=False)
            fn(x).backward()
            return x.grad.numpy()

        paddle.jit.save(
            paddle.jit.to_static(f),
            self.path,
            input_spec=[paddle.static.InputSpec([3, 4], 'float64', 'x')],
        )
        loaded = paddle.jit.load(self.path)
        loaded.train()
        np.testing.assert_allclose(grad(loaded), grad(f), rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
