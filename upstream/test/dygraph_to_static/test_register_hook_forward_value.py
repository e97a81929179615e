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

import gc
import unittest
import weakref

import numpy as np
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle


def run(fn, x_np):
    x = paddle.to_tensor(x_np, stop_gradient=False)
    out = fn(x)
    (out * out).sum().backward()
    return out.numpy(), x.grad.numpy()


class TestRegisterHookForwardValue(Dy2StTestBase):
    def setUp(self):
        self.x = np.random.default_rng(8).standard_normal([3, 4])

    @test_ast_only
    @test_pir_only
    def test_hook_reading_forward_tensors(self):
        """A gradient mask computed in the forward, as in eager."""

        def fn(x):
            mask = (x > 0).astype(x.dtype)
            scale = paddle.exp(x)
            t = x * 3
            t.register_hook(lambda g: g * mask + scale)
            return t * t

        want = run(fn, self.x)
        got = run(paddle.jit.to_static(fn), self.x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)

    @test_ast_only
    @test_pir_only
    def test_hooks_are_freed_with_their_program(self):
        class Payload:
            pass

        def trace_and_drop(n):
            payload = Payload()

            def fn(x):
                t = x * 3
                t.register_hook(lambda g, payload=payload: g * 2)
                return t

            x = paddle.ones([n])
            x.stop_gradient = False
            paddle.jit.to_static(fn)(x).sum().backward()
            return weakref.ref(payload)

        refs = [trace_and_drop(n) for n in range(1, 6)]
        gc.collect()
        self.assertEqual([r() for r in refs], [None] * len(refs))


if __name__ == '__main__':
    unittest.main()
