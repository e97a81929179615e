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
import sys
import tempfile
import unittest

import numpy as np

import paddle


def static_cond_reaching_branch_through_other_ops(x, y):
    t = paddle.sin(x)
    t.register_hook(lambda g: g + 1.0)
    b = t * t
    out = paddle.static.nn.cond(y.sum() > 0, lambda: y * 3.0, lambda: b + y)
    return out + paddle.cos(x)


def grads(fn, x, y):
    x = paddle.to_tensor(x, stop_gradient=False)
    y = paddle.to_tensor(y, stop_gradient=False)
    fn(x, y).sum().backward()
    return x.grad.numpy(), y.grad.numpy()


def printed(run):
    """What ``run()`` writes to the process's stdout and stderr (C++ too)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)
        try:
            run()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        f.seek(0)
        return f.read().decode(errors='replace')


def fn_print(x):
    t = x * 3
    t.register_hook(lambda g: print('hook sees', g))
    return t * t


def used_in_branch(x):
    t = x * 2.0
    t.register_hook(lambda g: g + 1.0)
    if x.mean() > 0:
        y = paddle.tanh(t)
    else:
        y = x * 3.0
    return y


def grad(fn, x):
    x = paddle.to_tensor(x, stop_gradient=False)
    fn(x).sum().backward()
    return x.grad.numpy()


def body(y):
    m = paddle.cos(y)
    t = paddle.sin(y)
    t.register_hook(lambda g: g * m + 1.0)
    t.register_hook(lambda g: None)
    t.register_hook(lambda g: g + 100.0).remove()
    return t * 1.5


SCALE = {'value': 2.0}


def inspect(log):
    def hook(g):
        log.append(g.abs().max().item())
        if g.abs().max() > 0.5:
            return g * SCALE['value']
        return None

    return hook


def fn_run_time(x, hook):
    t = x * 1.5
    t.register_hook(hook)
    return (paddle.tanh(t) * t).sum()


class TestStaticCondGradientReach(unittest.TestCase):
    """A hook whose tensor reaches a static cond branch through other ops
    gives the gradients eager gives, whichever branch runs."""

    def test_static_cond_reaching_branch_through_other_ops(self):
        rng = np.random.default_rng(49)
        x, y = rng.standard_normal([3]), np.abs(rng.standard_normal([3]))
        for sign in (1.0, -1.0):
            want = grads(
                static_cond_reaching_branch_through_other_ops, x, y * sign
            )
            paddle.enable_static()
            try:
                main = paddle.static.Program()
                with paddle.static.program_guard(main):
                    xv = paddle.static.data("x", [3], "float64")
                    yv = paddle.static.data("y", [3], "float64")
                    xv.stop_gradient = yv.stop_gradient = False
                    out = static_cond_reaching_branch_through_other_ops(xv, yv)
                    grad_vars = paddle.static.gradients([out.sum()], [xv, yv])
                got = paddle.static.Executor().run(
                    main, feed={"x": x, "y": y * sign}, fetch_list=grad_vars
                )
            finally:
                paddle.disable_static()
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12)


class TestHookPrintsAtEveryRun(unittest.TestCase):
    """A printing hook in a static program prints at every run of it."""

    def test_static_program_prints_at_every_run(self):
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data('x', [2], 'float32')
                x.stop_gradient = False
                (gx,) = paddle.static.gradients([fn_print(x).sum()], [x])
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            feed = {'x': np.array([1.0, 2.0], 'float32')}

            def run():
                for _ in range(2):
                    exe.run(main, feed=feed, fetch_list=[gx])

            out = printed(run)
        finally:
            paddle.disable_static()
        self.assertEqual(out.count('hook sees'), 2, out)


class TestHookUsedInUntakenStaticCondBranch(unittest.TestCase):
    """A hook on a value used only in one branch of a static cond gives
    the gradient eager gives, whichever branch runs."""

    def static_cond_grad(self, x):
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                xv = paddle.static.data('x', [4], 'float64')
                xv.stop_gradient = False
                t = xv * 2.0
                t.register_hook(lambda g: g + 1.0)
                y = paddle.static.nn.cond(
                    xv.mean() > 0,
                    lambda: paddle.tanh(t),
                    lambda: xv * 3.0,
                )
                (gx,) = paddle.static.gradients([y.sum()], [xv])
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={'x': x}, fetch_list=[gx])
            return got
        finally:
            paddle.disable_static()

    def test_static_cond(self):
        x = np.abs(np.random.default_rng(41).standard_normal([4]))
        for sign in (1.0, -1.0):
            np.testing.assert_allclose(
                self.static_cond_grad(x * sign),
                grad(used_in_branch, x * sign),
                rtol=1e-12,
            )


class TestHookInWhileBody(unittest.TestCase):
    """A hook registered in the body of a static while_loop runs at each
    iteration, as in eager's Python loop."""

    def test_hook_in_while_body(self):
        x_np = np.random.default_rng(53).standard_normal([4])
        x = paddle.to_tensor(x_np, stop_gradient=False)
        y = x
        for _ in range(3):
            y = body(y)
        y.sum().backward()
        want_y, want_grad = y.numpy(), x.grad.numpy()

        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                xs = paddle.static.data("x", [4], "float64")
                xs.stop_gradient = False
                i = paddle.zeros([1], "int64")
                _, ys = paddle.static.nn.while_loop(
                    lambda i, y: i < 3, lambda i, y: (i + 1, body(y)), [i, xs]
                )
                (gx,) = paddle.static.gradients([ys.sum()], [xs])
            exe = paddle.static.Executor(paddle.CPUPlace())
            got_y, got_grad = exe.run(
                main, feed={"x": x_np}, fetch_list=[ys, gx]
            )
        finally:
            paddle.disable_static()
        np.testing.assert_allclose(got_y, want_y, rtol=1e-12)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12)


class TestRunTimeHookInStaticProgram(unittest.TestCase):
    """A hook that reads values at run time runs at every run of a static
    program; a pure hook is compiled into the program instead."""

    def test_static_program(self):
        log = []
        paddle.enable_static()
        try:
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data('x', [2, 2], 'float64')
                x.stop_gradient = False
                (gx,) = paddle.static.gradients(
                    [fn_run_time(x, inspect(log))], [x]
                )
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(startup)
            feed = {'x': np.array([[0.1, -0.9], [0.4, 0.7]])}
            for _ in range(2):
                exe.run(main, feed=feed, fetch_list=[gx])
        finally:
            paddle.disable_static()
        self.assertEqual(len(log), 2)
        self.assertTrue(all(isinstance(v, float) for v in log))


if __name__ == '__main__':
    unittest.main()
