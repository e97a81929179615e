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

import subprocess
import sys
import textwrap
import unittest

import paddle


def backward_with_hook(hook):
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = x * 3
    y.register_hook(hook)
    y.sum().backward()
    return x


class TestTensorHookResultCheck(unittest.TestCase):
    def test_other_shape_is_an_error(self):
        with self.assertRaisesRegex(Exception, 'must not change the shape'):
            backward_with_hook(lambda g: g.sum())

    def test_other_dtype_is_an_error(self):
        with self.assertRaisesRegex(Exception, 'must not change the shape'):
            backward_with_hook(lambda g: g.astype('float64'))

    def test_non_tensor_is_an_error_not_a_crash(self):
        # the process used to die: run it in its own
        for result in ('1.0', '(g * 2.0,)'):
            code = textwrap.dedent(
                f"""
                import paddle
                x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
                y = x * 3
                y.register_hook(lambda g: {result})
                try:
                    y.sum().backward()
                except Exception as e:
                    print('raised', e)
                """
            )
            run = subprocess.run(
                [sys.executable, '-c', code], capture_output=True, text=True
            )
            self.assertEqual(run.returncode, 0, run.stderr[-2000:])
            self.assertIn('a hook must return a Tensor', run.stdout)


if __name__ == '__main__':
    unittest.main()
