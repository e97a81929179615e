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

import paddle


def returns_input_unchanged(x):
    if x.mean() > 0:
        r = x
    else:
        r = x * 2.0
    z = paddle.exp(r) + 1.0
    return z * 2.0 + x


class TestCondOutputUnchangedInplace(unittest.TestCase):
    """An op after the `if` that the inplace pass makes write into the `if`
    result must not overwrite the value a branch returned unchanged."""

    def test_to_static_output_and_grad(self):
        a = np.abs(np.random.default_rng(48).standard_normal([3]))
        static_fn = paddle.jit.to_static(
            returns_input_unchanged, full_graph=True
        )
        for sign in (1.0, -1.0):
            results = []
            for fn in (static_fn, returns_input_unchanged):
                x = paddle.to_tensor(a * sign, stop_gradient=False)
                out = fn(x)
                out.sum().backward()
                results.append((out.numpy(), x.grad.numpy()))
            for got, want in zip(*results):
                np.testing.assert_allclose(got, want, rtol=1e-12)

    def test_static_cond_output(self):
        a = np.abs(np.random.default_rng(48).standard_normal([3]))
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [3], 'float64')
                r = paddle.static.nn.cond(
                    x.mean() > 0, lambda: x, lambda: x * 2.0
                )
                out = r * 3.0 + x
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={'x': a}, fetch_list=[out])
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, a * 4.0, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
