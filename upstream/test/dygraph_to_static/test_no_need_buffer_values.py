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
)

import paddle


def returned_and_added(x, c):
    # `add_grad` reads only the shape of `y`, so `y` was a "no need buffer"
    # value of the backward, and the inplace pass let `add` write into it.
    y = paddle.matmul(x, x, transpose_y=True)
    z = y + y
    return z, y


def returned_across_graph_break(x, c):
    y = paddle.cos(x)
    z = y + x
    if c.mean() > 0:  # a graph break under SOT
        r = paddle.cos(z)
    else:
        r = z + c
    return r, y * 1.0


def read_by_branch_backward(x, c):
    # `sum_grad` reads only the shape of `v`; `clip_grad`, in the backward
    # of the `if`, reads its values.
    v = x * 1.0
    s = v.sum()
    if c.mean() > 0:
        r = paddle.clip(v, -0.5, 0.5)
    else:
        r = v
    return r + s, s * 1.0


class TestNoNeedBufferValues(Dy2StTestBase):
    """A value the program returns keeps its values when a later op of the
    program reads it and could reuse its buffer; a value the backward of an
    `if` reads keeps its buffer."""

    def setUp(self):
        rng = np.random.default_rng(73)
        self.x = rng.standard_normal([2, 3])
        self.c = np.abs(rng.standard_normal([2, 3]))

    def run_fn(self, f):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        c = paddle.to_tensor(self.c)
        outs = f(x, c)
        sum(o.sum() for o in outs).backward()
        return [o.numpy() for o in outs] + [x.grad.numpy()]

    def check(self, fn):
        want = self.run_fn(fn)
        static_fn = paddle.jit.to_static(fn)
        for _ in range(2):
            for got, expected in zip(self.run_fn(static_fn), want):
                np.testing.assert_allclose(got, expected, rtol=1e-12)

    @test_pir_only
    def test_returned_and_added(self):
        self.check(returned_and_added)

    @test_pir_only
    def test_returned_across_graph_break(self):
        self.check(returned_across_graph_break)

    @test_pir_only
    def test_read_by_branch_backward(self):
        self.check(read_by_branch_backward)


if __name__ == '__main__':
    unittest.main()
