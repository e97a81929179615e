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

import sys
import unittest

from paddle.autograd.python_effects import (
    _ends_before,
    _gives_back,
    read_instructions,
)


def assigns_two(a, b):
    x = a
    y = b
    return x + y


def loops_and_catches(xs):
    total = 0
    for x in xs:
        total += x
    total = total * 2
    try:
        total = 1 / total
    except ZeroDivisionError:
        total = 0
    return total


def keeps_a_comprehension(dy):
    kept = [g for g in (dy,)]
    g = dy
    return kept, g


def stores_an_item(obj, k, v):
    obj[k + 1] = v


class TestPythonBytecodeReader(unittest.TestCase):
    """``read_instructions`` reads a function's bytecode the same way on
    every Python the checks of static graphs run on."""

    def test_pairs_are_two_instructions(self):
        # (3.13 compiles `x = a` and the load after it into one pair)
        read = [
            (ins.opname, ins.argval)
            for ins in read_instructions(assigns_two.__code__)
            if ins.opname in ("LOAD_FAST", "STORE_FAST")
        ]
        self.assertEqual(
            read,
            [
                ("LOAD_FAST", "a"),
                ("STORE_FAST", "x"),
                ("LOAD_FAST", "b"),
                ("STORE_FAST", "y"),
                ("LOAD_FAST", "x"),
                ("LOAD_FAST", "y"),
            ],
        )

    def test_only_jumps_and_handlers_join_paths(self):
        instructions = read_instructions(loops_and_catches.__code__)
        loop = next(i for i in instructions if i.opname == "FOR_ITER")
        self.assertIn(loop.offset, instructions.joins)
        # the handler's first instruction (after its no-ops)
        caught = next(
            k
            for k, i in enumerate(instructions)
            if i.argval == "ZeroDivisionError"
        )
        self.assertTrue(
            any(i.offset in instructions.joins for i in instructions[:caught])
        )
        # where the `try` starts is no join
        one = next(i for i in instructions if i.argval == 1)
        self.assertNotIn(one.offset, instructions.joins)

    def test_a_comprehension_gives_its_name_back(self):
        code = keeps_a_comprehension.__code__
        stores = [
            i
            for i in read_instructions(code)
            if i.opname == "STORE_FAST" and i.argval == "g"
        ]
        given_back = [s for s in stores if _gives_back(code, s, "g")]
        # 3.12 inlines the comprehension: it gives `g` back its value at
        # its end and where an exception leaves it; the loop's store and
        # `g = dy` are stores of their own
        inlined = sys.version_info >= (3, 12)
        self.assertEqual(len(given_back), 2 if inlined else 0)
        self.assertEqual(len(stores) - len(given_back), 2 if inlined else 1)

    def test_where_an_expression_starts(self):
        code = stores_an_item.__code__
        instructions = read_instructions(code)
        store = next(
            k for k, i in enumerate(instructions) if i.opname == "STORE_SUBSCR"
        )
        # `obj[k + 1] = v`: the object ends where the key `k + 1` starts
        j = _ends_before(code, instructions, store - 1)
        self.assertEqual(instructions[j].argval, "obj")


if __name__ == '__main__':
    unittest.main()
