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


def grads_with_hooks(x, w):
    x.register_hook(lambda g: g + 1.0)
    d = (x * 1.0).detach()
    d.stop_gradient = False
    d.register_hook(lambda g: g * 10.0)
    z = x * w
    z.register_hook(lambda g: g + 100.0)
    y = paddle.tanh(z) * d
    return paddle.grad([y.sum()], [x, d, z, w])


class TestPaddleGradLeafHooksStatic(unittest.TestCase):
    """``paddle.grad`` in a static program runs the hooks of a non-leaf it
    passes through, not those of a leaf (an input, a tensor made a leaf by
    ``detach``), as in eager, which runs a leaf's hooks only when it
    accumulates the leaf's ``grad``."""

    def test_leaf_hooks_do_not_run(self):
        rng = np.random.default_rng(3)
        xa, wa = rng.standard_normal((2, 3)), rng.standard_normal((3,))
        x = paddle.to_tensor(xa, stop_gradient=False)
        w = paddle.to_tensor(wa, stop_gradient=False)
        want = [g.numpy() for g in grads_with_hooks(x, w)]
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                xs = paddle.static.data('x', [2, 3], 'float64')
                ws = paddle.static.data('w', [3], 'float64')
                xs.stop_gradient = ws.stop_gradient = False
                grads = grads_with_hooks(xs, ws)
            got = paddle.static.Executor().run(
                main, feed={'x': xa, 'w': wa}, fetch_list=grads
            )
        finally:
            paddle.disable_static()
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
