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


class StatisticMissing(KeyError):
    pass


def lookup(x):
    if float(x.sum()) > 100:
        raise StatisticMissing("no statistic for this batch")
    return x * 2


class TestPythonOpException(unittest.TestCase):
    def test_the_functions_exception_reaches_the_caller(self):
        op = paddle.static.register_op(
            lookup,
            name="lookup_for_exception_test",
            input_names=["x"],
            output_names=["out"],
            infer_meta=lambda x: x,
        )
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data("x", [3], "float32")
                out = op(x)
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(
                main, feed={"x": np.ones(3, "float32")}, fetch_list=[out]
            )
            np.testing.assert_array_equal(got, [2, 2, 2])
            try:
                exe.run(
                    main,
                    feed={"x": np.full(3, 50, "float32")},
                    fetch_list=[out],
                )
            except StatisticMissing as error:
                self.assertIn("no statistic", str(error))
                frames = traceback.extract_tb(error.__traceback__)
                self.assertIn("lookup", [frame.name for frame in frames])
            else:
                self.fail("the run did not raise")
            # the next run is not affected
            (got,) = exe.run(
                main, feed={"x": np.ones(3, "float32")}, fetch_list=[out]
            )
            np.testing.assert_array_equal(got, [2, 2, 2])
        finally:
            paddle.disable_static()


if __name__ == "__main__":
    unittest.main()
