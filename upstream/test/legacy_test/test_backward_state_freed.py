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

import gc
import unittest

import paddle
from paddle.autograd.backward_utils import State


def live_states():
    return sum(isinstance(o, State) for o in gc.get_objects())


class TestBackwardStateFreed(unittest.TestCase):
    def test_no_state_left_to_the_collector(self):
        gc.collect()
        gc.disable()
        try:
            before = live_states()
            paddle.enable_static()
            try:
                with paddle.static.program_guard(paddle.static.Program()):
                    x = paddle.static.data('x', [3], 'float32')
                    x.stop_gradient = False
                    y = paddle.concat([paddle.tanh(x), x * 2.0]).sum()
                    paddle.static.gradients([y], [x])
            finally:
                paddle.disable_static()
            self.assertEqual(live_states(), before)
        finally:
            gc.enable()


if __name__ == '__main__':
    unittest.main()
