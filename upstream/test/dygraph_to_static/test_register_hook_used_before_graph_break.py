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
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_pir_only,
    test_sot_mgs0_only,
)

import paddle


def hook_used_before_graph_break(x):
    s = paddle.sum(x / (paddle.square(x) + 1.0), axis=1)
    s.register_hook(lambda g: g + 1.0)
    unused = paddle.exp(x).sum(axis=1) + s  # noqa: F841
    if x.mean() > 0:  # a graph break under SOT
        r = x * 2.0
    else:
        r = x
    return r * -1.5, s * 1.0


class TestRegisterHookUsedBeforeGraphBreak(Dy2StTestBase):
    """A hook that SOT captures before a graph break, on a value the
    graph after the break also uses: when the caller does not
    differentiate the output that needs it, the backward cannot skip the
    hook as eager does, and says so."""

    def grads(self, fn, x):
        x = paddle.to_tensor(x, stop_gradient=False)
        first, second = fn(x)
        (first.sum() + second.sum()).backward()
        return x.grad.numpy()

    # SOT with MIN_GRAPH_SIZE=10 runs these small graphs eagerly: no error
    @test_sot_mgs0_only
    @test_pir_only
    def test_hook_used_before_graph_break_raises_without_gradient(self):
        # The graph before the break runs the hook; the graph after it
        # gives `s` zeros when `s * 1.0` is not differentiated.
        x = np.abs(np.random.default_rng(51).standard_normal([4, 2, 2]))
        static_fn = paddle.jit.to_static(hook_used_before_graph_break)
        np.testing.assert_allclose(
            self.grads(static_fn, x),
            self.grads(hook_used_before_graph_break, x),
            rtol=1e-12,
        )
        first, _ = static_fn(paddle.to_tensor(x, stop_gradient=False))
        with self.assertRaisesRegex(OSError, "hooks cannot be skipped"):
            first.sum().backward()


if __name__ == '__main__':
    unittest.main()
