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


def branch_hook(g):
    if float(g.abs().max()) > 1.0:
        return g * 0.5
    return None


def fn(x0, x1):
    v1 = x1 * x1
    v3 = x0 / (paddle.square(x0) + 1.0)
    v4 = v1 + v1
    v5 = paddle.concat([paddle.cos(v1), x1], axis=1)
    if x0.mean() > 0:
        r6 = paddle.tanh(paddle.square(v3)) * -1.5
    else:
        b10 = v3 + x0
        b10.register_hook(branch_hook)
        r6 = b10 * v3
    v1.register_hook(lambda g: g * v4)
    v15, v16 = paddle.split(r6, 2, axis=0)
    v15.register_hook(lambda g: g.detach().scale_(0.5))
    return v16 + v5.mean(), v4 * 1.0


class TestCseCombineInNestedBlock(Dy2StTestBase):
    """Run-time hook ops in and out of an `if` branch's backward read the
    same vector of reach signals: CSE must not leave the branch reading a
    `builtin.combine` of the outer block."""

    def run_fn(self, f, x0, x1):
        xs = [paddle.to_tensor(a, stop_gradient=False) for a in (x0, x1)]
        out, _ = f(*xs)
        out.sum().backward()
        return [out.numpy()] + [x.grad.numpy() for x in xs]

    @test_ast_only
    @test_pir_only
    def test_else_branch(self):
        rng = np.random.default_rng(1848)
        x0 = -np.abs(rng.standard_normal([4]))
        x1 = rng.standard_normal([4, 3])
        want = self.run_fn(fn, x0, x1)
        got = self.run_fn(paddle.jit.to_static(fn), x0, x1)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
