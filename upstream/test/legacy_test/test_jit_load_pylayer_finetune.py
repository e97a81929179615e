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
import gc
import os
import tempfile
import unittest

import numpy as np

import paddle
from paddle.autograd import PyLayer
from paddle.static import InputSpec


class DoubleTanh(PyLayer):
    """The custom backward differs from the derivative of forward."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.scale


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear1 = paddle.nn.Linear(4, 8)
        self.linear2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        return self.linear2(DoubleTanh.apply(self.linear1(x), 2.0))


class TestJitLoadPyLayerFinetune(unittest.TestCase):
    """A ``paddle.jit.load``ed program with a ``pylayer`` op fine-tunes
    through the custom backward in the process that saved it, after the
    traced layer (and its program) is freed."""

    def setUp(self):
        self.temp_dir = tempfile.TemporaryDirectory()
        self.x = np.random.default_rng(28).standard_normal([5, 4])
        self.x = self.x.astype('float32')

    def tearDown(self):
        self.temp_dir.cleanup()

    def grads(self, net, params):
        x = paddle.to_tensor(self.x, stop_gradient=False)
        net(x).sum().backward()
        return [x.grad.numpy()] + [p.grad.numpy() for p in params]

    def test_finetune_after_the_traced_layer_is_freed(self):
        spec = [InputSpec([-1, 4], 'float32', 'x')]
        for cycle in range(8):
            paddle.seed(cycle)
            net = Net()
            prefix = os.path.join(self.temp_dir.name, f'm{cycle}')
            paddle.jit.save(
                paddle.jit.to_static(net, full_graph=True),
                prefix,
                input_spec=spec,
            )
            want = self.grads(net, net.parameters())
            shapes = [tuple(p.shape) for p in net.parameters()]
            del net
            gc.collect()  # frees the trace program
            loaded = paddle.jit.load(prefix)
            loaded.train()
            # the parameters of Net have distinct shapes
            by_shape = {tuple(p.shape): p for p in loaded.parameters()}
            got = self.grads(loaded, [by_shape[s] for s in shapes])
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
            del loaded
            gc.collect()


if __name__ == '__main__':
    unittest.main()
