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


def op_names(fn, shape):
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data('x', shape, 'float64')
            x.stop_gradient = False
            fn(x)
        return [op.name() for op in main.global_block().ops]
    finally:
        paddle.disable_static()


def cut_after_hook(x):
    t = x * 2.0
    t.register_hook(lambda g: g * 3.0)
    a = t * t
    t.stop_gradient = True
    return a + t * 5.0


class TestTensorHookTable(unittest.TestCase):
    def test_forward_program_gains_no_op(self):
        def plain(x):
            t = paddle.tanh(x)
            return t * x

        def hooked(x):
            t = paddle.tanh(x)
            out = t * x
            t.register_hook(lambda g: g * 2.0)
            x.register_hook(lambda g: g + 1.0)
            return out

        self.assertEqual(op_names(hooked, [3]), op_names(plain, [3]))

    def test_stop_gradient_after_use_of_a_hooked_value(self):
        x_np = np.random.default_rng(0).standard_normal([3])
        x = paddle.to_tensor(x_np, stop_gradient=False)
        cut_after_hook(x).sum().backward()
        want = x.grad.numpy()
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [3], 'float64')
                x.stop_gradient = False
                (gx,) = paddle.static.gradients([cut_after_hook(x).sum()], [x])
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={'x': x_np}, fetch_list=[gx])
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, want, rtol=1e-12)

    def test_hooks_of_a_value_a_pass_replaced_are_a_clear_error(self):
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [3], 'float64')
                x.stop_gradient = False
                h = paddle.sin(x)
                h.register_hook(lambda g: g * 3.0)
                (h * h).sum()
            clone = main.clone()
            ops = clone.global_block().ops
            x, loss = ops[0].result(0), ops[-1].result(0)
            sin = next(op for op in ops if op.name() == 'pd_op.sin')
            with paddle.static.program_guard(clone):
                paddle.pir.set_insertion_point(sin)
                sin.result(0).replace_all_uses_with(paddle.sin(x))
                sin.erase()
                with self.assertRaisesRegex(RuntimeError, 'were lost'):
                    paddle.static.gradients([loss], [x])
        finally:
            paddle.disable_static()


if __name__ == '__main__':
    unittest.main()
