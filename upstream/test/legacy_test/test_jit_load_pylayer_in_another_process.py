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

import paddle
from paddle.static import InputSpec

MODELS = '''
import paddle
from paddle.autograd import PyLayer


class DoubleTanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return 2 * dy


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return DoubleTanh.apply(self.linear(x))
'''

FINETUNE = '''
import sys

import numpy as np
import paddle

loaded = paddle.jit.load(sys.argv[1])
x = paddle.to_tensor(np.ones((2, 4), 'float32'))
loaded.eval()
print('predict', list(loaded(x).shape))
loaded.train()
try:
    loaded(x).sum().backward()
except RuntimeError as e:
    print('ERROR:', e)
    print('imported', 'jit_load_pylayer_models' in sys.modules)
    raise SystemExit(3)
print('trained')
'''

FINETUNE_AFTER_IMPORT = '''
import sys

import numpy as np
import paddle

import jit_load_pylayer_models as models

loaded = paddle.jit.load(sys.argv[1])
loaded.train()
x = paddle.to_tensor(np.ones((2, 4), 'float32'), stop_gradient=False)
loaded(x).sum().backward()
net = models.Net()
net.set_state_dict(paddle.load(sys.argv[1] + '.pdparams'))
x_eager = paddle.to_tensor(np.ones((2, 4), 'float32'), stop_gradient=False)
net(x_eager).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), x_eager.grad.numpy(), rtol=1e-6)
print('trained as eager')
'''


class TestJitLoadPyLayerInAnotherProcess(unittest.TestCase):
    """The custom backward of a PyLayer is Python code that
    ``paddle.jit.save`` does not save: it records the module and name of
    the PyLayer class, and ``paddle.jit.load`` in another process finds it
    in the modules that process imported."""

    def setUp(self):
        self.temp_dir = tempfile.TemporaryDirectory()
        self.old_path = list(sys.path)

    def tearDown(self):
        sys.path[:] = self.old_path
        sys.modules.pop('jit_load_pylayer_models', None)
        self.temp_dir.cleanup()

    def save_and_run(self, code):
        d = self.temp_dir.name
        with open(os.path.join(d, 'jit_load_pylayer_models.py'), 'w') as f:
            f.write(MODELS)
        script = os.path.join(d, 'finetune.py')
        with open(script, 'w') as f:
            f.write(textwrap.dedent(code))
        sys.path.insert(0, d)
        from jit_load_pylayer_models import Net

        prefix = os.path.join(d, 'm')
        net = Net()
        paddle.jit.save(
            paddle.jit.to_static(net, full_graph=True),
            prefix,
            input_spec=[InputSpec([-1, 4], 'float32', 'x')],
        )
        paddle.save(net.state_dict(), prefix + '.pdparams')
        env = dict(os.environ, FLAGS_enable_pir_api='1')
        return subprocess.run(
            [sys.executable, script, prefix],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    def test_finetune_without_the_module_is_clear_error(self):
        """The process has not imported the module of the PyLayer: a clear
        error that says to import it; loading never imports it."""
        proc = self.save_and_run(FINETUNE)
        out = proc.stdout + proc.stderr[-3000:]
        self.assertEqual(proc.returncode, 3, out)
        self.assertIn('predict [2, 3]', proc.stdout)
        self.assertIn(
            'PyLayer `DoubleTanh` (class `jit_load_pylayer_models.DoubleTanh`)',
            proc.stdout,
        )
        self.assertIn(
            '`import jit_load_pylayer_models` before `paddle.jit.load`',
            proc.stdout,
        )
        self.assertIn('imported False', proc.stdout)

    def test_finetune_after_importing_the_module(self):
        """The process imported the module of the PyLayer: the loaded
        model trains with its custom backward, as eager."""
        proc = self.save_and_run(FINETUNE_AFTER_IMPORT)
        out = proc.stdout + proc.stderr[-3000:]
        self.assertEqual(proc.returncode, 0, out)
        self.assertIn('trained as eager', proc.stdout)


if __name__ == '__main__':
    unittest.main()
