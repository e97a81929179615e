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


def hooked_before_if(x):
    t = x * 2
    t.register_hook(lambda g: g + 1.0).remove()
    if x.mean() > 0:
        t.register_hook(lambda g: g * 3.0)
        r = t * 2.0
    else:
        r = t * 0.5
    return r


class TestRegisterHookInIfOnHookedValue(Dy2StTestBase):
    """A hook inside an `if` branch on a value defined (and hooked) before
    the `if` would apply whichever branch runs: a clear error."""

    @test_ast_only
    @test_pir_only
    def test_raises_for_either_branch(self):
        x = np.abs(np.random.default_rng(11).standard_normal([4]))
        for sign in (1.0, -1.0):
            fn = paddle.jit.to_static(hooked_before_if)
            t = paddle.to_tensor(x * sign, stop_gradient=False)
            with self.assertRaisesRegex(NotImplementedError, "fire only when"):
                fn(t).sum().backward()


if __name__ == '__main__':
    unittest.main()
