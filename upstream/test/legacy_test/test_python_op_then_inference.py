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
import subprocess
import sys
import tempfile
import textwrap
import unittest

# Paddle Inference registers the custom operators of the process once, at
# its first predictor; it used to abort there on a Python op's meta. Each
# case runs in a fresh process.
SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    import paddle

    paddle.enable_static()
    op = paddle.static.register_op(
        lambda x: x * 2,
        name="double_before_inference",
        input_names=["x"],
        output_names=["out"],
        infer_meta=lambda x: x,
    )
    main = paddle.static.Program()
    with paddle.static.program_guard(main):
        x = paddle.static.data("x", [3], "float32")
        out = op(x)
    (got,) = paddle.static.Executor(paddle.CPUPlace()).run(
        main, feed={"x": np.ones(3, "float32")}, fetch_list=[out]
    )
    assert got.tolist() == [2, 2, 2], got
    paddle.disable_static()

    net = paddle.nn.Linear(3, 2)
    prefix = sys.argv[1] + "/model"
    paddle.jit.save(
        net, prefix, input_spec=[paddle.static.InputSpec([None, 3], "float32")]
    )
    config = paddle.inference.Config(prefix + ".json", prefix + ".pdiparams")
    config.disable_gpu()
    predictor = paddle.inference.create_predictor(config)
    data = np.random.rand(2, 3).astype("float32")
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    handle.reshape(data.shape)
    handle.copy_from_cpu(data)
    predictor.run()
    result = predictor.get_output_handle(
        predictor.get_output_names()[0]
    ).copy_to_cpu()
    # float32; the predictor's fused ops round differently (an output
    # near zero has no relative precision left)
    np.testing.assert_allclose(
        result, net(paddle.to_tensor(data)).numpy(), rtol=1e-5, atol=1e-6
    )
    print("predicted")
    """
)


class TestPythonOpThenInference(unittest.TestCase):
    def test_predictor_after_a_python_op(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "case.py")
            with open(script, "w") as f:
                f.write(SCRIPT)
            done = subprocess.run(
                [sys.executable, script, tmp],
                capture_output=True,
                text=True,
                timeout=300,
            )
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        self.assertIn("predicted", done.stdout)


if __name__ == "__main__":
    unittest.main()
