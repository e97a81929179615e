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
from paddle.base import run_time_ops


class Recorder:
    """A function the code building the program keeps: logs and scales."""

    def __init__(self, factor):
        self.factor = factor
        self.seen = []

    def __call__(self, x, y):
        self.seen.append(float(x.sum()))
        return (x * self.factor, y + 1.0)


class FailingFunction:
    def __call__(self, x):
        raise LookupError("no table for this input")


class TestRunTimeOps(unittest.TestCase):
    def setUp(self):
        paddle.enable_static()

    def tearDown(self):
        paddle.disable_static()

    def build(self, function):
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [-1, 3], "float32")
            y = paddle.static.data("y", [2], "float64")
            outs = run_time_ops.emit(function, [x, y], [x, y], "recorder")
        return main, outs

    def test_runs_at_every_run_with_the_runs_tensors(self):
        first, second = Recorder(2.0), Recorder(3.0)
        exe = paddle.static.Executor(paddle.CPUPlace())
        for function in (first, second):
            main, (a, b) = self.build(function)
            self.assertEqual(a.dtype, paddle.float32)
            self.assertEqual(list(b.shape), [2])
            for batch in (1, 2):
                got_a, got_b = exe.run(
                    main,
                    feed={
                        "x": np.ones([batch, 3], "float32"),
                        "y": np.zeros(2),
                    },
                    fetch_list=[a, b],
                )
                np.testing.assert_array_equal(
                    got_a, np.full([batch, 3], function.factor)
                )
                np.testing.assert_array_equal(got_b, [1.0, 1.0])
        # each op ran its own function (one registered op name for both)
        self.assertEqual(first.seen, [3.0, 6.0])
        self.assertEqual(second.seen, [3.0, 6.0])

    def test_no_entry_outlives_the_function(self):
        keys = set(run_time_ops._live)
        function = Recorder(2.0)
        main, _ = self.build(function)
        self.assertEqual(len(set(run_time_ops._live) - keys), 1)
        del function
        self.assertEqual(set(run_time_ops._live) - keys, set())

    def test_differentiating_its_results_is_a_clear_error(self):
        class Described(Recorder):
            def describe(self):
                return "The recorder of the test"

        function = Described(2.0)
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [3], "float32")
            x.stop_gradient = False
            y = paddle.static.data("y", [2], "float64")
            a, _ = run_time_ops.emit(function, [x * 1.0, y], [x, y], "rec")
            with self.assertRaisesRegex(
                NotImplementedError,
                "Cannot differentiate the result of the recorder of the test",
            ):
                paddle.static.gradients([a.sum()], [x])

    def test_the_functions_exception_reaches_the_caller(self):
        function = FailingFunction()
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [3], "float32")
            (out,) = run_time_ops.emit(function, [x], [x], "failing")
        exe = paddle.static.Executor(paddle.CPUPlace())
        with self.assertRaisesRegex(LookupError, "no table"):
            exe.run(main, feed={"x": np.ones(3, "float32")}, fetch_list=[out])


if __name__ == "__main__":
    unittest.main()
