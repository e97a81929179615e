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
import importlib.util
import os
import tempfile
import unittest

import numpy as np

import paddle
from paddle.static import InputSpec


class ReduceAllNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        y = self.linear(x)
        return y * 2.0 + y.mean() + paddle.mean(y, keepdim=True)


@unittest.skipIf(
    not (
        importlib.util.find_spec('paddle2onnx')
        and importlib.util.find_spec('onnxruntime')
    ),
    'needs paddle2onnx and onnxruntime',
)
class TestOnnxExportMeanOverAllAxes(unittest.TestCase):
    """``paddle.onnx.export`` of a mean over all axes (an empty ``axis``),
    which paddle2onnx cannot read: the export writes the axes out, and
    onnxruntime gives eager's outputs."""

    def setUp(self):
        self.temp_dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.temp_dir.cleanup()

    def test_mean_over_all_axes(self):
        import onnxruntime

        paddle.seed(32)
        net = ReduceAllNet()
        net.eval()
        path = os.path.join(self.temp_dir.name, 'm')
        paddle.onnx.export(
            net,
            path,
            input_spec=[InputSpec([-1, 4], 'float32', 'x')],
            opset_version=11,
        )
        session = onnxruntime.InferenceSession(path + '.onnx')
        rng = np.random.default_rng(32)
        for batch in (1, 3):
            x = rng.standard_normal([batch, 4]).astype('float32')
            want = net(paddle.to_tensor(x)).numpy()
            (got,) = session.run(None, {session.get_inputs()[0].name: x})
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


if __name__ == '__main__':
    unittest.main()
