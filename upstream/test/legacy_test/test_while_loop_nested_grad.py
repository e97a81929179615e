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

import paddle


def build(inner_reads_outer_body):
    """Two nested while_loops and the gradient of the result wrt x."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [3], "float64")
        x.stop_gradient = False
        zero = paddle.zeros([1], "int64")

        def outer_body(i, j, y):
            start = paddle.zeros([1], "int64") if inner_reads_outer_body else j
            _, y = paddle.static.nn.while_loop(
                lambda k, t: k < 3,
                lambda k, t: (k + 1, paddle.sin(t) * 1.5),
                [start, y],
            )
            return i + 1, j, y + x

        _, _, y = paddle.static.nn.while_loop(
            lambda i, j, y: i < 2, outer_body, [zero, zero, x]
        )
        paddle.static.gradients([y.sum()], [x])
    return main


class TestWhileLoopNestedGrad(unittest.TestCase):
    """The gradient of a while_loop nested in another one is a clear error:
    Paddle's while backward gives wrong gradients for it, or frees a value
    of the outer body before the outer loop saves it."""

    def setUp(self):
        paddle.enable_static()

    def tearDown(self):
        paddle.disable_static()

    def test_inner_loop_over_outer_loop_variables(self):
        with self.assertRaisesRegex(NotImplementedError, "nested in another"):
            build(inner_reads_outer_body=False)

    def test_inner_loop_reading_the_outer_body(self):
        with self.assertRaisesRegex(NotImplementedError, "nested in another"):
            build(inner_reads_outer_body=True)


if __name__ == "__main__":
    unittest.main()
