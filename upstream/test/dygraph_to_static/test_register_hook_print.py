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
import re
import sys
import tempfile
import unittest

from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle


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


def fn(x):
    t = x * 3
    t.register_hook(lambda g: print('hook sees', g))
    return t * t


class TestRegisterHookPrint(Dy2StTestBase):
    @test_ast_only
    @test_pir_only
    def test_to_static_prints_at_every_backward(self):
        static_fn = paddle.jit.to_static(fn)
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)

        def run():
            for _ in range(3):
                static_fn(x).sum().backward()

        out = printed(run)
        self.assertEqual(out.count('hook sees'), 3, out)
        # the gradient of t is 2 * t
        self.assertEqual(len(re.findall(r'6\.0*[ ,]+12\.', out)), 3, out)


if __name__ == '__main__':
    unittest.main()
