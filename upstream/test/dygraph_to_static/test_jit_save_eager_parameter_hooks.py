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
import tempfile
import unittest
import warnings

from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle
from paddle.static import InputSpec


class HookedInInit(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 2)
        self.fc.weight.register_hook(lambda g: g * 0.5)

    def forward(self, x):
        return self.fc(x)


class TestJitSaveEagerParameterHooks(Dy2StTestBase):
    @test_ast_only
    @test_pir_only
    def test_save_warns_that_they_are_not_saved(self):
        net = paddle.jit.to_static(
            HookedInInit(), input_spec=[InputSpec([-1, 4], 'float32')]
        )
        with tempfile.TemporaryDirectory() as d:
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter('always')
                paddle.jit.save(net, os.path.join(d, 'm'))
        said = [
            w for w in record if 'does not save the gradient' in str(w.message)
        ]
        self.assertEqual(len(said), 1)
        self.assertIn('`fc.weight`', str(said[0].message))


if __name__ == '__main__':
    unittest.main()
