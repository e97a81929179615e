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

import importlib.util
import os
import tempfile
import textwrap
import unittest

import numpy as np

import paddle

HELPER = textwrap.dedent(
    """
    import paddle

    SCALE = {scale}


    def helper(x):
        i = paddle.zeros([], 'int64')
        while i < 2:  # a graph break: SOT makes a resume function
            x = x * SCALE
            i += 1
        return x
    """
)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestSotSameFunctionInTwoModules(unittest.TestCase):
    """Two modules define the same function at the same line (code objects
    that compare equal) reading a global of their own: each runs with its
    own globals under SOT instead of the other module's translated code
    (a NameError, or the other module's value)."""

    def test_each_module_runs_its_own_function(self):
        with tempfile.TemporaryDirectory() as d:
            modules = []
            for k, scale in enumerate((2.0, 3.0)):
                path = os.path.join(d, f'sot_same_code_{k}.py')
                with open(path, 'w') as f:
                    f.write(HELPER.format(scale=scale))
                modules.append(load(path, f'sot_same_code_{k}'))
            self.assertEqual(
                modules[0].helper.__code__, modules[1].helper.__code__
            )
            x = paddle.to_tensor([1.0, 2.0])
            for module in modules * 2:
                got = paddle.jit.to_static(module.helper, full_graph=False)(x)
                np.testing.assert_allclose(
                    got.numpy(), module.helper(x).numpy(), rtol=1e-6
                )


if __name__ == '__main__':
    unittest.main()
