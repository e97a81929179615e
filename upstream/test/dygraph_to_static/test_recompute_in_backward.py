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
from dygraph_to_static_utils import Dy2StTestBase, test_pir_only

import paddle
from paddle.base import core
from paddle.distributed.fleet.utils import recompute

WIDTH = 256


class Block(paddle.nn.Layer):
    def __init__(self, dropout=0.0):
        super().__init__()
        self.fcs = paddle.nn.LayerList(
            [paddle.nn.Linear(WIDTH, WIDTH) for _ in range(4)]
        )
        self.dropout = paddle.nn.Dropout(dropout) if dropout else None

    def forward(self, x):
        for fc in self.fcs:
            x = paddle.tanh(fc(x))
        if self.dropout is not None:
            x = self.dropout(x)
        return x


class Net(paddle.nn.Layer):
    def __init__(self, blocks, use_reentrant, dropout=0.0):
        super().__init__()
        self.blocks = paddle.nn.LayerList(
            [Block(dropout) for _ in range(blocks)]
        )
        self.use_reentrant = use_reentrant

    def forward(self, x):
        for block in self.blocks:
            if self.use_reentrant is None:
                x = block(x)
            else:
                x = recompute(block, x, use_reentrant=self.use_reentrant)
        return x.mean()


class TestRecomputeInBackward(Dy2StTestBase):
    """``recompute`` under to_static computes a block's activations again
    in the backward, as eager does, instead of the forward keeping them."""

    def setUp(self):
        os.environ["MIN_GRAPH_SIZE"] = "0"

    def held_after_forward(self, use_reentrant, blocks=6):
        """MiB the forward leaves allocated for the backward."""
        paddle.seed(0)
        net = paddle.jit.to_static(Net(blocks, use_reentrant))
        x = paddle.randn([1024, WIDTH])  # one activation: 1 MiB
        x.stop_gradient = False
        for _ in range(2):
            before = core.host_memory_stat_current_value("Allocated", 0)
            loss = net(x)
            held = core.host_memory_stat_current_value("Allocated", 0)
            loss.backward()
        return (held - before) / 2**20

    @test_pir_only
    def test_forward_keeps_what_enters_each_block(self):
        plain = self.held_after_forward(None)
        self.assertGreaterEqual(plain, 6 * 4)
        for use_reentrant in (True, False):
            held = self.held_after_forward(use_reentrant)
            # the input of each of the 6 blocks, as eager's recompute
            self.assertLessEqual(held, 6 + 0.5)

    def train(self, to_static, use_reentrant, dropout=0.0):
        paddle.seed(7)
        net = Net(2, use_reentrant, dropout)
        if to_static:
            net = paddle.jit.to_static(net)
        results = []
        for n in (4, 6, 8):
            x = paddle.to_tensor(
                np.random.default_rng(n).standard_normal((n, WIDTH)),
                dtype="float32",
                stop_gradient=False,
            )
            loss = net(x)
            loss.backward()
            results.append(
                [loss.numpy(), x.grad.numpy()]
                + [p.grad.numpy() for p in net.parameters()]
            )
            net.clear_gradients()
        return results

    @test_pir_only
    def test_dropout_in_recomputed_block(self):
        """A dropout run again would draw another mask: the backward
        reads the forward's result instead, and the gradients are
        eager's."""
        self.assertLessEqual(self.held_after_forward(True, blocks=2), 2.5)
        for use_reentrant in (True, False):
            want = self.train(False, use_reentrant, dropout=0.5)
            got = self.train(True, use_reentrant, dropout=0.5)
            for g, w in zip(got, want):
                for a, b in zip(g, w):
                    np.testing.assert_array_equal(a, b)


if __name__ == '__main__':
    unittest.main()
