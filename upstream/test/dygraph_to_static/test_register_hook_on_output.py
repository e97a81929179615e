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

import paddle


def hooked_output(x):
    y = x * 2.0
    y.register_hook(lambda g: g * 0.25)
    return y


def output_used_inside(x):
    y = paddle.tanh(x)
    return y, y * x


def hooked_before_and_after_break(x):
    t = x * 2.0
    t.register_hook(lambda g: g * 0.25)
    print(t.numpy())  # a graph break in SOT
    t.register_hook(lambda g: paddle.sin(g))
    return t.mean() + x.sum()


class TestRegisterHookOnOutput(unittest.TestCase):
    """Hooks on a tensor a to_static function returns run as in eager: the
    function's hooks first, then the caller's, on the total gradient."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        # SOT runs subgraphs under 10 ops eagerly by default
        os.environ['MIN_GRAPH_SIZE'] = '0'
        self.x = np.random.default_rng(38).standard_normal([2, 3])

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def caller_hook_grad(self, fn):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        y = fn(x)
        y.register_hook(lambda g: paddle.sin(g))
        (y * y).sum().backward()
        return x.grad.numpy()

    def check_caller_hook(self, full_graph):
        static_fn = paddle.jit.to_static(hooked_output, full_graph=full_graph)
        np.testing.assert_allclose(
            self.caller_hook_grad(static_fn),
            self.caller_hook_grad(hooked_output),
            rtol=1e-12,
        )

    def test_caller_hook_after_function_hook_ast(self):
        self.check_caller_hook(full_graph=True)

    def test_caller_hook_after_function_hook_sot(self):
        self.check_caller_hook(full_graph=False)

    def test_hook_on_output_used_inside_raises(self):
        for full_graph in (True, False):
            static_fn = paddle.jit.to_static(
                output_used_inside, full_graph=full_graph
            )
            x = paddle.to_tensor(self.x, stop_gradient=False)
            y, _ = static_fn(x)
            with self.assertRaisesRegex(
                RuntimeError, "returned by a function converted by"
            ):
                y.register_hook(lambda g: g * 2.0)

    def test_hooks_before_and_after_graph_break_sot(self):
        def grad(fn):
            x = paddle.to_tensor(self.x, stop_gradient=False)
            fn(x).backward()
            return x.grad.numpy()

        static_fn = paddle.jit.to_static(
            hooked_before_and_after_break, full_graph=False
        )
        np.testing.assert_allclose(
            grad(static_fn), grad(hooked_before_and_after_break), rtol=1e-12
        )


if __name__ == '__main__':
    unittest.main()
