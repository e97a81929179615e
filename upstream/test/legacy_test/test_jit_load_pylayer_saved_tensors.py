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
import tempfile
import unittest

import numpy as np

import paddle
from paddle.autograd import PyLayer
from paddle.static import InputSpec


class SavedScale(PyLayer):
    """Saves an input and a result of forward; the custom backward differs
    from the derivative of forward."""

    @staticmethod
    def forward(ctx, x, scale, func=paddle.tanh):
        ctx.scale = scale
        y = func(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensor()
        return dy * (ctx.scale - y) + 0.5 * x


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return SavedScale.apply(self.linear(x), 3.0, func=paddle.sin)


class TestJitLoadPyLayerSavedTensors(unittest.TestCase):
    """``ctx.save_for_backward`` tensors survive ``paddle.jit.save`` and
    ``paddle.jit.load``: the loaded model fine-tunes with eager's
    gradients."""

    def setUp(self):
        self.temp_dir = tempfile.TemporaryDirectory()
        self.x = np.random.default_rng(30).standard_normal([5, 4])
        self.x = self.x.astype('float32')

    def tearDown(self):
        self.temp_dir.cleanup()

    def grads(self, layer):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        layer(x).sum().backward()
        # the weight and the bias have distinct ranks
        params = sorted(layer.parameters(), key=lambda p: len(p.shape))
        return [x.grad.numpy()] + [p.grad.numpy() for p in params]

    def test_finetune_loaded_model(self):
        paddle.seed(30)
        net = Net()
        prefix = os.path.join(self.temp_dir.name, 'm')
        paddle.jit.save(
            paddle.jit.to_static(net, full_graph=True),
            prefix,
            input_spec=[InputSpec([-1, 4], 'float32', 'x')],
        )
        loaded = paddle.jit.load(prefix)
        loaded.train()
        for got, want in zip(self.grads(loaded), self.grads(net)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


if __name__ == '__main__':
    unittest.main()
