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


def grad_of_detached_copy(x):
    # `detach` is a `share_data_`, an op without a vjp: the copy is used
    # twice, its gradient is the sum of both uses
    a = x.detach()
    a.stop_gradient = False
    y = paddle.tanh(a) * a
    (g,) = paddle.grad([y], [a])
    return g


def expected(a):
    t = np.tanh(a)
    return t + a * (1.0 - t * t)


class TestGradOfForwardOnlyOpResult(unittest.TestCase):
    def setUp(self):
        self.a = np.random.default_rng(5).standard_normal([4])

    def test_static_program(self):
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [4], 'float64')
                g = grad_of_detached_copy(x)
            (got,) = paddle.static.Executor().run(
                main, feed={'x': self.a}, fetch_list=[g]
            )
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, expected(self.a), rtol=1e-12)

    def test_to_static(self):
        for full_graph in (True, False):
            fn = paddle.jit.to_static(
                grad_of_detached_copy, full_graph=full_graph
            )
            got = fn(paddle.to_tensor(self.a)).numpy()
            np.testing.assert_allclose(got, expected(self.a), rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
