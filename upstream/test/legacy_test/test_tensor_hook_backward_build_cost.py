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
from unittest import mock

import numpy as np

import paddle
from paddle.autograd import backward_utils, gradient_reach


def hooked_mlp(x, w):
    h = x
    for _ in range(4):
        h = paddle.tanh(paddle.matmul(h, w))
        h.register_hook(lambda g: g * 0.5)
    return h.sum()


class TestTensorHookBackwardBuildCost(unittest.TestCase):
    """Building the backward of a program with many tensor hooks does no
    work per hook that grows with the program: no walk of a hook op's
    block for its inputs, no reach analysis without `if`s, one map of
    cloned values per program."""

    def grads(self, fn, x, w):
        x = paddle.to_tensor(x, stop_gradient=False)
        w = paddle.to_tensor(w, stop_gradient=False)
        fn(x, w).backward()
        return x.grad.numpy(), w.grad.numpy()

    def test_no_block_walk_or_reach_analysis_for_hook_ops(self):
        rng = np.random.default_rng(51)
        x, w = rng.standard_normal([2, 3]), rng.standard_normal([3, 3])
        static_fn = paddle.jit.to_static(hooked_mlp, full_graph=True)
        walk = mock.patch.object(
            backward_utils,
            "get_used_external_value",
            wraps=backward_utils.get_used_external_value,
        )
        reach = mock.patch.object(
            gradient_reach,
            "_Reach",
            wraps=gradient_reach._Reach,
        )
        with walk as walked, reach as reached:
            got = self.grads(static_fn, x, w)
        self.assertEqual(walked.call_count, 0)
        self.assertEqual(reached.call_count, 0)
        for g, want in zip(got, self.grads(hooked_mlp, x, w)):
            np.testing.assert_allclose(g, want, rtol=1e-12)

    def test_clone_map_built_once_per_program(self):
        rng = np.random.default_rng(51)
        x, w = rng.standard_normal([2, 3]), rng.standard_normal([3, 3])
        m = paddle.to_tensor(rng.standard_normal([2, 3]))

        def reads_forward_value(x, w):
            h = x
            for _ in range(4):
                h = paddle.tanh(paddle.matmul(h, w))
                mask = h * m
                h.register_hook(lambda g, mask=mask: g * mask)
            return h.sum()

        static_fn = paddle.jit.to_static(reads_forward_value, full_graph=True)
        built = mock.patch.object(
            backward_utils.ValueDict,
            "__init__",
            autospec=True,
            side_effect=backward_utils.ValueDict.__init__,
        )
        with built as init:
            got = self.grads(static_fn, x, w)
        big = [c for c in init.call_args_list if len(c.args) > 1 and c.args[1]]
        self.assertLessEqual(len(big), 1)
        for g, want in zip(got, self.grads(reads_forward_value, x, w)):
            np.testing.assert_allclose(g, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
