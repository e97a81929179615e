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
from paddle.autograd import PyLayer


class ScaleByConfig(PyLayer):
    # a Tensor inside a dict argument is no input of the PyLayer in eager
    @staticmethod
    def forward(ctx, x, cfg):
        ctx.factor = cfg["factor"]
        return x * cfg["w"] * cfg["factor"]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor


class ScaleInPlace(PyLayer):
    # `forward` changes its input in place and returns it
    @staticmethod
    def forward(ctx, a):
        a.scale_(2.0)
        return a

    @staticmethod
    def backward(ctx, g):
        return g * 2.0


class AddAuxiliaryLoss(PyLayer):
    # PaddleNLP's MoE auxiliary loss: `paddle.ones([1])` for a 0-D loss
    @staticmethod
    def forward(ctx, x, loss):
        ctx.dtype = loss.dtype
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, paddle.ones([1], dtype=ctx.dtype)


def dict_argument(x, w):
    return ScaleByConfig.apply(x, {"w": w, "factor": 2.0})


def forward_in_place(x, w):
    return ScaleInPlace.apply(x * w) * x


def auxiliary_loss(x, w):
    return AddAuxiliaryLoss.apply(x * w, (w * w).sum())


class TestPyLayerEagerPatterns(Dy2StTestBase):
    def grads(self, fn):
        rng = np.random.default_rng(3)
        x = paddle.to_tensor(rng.standard_normal([4]), stop_gradient=False)
        w = paddle.to_tensor(rng.standard_normal([4]), stop_gradient=False)
        out = fn(x, w)
        out.sum().backward()
        return [
            out.numpy(),
            x.grad.numpy(),
            None if w.grad is None else w.grad.numpy(),
        ]

    def check(self, fn):
        got = self.grads(paddle.jit.to_static(fn))
        want = self.grads(fn)
        for g, e in zip(got, want):
            self.assertEqual(g is None, e is None)
            if e is not None:
                np.testing.assert_allclose(g, e, rtol=1e-12)

    @test_pir_only
    def test_tensor_in_a_dict_argument(self):
        self.check(dict_argument)

    @test_ast_only
    @test_pir_only
    def test_forward_changes_its_input_in_place(self):
        # in a static program (AST carries `a.scale_(2.0)` as an assignment
        # of `a` already): `forward`'s input is its own object, rebound
        want = self.grads(forward_in_place)
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [4], 'float64')
                w = paddle.static.data('w', [4], 'float64')
                x.stop_gradient = False
                w.stop_gradient = False
                out = forward_in_place(x, w)
                gx, gw = paddle.static.gradients([out.sum()], [x, w])
            rng = np.random.default_rng(3)
            feed = {
                'x': rng.standard_normal([4]),
                'w': rng.standard_normal([4]),
            }
            exe = paddle.static.Executor(paddle.CPUPlace())
            got = exe.run(main, feed=feed, fetch_list=[out, gx, gw])
        finally:
            paddle.disable_static()
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-12)

    @test_pir_only
    def test_one_element_gradient_of_a_0d_input(self):
        self.check(auxiliary_loss)


if __name__ == '__main__':
    unittest.main()
