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
import warnings

import numpy as np
from dygraph_to_static_utils import (
    Dy2StTestBase,
    test_ast_only,
    test_pir_only,
)

import paddle


class Net(paddle.nn.Layer):
    def __init__(self, dtype):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 3)
        self.dtype = dtype

    def forward(self, x):
        with paddle.amp.auto_cast(dtype=self.dtype):
            y = self.fc(x)
        return paddle.tanh(y)


@unittest.skipIf(
    paddle.is_compiled_with_cuda()
    or paddle.is_compiled_with_xpu()
    or paddle.device.get_all_custom_device_type(),
    "auto_cast has an effect on this device",
)
class TestAutoCastInToStaticOnCPU(Dy2StTestBase):
    """On CPU eager `auto_cast` warns and makes no effect; a to_static
    program runs where eager runs and does the same (float16 used to fail
    in `matmul`, bfloat16 used to compute in bfloat16)."""

    def check(self, dtype):
        paddle.seed(2026)
        net = Net(dtype)
        x = paddle.to_tensor(np.random.RandomState(0).rand(2, 4), 'float32')
        x.stop_gradient = False
        want = net(x)
        want.sum().backward()
        want_grads = [x.grad.numpy(), net.fc.weight.grad.numpy()]
        x.clear_gradient()
        net.clear_gradients()

        static_net = paddle.jit.to_static(net)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = static_net(x)
        self.assertTrue(
            any("makes no effect" in str(w.message) for w in caught)
        )
        got.sum().backward()
        self.assertEqual(got.dtype, paddle.float32)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(x.grad.numpy(), want_grads[0])
        np.testing.assert_array_equal(net.fc.weight.grad.numpy(), want_grads[1])

    @test_ast_only
    @test_pir_only
    def test_float16(self):
        self.check('float16')

    @test_ast_only
    @test_pir_only
    def test_bfloat16(self):
        self.check('bfloat16')


if __name__ == '__main__':
    unittest.main()
