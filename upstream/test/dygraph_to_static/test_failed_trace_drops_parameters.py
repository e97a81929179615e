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
from paddle.jit.dy2static.parameter_recorder import (
    _global_inplace_map,
    _global_parameter_recorder,
)


class FailsWhenTraced(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        raise ValueError(f'fails while traced, with {y.shape}')


def double(x):
    return x * 2.0


class TestFailedTraceDropsItsParameters(unittest.TestCase):
    """A trace that raises after it used a parameter leaves nothing in the
    recorders, which key their entries by the id of the program: the next
    program Python puts at the freed program's address got the parameter,
    with a Value of the freed program (a crash when its name is read)."""

    def test_failed_trace_leaves_no_parameter_to_the_next_program(self):
        x = paddle.to_tensor(np.arange(4.0, dtype='float32'))
        for _ in range(10):
            net = paddle.jit.to_static(FailsWhenTraced(), full_graph=True)
            with self.assertRaises(ValueError):
                net(paddle.ones([2, 4]))
            self.assertEqual(len(_global_parameter_recorder.params_dict), 0)
            self.assertEqual(len(_global_parameter_recorder.tensor2value), 0)
            self.assertEqual(len(_global_inplace_map.params_dict), 0)
            fn = paddle.jit.to_static(double, full_graph=True)
            np.testing.assert_array_equal(fn(x).numpy(), x.numpy() * 2.0)
            params, _ = fn.concrete_program.parameters
            self.assertEqual(list(params), [])


if __name__ == '__main__':
    unittest.main()
