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

import traceback
import unittest

import numpy as np

import paddle
from paddle.autograd import run_time_hooks

LOG = []


class Hooks:
    """The hooks of one value, as a backward pass keeps them: ``emit``
    calls them, names them in errors and leaves its ops with them."""

    def __init__(self, *hooks):
        self.hooks = dict(enumerate(hooks))
        self.branch_end_cells = {}
        self.run_time_ops = []

    def where(self, hook):
        return f"gradient hook {hook.__name__} registered on t"

    def describe(self):
        return "The gradient hooks on t"


def run(make_hooks, feeds, with_reached=False):
    """Build ``t = x * 2`` and the run-time hook op of ``make_hooks(mask)``
    on it (``mask``: a value of the program), run it once per feed, and
    give the op's result of each run."""
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data('x', [3], 'float64')
            reached = paddle.static.data('reached', [1], 'bool')
            t = x * 2.0
            mask = paddle.cast(x > 0, 'float64')
            hooks = make_hooks(mask)
            out = run_time_hooks.emit(
                hooks, t, reached if with_reached else None
            )
        exe = paddle.static.Executor(paddle.CPUPlace())
        return [
            exe.run(
                main,
                feed={'x': x_np, 'reached': np.array([flag])},
                fetch_list=[out],
            )[0]
            for x_np, flag in feeds
        ]
    finally:
        paddle.disable_static()


def feeds(n):
    rng = np.random.default_rng(n)
    return [(rng.standard_normal([3]), True) for _ in range(n)]


class TestWhichHooksRunAtRunTime(unittest.TestCase):
    def test_pure_tensor_math_is_compiled(self):
        for hook in (
            lambda g: g * 2.0 + paddle.tanh(g),
            lambda g: paddle.nn.functional.relu(g) - g.mean(),
        ):
            self.assertIsNone(run_time_hooks.why_run_time(hook))

    def test_other_hooks_run_at_run_time_and_say_why(self):
        def branches(g):
            if g.sum() > 0:
                return g
            return -g

        for hook, why in (
            (lambda g: LOG.append(g), "reads the global `LOG`"),
            (lambda g: g * g.shape[0], "uses `.shape`"),
            (lambda g: g * float(g.sum()), "reads the global `float`"),
            (branches, "its bytecode has"),
            (print, "not a Python function"),
        ):
            self.assertIn(why, run_time_hooks.why_run_time(hook))


class TestRunTimeHookOp(unittest.TestCase):
    def setUp(self):
        LOG.clear()

    def test_hooks_run_at_every_run_in_order(self):
        def log(g):
            LOG.append(g.numpy())

        def scale(g):
            return g * 3.0

        data = feeds(3)
        outs = run(lambda mask: Hooks(log, scale, log), data)
        self.assertEqual(len(LOG), 6)
        for k, ((x_np, _), out) in enumerate(zip(data, outs)):
            np.testing.assert_allclose(LOG[2 * k], 2.0 * x_np, rtol=1e-12)
            np.testing.assert_allclose(LOG[2 * k + 1], 6.0 * x_np, rtol=1e-12)
            np.testing.assert_allclose(out, 6.0 * x_np, rtol=1e-12)

    def test_hook_reads_this_runs_values_of_the_program(self):
        held = []

        def make_hooks(mask):
            def masked(g):
                return g * mask

            held.append(masked)
            return Hooks(masked)

        data = feeds(2)
        outs = run(make_hooks, data)
        for (x_np, _), out in zip(data, outs):
            np.testing.assert_allclose(out, 2.0 * x_np * (x_np > 0))
        # the closure holds the program's value again after each run
        (cell,) = held[0].__closure__
        self.assertIsInstance(cell.cell_contents, paddle.pir.Value)

    def test_hooks_do_not_run_where_no_gradient_reached(self):
        data = [(np.ones(3), False), (np.ones(3), True)]
        outs = run(
            lambda mask: Hooks(lambda g: LOG.append(1) or g * 3.0),
            data,
            with_reached=True,
        )
        self.assertEqual(LOG, [1])
        np.testing.assert_allclose(outs[0], 2.0 * np.ones(3))
        np.testing.assert_allclose(outs[1], 6.0 * np.ones(3))

    def test_a_hooks_exception_reaches_the_caller_as_itself(self):
        def failing(g):
            raise KeyError('no entry for this gradient')

        try:
            run(lambda mask: Hooks(failing), feeds(1))
        except KeyError as e:  # (assertRaises drops the traceback)
            error = e
        else:
            self.fail('the hook raised no KeyError')
        self.assertEqual(
            error.args[0].split('\n')[0], 'no entry for this gradient'
        )
        notes = '\n'.join([*getattr(error, '__notes__', ()), str(error)])
        self.assertIn('raised by gradient hook failing registered on t', notes)
        frames = traceback.extract_tb(error.__traceback__)
        self.assertIn('failing', [frame.name for frame in frames])

    def test_a_result_of_another_shape_is_a_clear_error(self):
        with self.assertRaisesRegex(ValueError, 'must not change the shape'):
            run(lambda mask: Hooks(lambda g: g.sum()), feeds(1))


if __name__ == '__main__':
    unittest.main()
