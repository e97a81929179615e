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

from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle


def hook_lines(fn):
    """The lines of the to_static code of ``fn`` that call ``register_hook``
    and the index of each line in the code."""
    code = paddle.jit.to_static(fn).code
    lines = [line.strip() for line in code.splitlines()]
    return lines, [i for i, line in enumerate(lines) if "register_hook" in line]


class TestRegisterHookStatementOrder(Dy2StTestBase):
    @test_ast_only
    @test_pir_only
    def test_two_hooks_keep_their_order(self):
        """Hooks on one value are registered in the user's order."""

        def f(x):
            t = x * 2
            t.register_hook(lambda g: g * 3)
            t.register_hook(lambda g: g + 1)
            return t * t

        lines, hooks = hook_lines(f)
        self.assertEqual(len(hooks), 2)
        self.assertIn("* 3", lines[hooks[0]])
        self.assertIn("+ 1", lines[hooks[1]])

    @test_ast_only
    @test_pir_only
    def test_hook_stays_after_the_uses_of_its_value(self):
        """A hook registered after uses of a value is not moved before them."""

        def f(x):
            t = x * 2
            y = t + 1
            t = y * 3
            t.register_hook(lambda g: g * 5)
            return t

        lines, hooks = hook_lines(f)
        rebind = [i for i, line in enumerate(lines) if line.startswith("t =")]
        self.assertEqual(len(hooks), 1)
        self.assertGreater(hooks[0], rebind[-1])


if __name__ == '__main__':
    unittest.main()
