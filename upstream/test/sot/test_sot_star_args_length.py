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
import unittest

import numpy as np

import paddle


def add_all(*args):
    out = args[0]
    for a in args[1:]:
        out = out + a * 2.0
    return out


def add_all_after_a_break(*args):
    args[0].numpy()  # a graph break
    return add_all(*args)


def star(xs):
    return add_all(*xs)


def star_and_more(xs):
    return add_all(*xs, xs[0])


def star_and_more_after_a_break(xs):
    return add_all_after_a_break(*xs, xs[0])


class TestSotStarArgsLength(unittest.TestCase):
    """A list unpacked into a call (``f(*xs)``) whose length changes between
    calls: SOT gives each call's result, instead of the code translated for
    the first length reading that many items, silently."""

    def setUp(self):
        self.old_min_graph_size = os.environ.get('MIN_GRAPH_SIZE')
        os.environ['MIN_GRAPH_SIZE'] = '0'

    def tearDown(self):
        if self.old_min_graph_size is None:
            os.environ.pop('MIN_GRAPH_SIZE', None)
        else:
            os.environ['MIN_GRAPH_SIZE'] = self.old_min_graph_size

    def run_calls(self, fn):
        results = []
        for n in (2, 2, 3, 4):
            xs = [
                paddle.to_tensor([1.0, -2.0], stop_gradient=False) * (i + 1)
                for i in range(n)
            ]
            for x in xs:
                x.retain_grads()
            out = fn(xs)
            (out * out).sum().backward()
            results.append([out.numpy()] + [x.grad.numpy() for x in xs])
        return results

    def check(self, fn):
        got = self.run_calls(paddle.jit.to_static(fn))
        want = self.run_calls(fn)
        for g, w in zip(got, want):
            self.assertEqual(len(g), len(w))
            for a, b in zip(g, w):
                np.testing.assert_allclose(a, b)

    def test_star(self):
        self.check(star)

    def test_star_and_more(self):
        self.check(star_and_more)

    def test_star_and_more_after_a_break(self):
        self.check(star_and_more_after_a_break)


if __name__ == '__main__':
    unittest.main()
