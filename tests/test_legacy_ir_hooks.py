"""Hooks under the old IR (``FLAGS_enable_pir_api=0``) keep stock's
behaviour: to_static applies ``RegisterHookTransformer`` there (PIR does not
need it), and a function converted under one IR is converted again under
the other. The old IR runs in its own process (its flags are read at
start-up), with Paddle's own legacy dy2st settings
(``FLAGS_enable_pir_with_pt_in_dy2st=0``); each case is a function of
Paddle's ``test/dygraph_to_static/test_tensor_hook.py``, compared with eager.
"""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import paddle

    def different_parameter(x):
        def h(g):
            return 2 * g

        y = x + 4
        f = y + x
        z = f**2
        y.register_hook(h)
        f.register_hook(h)
        x.register_hook(h)
        return z

    def reassignment(x):
        def h(g):
            return 2 * g

        y = x + 4
        x = y * 5
        z = x**2
        x.register_hook(h)
        return z

    def repeat_register(x):
        def h(g):
            return 2 * g

        y = x + 4
        z = y**2
        x.register_hook(h)
        x.register_hook(h)
        return z

    def grad(f):
        x = paddle.to_tensor([2.0], stop_gradient=False)
        f(x).backward()
        return x.grad.numpy()

    for f in (different_parameter, reassignment, repeat_register):
        want = grad(f)
        got = grad(paddle.jit.to_static(f, full_graph=True))
        np.testing.assert_allclose(got, want, err_msg=f.__name__)
        print("ok", f.__name__, got)
    """
)


@pytest.mark.parametrize("pir", ["0", "1"], ids=["legacy_ir", "pir"])
def test_hooks_match_eager_under_each_ir(pir, tmp_path):
    script = tmp_path / "legacy_ir_hooks.py"  # AST reads the source
    script.write_text(SCRIPT)
    env = dict(
        os.environ,
        FLAGS_enable_pir_api=pir,
        FLAGS_enable_pir_with_pt_in_dy2st=pir,
    )
    run = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert run.stdout.count("ok ") == 3, run.stdout
