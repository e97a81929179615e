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
import copy
import unittest
from unittest import mock

import numpy as np
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

from paddle.jit.dy2static import convert_call_func


def user_function(x):
    return x


class TestConvertCallBuiltinLookup(Dy2StTestBase):
    """`is_unsupported` looks built-in functions up in a cached set, not by
    flattening and scanning every function of the built-in-like modules at
    each call (several ms per `convert_call`)."""

    @test_ast_only
    @test_pir_only
    def test_second_call_does_not_list_module_functions(self):
        convert_call_func.is_unsupported(user_function)
        with mock.patch.object(
            convert_call_func,
            'get_module_functions',
            side_effect=AssertionError('module functions listed again'),
        ):
            self.assertFalse(convert_call_func.is_unsupported(user_function))
        # The cached set still finds built-in functions and honours a module
        # added later.
        self.assertTrue(convert_call_func.is_unsupported(copy.deepcopy))
        self.assertTrue(convert_call_func.is_unsupported(np.concatenate))
        import fractions

        self.assertFalse(
            convert_call_func.is_unsupported(fractions.Fraction.from_float)
        )
        convert_call_func.add_ignore_module([fractions])
        try:
            self.assertTrue(
                convert_call_func.is_unsupported(fractions.Fraction.from_float)
            )
        finally:
            convert_call_func.BUILTIN_LIKELY_MODULES.remove(fractions)


if __name__ == '__main__':
    unittest.main()
