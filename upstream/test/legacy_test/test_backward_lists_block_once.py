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

import paddle


class CountBlockOps:
    """Count the reads of `Block.ops`, which wraps every op of the block in
    a Python object (its cost grows with the block)."""

    def __enter__(self):
        self.calls = 0
        self.prop = paddle.pir.Block.ops

        def counting(block):
            self.calls += 1
            return self.prop.fget(block)

        paddle.pir.Block.ops = property(counting)
        return self

    def __exit__(self, *exc):
        paddle.pir.Block.ops = self.prop


def chain(n):
    x = paddle.static.data('x', [4, 16])
    x.stop_gradient = False
    y = x
    for _ in range(n):
        y = paddle.tanh(y) * 2.0
    return x, y.sum()


class TestBackwardListsBlockOnce(unittest.TestCase):
    """Building a backward pass reads the ops of its block a number of
    times that does not grow with the ops (it read them at each op it
    differentiated: time quadratic in the ops of the program)."""

    def setUp(self):
        paddle.enable_static()

    def tearDown(self):
        paddle.disable_static()

    def reads_of_block_ops(self, n):
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x, loss = chain(n)
            with CountBlockOps() as count:
                (gx,) = paddle.static.gradients([loss], [x])
        self.assertIsNotNone(gx)
        return count.calls

    def test_reads_do_not_grow_with_the_ops(self):
        self.assertEqual(
            self.reads_of_block_ops(10), self.reads_of_block_ops(80)
        )

    def test_block_end_gives_the_appended_ops(self):
        from paddle.autograd.backward_utils import BlockEnd

        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x, loss = chain(3)
            block = main.global_block()
            end = BlockEnd(block)
            self.assertEqual(end.appended(), [])

            def appended(build):
                first = len(block.ops)
                build()
                want = [op.id() for op in block.ops[first:]]
                self.assertEqual([op.id() for op in end.appended()], want)
                return want

            # ops with results
            self.assertTrue(appended(lambda: paddle.tanh(loss) * 2.0))
            # an op with no result
            appended(
                lambda: paddle.base.libpaddle.pir.append_shadow_output(
                    main, paddle.tanh(loss), 'out', block.num_ops()
                )
            )
            # an op with a block (its ops are counted with the block's)
            appended(
                lambda: paddle.static.nn.cond(
                    loss > 0, lambda: loss * 2.0, lambda: loss - 1.0
                )
            )
            # nothing
            self.assertEqual(appended(lambda: None), [])
            # an op removed, then ops appended
            block.remove_op(block.ops[-1])
            appended(lambda: paddle.exp(loss))


if __name__ == '__main__':
    unittest.main()
