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

import paddle


class GradientTooLarge(ValueError):
    pass


def check_gradient(g):
    if float(g.abs().max()) > 10:  # reads a value: runs at run time
        raise GradientTooLarge("gradient above 10")


def fn(x):
    t = x * 2.0
    t.register_hook(check_gradient)
    return (t * t).sum()


class TestTensorHookRunTimeException(unittest.TestCase):
    def check(self, f):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        f(x).backward()
        x = paddle.to_tensor([1.0, 20.0], stop_gradient=False)
        loss = f(x)
        try:
            loss.backward()
        except GradientTooLarge as error:
            self.assertIn("gradient above 10", str(error))
            frames = traceback.extract_tb(error.__traceback__)
            self.assertIn("check_gradient", [frame.name for frame in frames])
            return error
        self.fail("the backward did not raise")

    def test_to_static(self):
        # (eager reports a hook's exception as an OSError whose message
        # names it)
        error = self.check(paddle.jit.to_static(fn, full_graph=True))
        # a note names the hook and the tensor
        notes = "\n".join(getattr(error, "__notes__", [])) + str(error)
        self.assertIn("check_gradient", notes)


if __name__ == "__main__":
    unittest.main()
