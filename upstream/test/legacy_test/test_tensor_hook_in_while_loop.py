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


def body(y):
    m = paddle.cos(y)
    t = paddle.sin(y)
    t.register_hook(lambda g: g * m + 1.0)
    t.register_hook(lambda g: None)
    t.register_hook(lambda g: g + 100.0).remove()
    return t * 1.5


class TestTensorHookInWhileLoop(unittest.TestCase):
    """A hook registered in the body of a static while_loop runs at each
    iteration, as in eager's Python loop."""

    def test_hook_in_to_static_while(self):
        def fn(x):
            i = paddle.zeros([1], "int64")
            while i < 3:
                x = body(x)
                i = i + 1
            return x

        x_np = np.random.default_rng(54).standard_normal([4])
        results = []
        for f in (fn, paddle.jit.to_static(fn, full_graph=True)):
            x = paddle.to_tensor(x_np, stop_gradient=False)
            y = f(x)
            y.sum().backward()
            results.append((y.numpy(), x.grad.numpy()))
        (want_y, want_grad), (got_y, got_grad) = results
        np.testing.assert_allclose(got_y, want_y, rtol=1e-12)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
