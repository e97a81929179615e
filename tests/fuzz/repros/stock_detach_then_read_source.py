"""Stock Paddle 3.3.1 bug, not fixed by the series: in a static program,
reading a tensor after its `detach()` copy was used (`a = t.detach()`, then
ops on `a`, then `cos(t)`) can give the later read a wrong value, silently.
Seen on the first `Executor.run` of a plain program (later runs of the same
program are right) and in programs that differentiate with respect to the
detached copy (`paddle.grad(y, [a])` of a PyLayer's `backward` that
recomputes from a saved tensor it reads again); with
`FLAGS_new_executor_sequential_run=1` the results are right. `detach()`
builds `share_data_`, and `share_data` (its non-inplace twin) gives the
same wrong value; a copy (`paddle.assign`) does not, but it has a gradient,
which `detach()` must not have. The fuzz generator's recomputing PyLayers
therefore detach a copy of the saved tensor.
Run:
python tests/fuzz/repros/stock_detach_then_read_source.py
(exit status 1 = the bug is still there; numpy is the reference).
"""

import os
import sys

os.environ.setdefault("GLOG_minloglevel", "2")

import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
with paddle.static.program_guard(main):
    x = paddle.static.data("x", [3], "float64")
    t = paddle.square(x)
    a = t.detach()
    out = paddle.tanh(a) * a * 2.0 + paddle.cos(t)
x0 = np.array([0.3, -1.2, 2.0])
t0 = x0**2
want = np.tanh(t0) * t0 * 2.0 + np.cos(t0)
(got,) = paddle.static.Executor().run(main, feed={"x": x0}, fetch_list=[out])
print("want", want)
print("got ", got)
sys.exit(0 if np.allclose(got, want, rtol=1e-12) else 1)
