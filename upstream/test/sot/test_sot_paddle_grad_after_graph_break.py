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
from paddle.jit.sot.opcode_translator.executor.executor_cache import (
    OpcodeExecutorCache,
)


def grad_after_break(x):
    y = paddle.tanh(x)
    if x.numel() > 0:  # a graph break
        return paddle.grad([y], [x])[0]
    return paddle.ones_like(x)


def grad_through_input(z, x):
    y = z * 3.0
    (g,) = paddle.grad([y.sum()], [x], allow_unused=True)
    return paddle.zeros_like(x) if g is None else g


class TestSotPaddleGradAfterGraphBreak(unittest.TestCase):
    """`paddle.grad` whose outputs a graph receives as inputs computed
    before it (eagerly, or by a graph before a graph break) runs eagerly,
    as the graph cannot differentiate through them: eager's gradients
    instead of `None` or an error for an unused input."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        OpcodeExecutorCache().clear()

    def tearDown(self):
        OpcodeExecutorCache().clear()
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def test_grad_of_a_value_computed_before_a_break(self):
        for min_graph_size in ('0', '10'):
            os.environ['MIN_GRAPH_SIZE'] = min_graph_size
            OpcodeExecutorCache().clear()
            fn = paddle.jit.to_static(grad_after_break, full_graph=False)
            x = paddle.to_tensor([[0.5, -1.0], [2.0, 0.25]])
            x.stop_gradient = False
            np.testing.assert_allclose(
                fn(x).numpy(), grad_after_break(x).numpy(), rtol=1e-6
            )

    def test_input_with_and_without_history(self):
        os.environ['MIN_GRAPH_SIZE'] = '0'
        fn = paddle.jit.to_static(grad_through_input, full_graph=False)
        for leaf in (True, False, True, False):
            x = paddle.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
            if leaf:
                z = paddle.to_tensor([4.0, 5.0, 6.0], stop_gradient=False)
            else:
                z = x * 2.0
            np.testing.assert_array_equal(
                fn(z, x).numpy(), grad_through_input(z, x).numpy()
            )


if __name__ == '__main__':
    unittest.main()
