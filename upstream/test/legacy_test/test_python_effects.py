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

import math
import random
import types
import unittest

import numpy as np

import paddle
from paddle.autograd.python_effects import python_effect

LOG = []


class Meter:
    def __init__(self):
        self.seen = LOG

    def record(self, g):
        self.seen.append(g)


METER = Meter()


def get_log():
    return LOG


LOGS = {"log": LOG}


def backward_storing(ctx, dy):
    LOG.append(dy)
    return dy


def backward_pure(ctx, dy):
    (x,) = ctx.saved_tensor()
    n = len(dy.shape) + int(math.sqrt(4.0)) + float(np.prod([2, 3]))
    grads = []
    grads.append(dy * n)
    return paddle.tanh(x) * grads[0]


def backward_through_a_local(ctx, dy):
    log = LOG
    log.append(dy)
    return dy


def backward_in_place_through_a_local(ctx, dy):
    log = LOG
    log += [dy]
    return dy


def backward_own_objects(ctx, dy):
    a = b = []
    a.append(dy)
    b += [dy]
    kept = [g * 2.0 for g in (dy,)]
    g = dy
    g += 1.0
    t = dy.clone()
    t[0] = 0.0
    return t + kept[0]


def backward_through_an_object(ctx, dy):
    box = types.SimpleNamespace()
    box.log = LOG
    box.log.append(dy)
    return dy


def backward_counting(ctx, dy):
    ctx.calls += 1
    return dy


class TestPythonEffect(unittest.TestCase):
    """``python_effect`` names what a ``PyLayer.backward`` stores that
    outlives its call; what it cannot read counts as an effect."""

    def test_store_into_a_global(self):
        self.assertEqual(python_effect(backward_storing), "calls `LOG.append`")

    def test_no_effect(self):
        self.assertIsNone(python_effect(backward_pure))

    def test_store_through_a_local_name(self):
        self.assertEqual(
            python_effect(backward_through_a_local), "calls `log.append`"
        )
        self.assertEqual(
            python_effect(backward_in_place_through_a_local),
            "updates `log` in place",
        )
        self.assertIsNone(python_effect(backward_own_objects))

    def test_store_through_an_object_it_makes(self):
        self.assertEqual(
            python_effect(backward_through_an_object),
            "calls `box.log.append`",
        )

    def test_in_place_update_of_a_ctx_attribute(self):
        # a number on `ctx`: `+=` makes a new one
        ctx = types.SimpleNamespace(calls=0)
        self.assertIsNone(python_effect(backward_counting, ctx))
        # a list: `+=` updates it; without `ctx`, unknown
        ctx = types.SimpleNamespace(calls=[])
        self.assertEqual(
            python_effect(backward_counting, ctx),
            "updates `ctx.calls` in place",
        )
        self.assertEqual(
            python_effect(backward_counting), "updates `ctx.calls` in place"
        )

    def test_what_it_cannot_read_is_an_effect(self):
        cases = {
            "calls `random.random`, a call this check cannot read": (
                lambda ctx, dy: dy * random.random()
            ),
            "calls `self.seen.append` (in `Meter.record`)": (
                lambda ctx, dy: METER.record(dy)
            ),
            "calls `.append` of an object this check cannot name": (
                lambda ctx, dy: LOGS.get("log").append(dy)
            ),
        }

        def through_a_local_a_call_returns(ctx, dy):
            log = get_log()
            log.append(dy)

        # what a function of the user returns is read in it
        self.assertEqual(
            python_effect(through_a_local_a_call_returns),
            "calls `log.append`",
        )
        self.assertEqual(
            python_effect(lambda ctx, dy: get_log().append(dy)),
            "calls `get_log().append`",
        )
        for want, function in cases.items():
            self.assertEqual(python_effect(function), want)


if __name__ == '__main__':
    unittest.main()
