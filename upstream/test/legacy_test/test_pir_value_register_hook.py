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


def eager_grad(fn, x_np):
    x = paddle.to_tensor(x_np, stop_gradient=False)
    fn(x).sum().backward()
    return x.grad.numpy()


def static_grad(fn, x_np, use_append_backward=False):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data('x', list(x_np.shape), str(x_np.dtype))
            x.stop_gradient = False
            loss = fn(x).sum()
            if use_append_backward:
                ((_, gx),) = paddle.static.append_backward(
                    loss, parameter_list=[x]
                )
            else:
                (gx,) = paddle.static.gradients([loss], [x])
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        (res,) = exe.run(main, feed={'x': x_np}, fetch_list=[gx])
        return res
    finally:
        paddle.disable_static()


class TestPirValueRegisterHook(unittest.TestCase):
    def setUp(self):
        self.x = np.random.default_rng(0).standard_normal([3, 4])

    def check(self, fn):
        want = eager_grad(fn, self.x)
        for use_append_backward in (False, True):
            got = static_grad(fn, self.x, use_append_backward)
            np.testing.assert_allclose(got, want, rtol=1e-12)

    def test_hook_registered_after_use_sees_total_grad(self):
        def fn(x):
            t = x * 3
            u = t * t
            t.register_hook(lambda g: g * 2)
            return u + t

        self.check(fn)

    def test_hooks_run_in_registration_order(self):
        def fn(x):
            t = paddle.tanh(x)
            t.register_hook(lambda g: g * 3)
            t.register_hook(lambda g: None)
            t.register_hook(lambda g: g + 1)
            return t * x

        self.check(fn)

    def test_removed_hook_is_not_applied(self):
        def fn(x):
            t = x * x
            handle = t.register_hook(lambda g: g * 10)
            t.register_hook(lambda g: g * 2)
            handle.remove()
            return t * 3

        self.check(fn)

    def test_hook_result_with_an_unknown_dimension(self):
        # `g * v`, where `v` slices an input whose first dimension is
        # unknown, has the static shape [-1, 4] for a gradient of [1, 4]:
        # both are [1, 4] at run time, as in eager.
        a = np.random.default_rng(1).standard_normal([3, 4])
        b = np.random.default_rng(2).standard_normal([1, 4])

        def register(t, v):
            t.register_hook(lambda g: g * v)

        x = paddle.to_tensor(a)
        y = paddle.to_tensor(b, stop_gradient=False)
        t = paddle.tanh(y)
        register(t, x[1:2])
        (t * 2.0).sum().backward()
        want = y.grad.numpy()
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data('x', [-1, 4], 'float64')
                y = paddle.static.data('y', [1, 4], 'float64')
                y.stop_gradient = False
                t = paddle.tanh(y)
                v = x[1:2]
                self.assertEqual(list(v.shape), [-1, 4])
                register(t, v)
                (gy,) = paddle.static.gradients([(t * 2.0).sum()], [y])
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={'x': a, 'y': b}, fetch_list=[gy])
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got, want, rtol=1e-12)


if __name__ == '__main__':
    unittest.main()
