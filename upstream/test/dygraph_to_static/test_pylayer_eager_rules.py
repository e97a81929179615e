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


class NonDiff(PyLayer):
    @staticmethod
    def forward(ctx, x):
        a, b = x * 2, x * 3
        ctx.mark_non_differentiable(b)
        return a, b

    @staticmethod
    def backward(ctx, da, db):
        return da * 2


class NoMaterialize(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, da, db):
        g = da * 2
        if db is not None:
            g = g + db * 3
        return g


class KwArgs(PyLayer):
    @staticmethod
    def forward(ctx, x, **kwargs):
        w = kwargs['w']
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, dz):
        x, w = ctx.saved_tensor()
        return dz * w, dz * x


class TooManyGrads(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, dz):
        return dz, dz


class LeavesOutConstantGrad(PyLayer):
    @staticmethod
    def forward(ctx, x, c):
        return x * c

    @staticmethod
    def backward(ctx, dz):
        # no gradient for `c`, the last input, which needs none
        return dz * 3


class ConstantInCtxTuple(PyLayer):
    """PaddleSlim's LSQ+ keeps a constant Tensor in a tuple on ``ctx``."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.other = (c, 2.0)
        return x * c

    @staticmethod
    def backward(ctx, dz):
        c, k = ctx.other
        return dz * c * k, None


class Tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dz):
        (x,) = ctx.saved_tensor()
        return dz * (1 - paddle.tanh(x) ** 2)


class TanhTimesThree(Tanh):
    @staticmethod
    def backward(ctx, dz):
        return Tanh.backward(ctx, dz) * 3.0


CONSTANT = paddle.to_tensor(np.array([1.5, 2.0, 0.5]))


class ScaleShift(PyLayer):
    @staticmethod
    def forward(ctx, x, *params):
        ctx.save_for_backward(x, *params)
        return x * params[0] + params[1]

    @staticmethod
    def backward(ctx, d):
        x, scale, _ = ctx.saved_tensor()
        return d * scale, (d * x).sum(0), d.sum(0)


# parameters of a module-level list, passed with `*PARAMS`
PARAMS = [
    paddle.create_parameter([3], 'float64'),
    paddle.create_parameter([3], 'float64'),
]


def run(fn, *arrays):
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*xs)
    (out * out).sum().backward()
    return [out.numpy()] + [x.grad.numpy() for x in xs]


class TestPyLayerEagerRules(Dy2StTestBase):
    def setUp(self):
        rng = np.random.default_rng(4)
        self.x, self.w = rng.standard_normal([2, 2, 3])

    def check(self, fn, *arrays):
        want = run(fn, *arrays)
        got = run(paddle.jit.to_static(fn), *arrays)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)

    @test_ast_only
    @test_pir_only
    def test_mark_non_differentiable(self):
        def fn(x):
            a, b = NonDiff.apply(x)
            return a + b

        self.check(fn, self.x)

    @test_ast_only
    @test_pir_only
    def test_set_materialize_grads_false(self):
        def fn(x):
            a, _ = NoMaterialize.apply(x)
            return a

        self.check(fn, self.x)

    @test_ast_only
    @test_pir_only
    def test_var_keyword_tensor_argument(self):
        def fn(x, w):
            return KwArgs.apply(x, w=w)

        self.check(fn, self.x, self.w)

    @test_ast_only
    @test_pir_only
    def test_wrong_number_of_grads_names_the_layer(self):
        def fn(x):
            return TooManyGrads.apply(x)

        with self.assertRaisesRegex(ValueError, 'TooManyGrads'):
            run(paddle.jit.to_static(fn), self.x)

    @test_ast_only
    @test_pir_only
    def test_backward_leaves_out_gradient_of_trailing_constant(self):
        def fn(x):
            return LeavesOutConstantGrad.apply(x, CONSTANT)

        self.check(fn, self.x)

    @test_ast_only
    @test_pir_only
    def test_backward_leaving_out_a_needed_gradient_names_it(self):
        def fn(x, w):
            return LeavesOutConstantGrad.apply(x, w)

        with self.assertRaisesRegex(
            (ValueError, OSError), 'LeavesOutConstantGrad.*position 1'
        ):
            run(paddle.jit.to_static(fn), self.x, self.w)

    @test_ast_only
    @test_pir_only
    def test_backward_reads_input_kept_in_ctx_tuple(self):
        def fn(x):
            return ConstantInCtxTuple.apply(x, CONSTANT)

        self.check(fn, self.x)

    @test_ast_only
    @test_pir_only
    def test_parameters_of_a_global_list_passed_starred(self):
        def fn(x):
            return ScaleShift.apply(x, *PARAMS)

        self.check(fn, self.x)

    @test_ast_only
    @test_pir_only
    def test_backward_calls_the_backward_of_its_base_class(self):
        def fn(x):
            return TanhTimesThree.apply(x)

        self.check(fn, self.x)


if __name__ == '__main__':
    unittest.main()
