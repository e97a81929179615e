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


class TestBlockArgumentValues(unittest.TestCase):
    """Values returned by `Block.args`, `Block.kwargs` and
    `WhileOp.block_arguments` own their handle: they stay valid when the
    block's argument storage changes or goes away."""

    def setUp(self):
        paddle.enable_static()

    def tearDown(self):
        paddle.disable_static()

    def test_args_after_the_block_adds_arguments(self):
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data('x', [3], 'float32')
        block = main.global_block()
        block.add_arg(x.type())
        held = block.args()
        for _ in range(64):
            block.add_arg(x.type())
        self.assertTrue(held[0].is_same(block.args()[0]))

    def test_while_block_arguments_after_the_body_adds_arguments(self):
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data('x', [3], 'float32')
            i = paddle.zeros([1])
            paddle.static.nn.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), [i, x]
            )
        (while_op,) = [
            op for op in main.global_block().ops if op.name() == 'pd_op.while'
        ]
        loop = while_op.as_while_op()
        held = loop.block_arguments()
        for _ in range(64):
            loop.body().add_arg(x.type())
        for old, new in zip(held, loop.block_arguments()):
            self.assertTrue(old.is_same(new))

    def test_kwargs_are_copies(self):
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data('x', [3], 'float32')
        block = main.global_block()
        block.add_kwarg('k', x.type())
        first, second = block.kwargs()['k'], block.kwargs()['k']
        self.assertIsNot(first, second)
        self.assertTrue(first.is_same(second))


if __name__ == '__main__':
    unittest.main()
