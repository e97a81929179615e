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
"""Stands in for Paddle's test/dygraph_to_static/dygraph_to_static_utils.py
when the tests of upstream/test/dygraph_to_static/ run outside Paddle's
source tree (scripts/upstream.py puts this folder at the end of sys.path,
so inside Paddle's tree the real module wins).

Only the names those tests use, with the real module's meaning: each
``test*`` method of a ``Dy2StTestBase`` class becomes one method per
to_static mode, ``<name>__<mode>_pir``, run under PIR: AST, SOT with
MIN_GRAPH_SIZE=0 and SOT with MIN_GRAPH_SIZE=10 by default. The decorators
restrict the modes. Paddle's legacy-IR and PT modes (``test_pir_only`` keeps
a method out of them) and CINN are left out.
"""

import inspect
import unittest
from enum import Flag, auto
from functools import wraps

import paddle
from paddle.jit.api import sot_mode_guard
from paddle.jit.sot.opcode_translator.executor.executor_cache import (
    OpcodeExecutorCache,
)
from paddle.jit.sot.utils.envs import min_graph_size_guard


class ToStaticMode(Flag):
    AST = auto()
    SOT = auto()
    SOT_MGS10 = auto()  # SOT with MIN_GRAPH_SIZE=10


DEFAULT_TO_STATIC_MODE = (
    ToStaticMode.AST | ToStaticMode.SOT | ToStaticMode.SOT_MGS10
)


def _in_mode(fn, mode):
    @wraps(fn)
    def impl(*args, **kwargs):
        dygraph = paddle.in_dynamic_mode()
        with paddle.pir_utils.IrGuard():
            if dygraph:
                paddle.disable_static()
            if mode is ToStaticMode.AST:
                with sot_mode_guard(False):
                    return fn(*args, **kwargs)
            OpcodeExecutorCache().clear()
            mgs = 10 if mode is ToStaticMode.SOT_MGS10 else 0
            with sot_mode_guard(True), min_graph_size_guard(mgs):
                return fn(*args, **kwargs)

    return impl


class Dy2StTestMeta(type):
    def __new__(cls, name, bases, attrs):
        new_attrs = {}
        for key, fn in attrs.items():
            if not (key.startswith("test") and inspect.isfunction(fn)):
                new_attrs[key] = fn
                continue
            for base in bases:  # an override replaces the inherited modes
                for attr in dir(base):
                    if attr.startswith(f"{key}__"):
                        new_attrs[attr] = None
            modes = getattr(fn, "to_static_mode", DEFAULT_TO_STATIC_MODE)
            for mode in ToStaticMode:
                if mode & modes:
                    new_attrs[f"{key}__{mode.name.lower()}_pir"] = _in_mode(
                        fn, mode
                    )
        return type.__new__(cls, name, bases, new_attrs)


class Dy2StTestBase(unittest.TestCase, metaclass=Dy2StTestMeta):
    pass


def set_to_static_mode(mode):
    def decorator(fn):
        fn.to_static_mode = mode
        return fn

    return decorator


def test_ast_only(fn):
    return set_to_static_mode(ToStaticMode.AST)(fn)


def test_sot_only(fn):
    return set_to_static_mode(ToStaticMode.SOT | ToStaticMode.SOT_MGS10)(fn)


def test_sot_mgs0_only(fn):
    return set_to_static_mode(ToStaticMode.SOT)(fn)


def test_pir_only(fn):
    return fn  # PIR is the only IR mode here
