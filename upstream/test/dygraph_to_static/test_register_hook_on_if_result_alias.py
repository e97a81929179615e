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
    test_ast_only,
    test_pir_only,
)

import paddle


def alias_with_other_use(x):
    t = paddle.sin(x)
    r = t if x.mean() > 0 else t * 2.0
    r.register_hook(lambda g: g * g)
    return r * x + t * 3.0


def alias_without_other_use(x):
    h = paddle.sin(x)
    if x.mean() > 0:
        h = h * 2.0
    h.register_hook(lambda g: g * g + 1.0)
    return h * x


class TestRegisterHookOnIfResultAlias(Dy2StTestBase):
    """In eager, an `if` result that a branch returns unchanged is that
    Tensor itself: a hook on it sees the Tensor's total gradient."""

    def grad(self, fn, x):
        x = paddle.to_tensor(x, stop_gradient=False)
        fn(x).sum().backward()
        return x.grad.numpy()

    @test_ast_only
    @test_pir_only
    def test_alias_with_other_use_raises(self):
        x = np.abs(np.random.default_rng(46).standard_normal([4]))
        static_fn = paddle.jit.to_static(alias_with_other_use)
        with self.assertRaisesRegex(NotImplementedError, "returns unchanged"):
            self.grad(static_fn, x)
        # Without another use of the Tensor the hook's gradient is eager's.
        fn = alias_without_other_use
        static_fn = paddle.jit.to_static(fn)
        for sign in (1.0, -1.0):
            np.testing.assert_allclose(
                self.grad(static_fn, x * sign),
                self.grad(fn, x * sign),
                rtol=1e-12,
            )


if __name__ == '__main__':
    unittest.main()
