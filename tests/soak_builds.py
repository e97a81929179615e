"""Build and run many programs in one process, with the garbage collector
set to collect often, so that collections happen inside backward builds.

    python tests/soak_builds.py BUILDS

Each round builds (and runs forward and backward of) a plain static program
with a hook, a `cond`, a `while_loop` and a PyLayer; the same function
under `to_static(full_graph=True)` (AST) and under SOT, each with a new
function object so that every call builds a new program. Prints the number
of builds and exits 0; a crash kills the process (the caller sees it).
"""

import gc
import sys
import types
import warnings

import numpy as np
import paddle
from paddle.autograd import PyLayer

warnings.simplefilter("ignore")
LOG = []


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3.0 * x * x


def body(x):
    t = paddle.sin(x) * 2.0
    t.register_hook(lambda g: g * 0.5)  # compiled
    u = Cube.apply(t)
    u.register_hook(lambda g: LOG.append(float(g.sum())))  # run time
    v = paddle.concat([u, t], axis=0)
    return (v * v).sum()


def with_if(x):
    y = body(x)
    if x.mean() > 0:
        y = y * 2.0
    return y


def static_round(seed):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [3], "float64")
            x.stop_gradient = False
            y = body(x)
            y = paddle.static.nn.cond(
                x.mean() > 0, lambda: y * 2.0, lambda: y * 3.0
            )
            i = paddle.zeros([1], "int64")
            _, z = paddle.static.nn.while_loop(
                lambda i, z: i < 2, lambda i, z: [i + 1, z * 1.5], [i, y]
            )
            (gx,) = paddle.static.gradients([z], [x])
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        feed = {"x": np.random.default_rng(seed).standard_normal(3)}
        exe.run(main, feed=feed, fetch_list=[gx])
    finally:
        paddle.disable_static()


def to_static_round(seed, full_graph):
    def fn(x):
        return with_if(x)

    if not full_graph:
        # A new code object each round: SOT caches its translation per code.
        # And new globals: SOT stores each translation's compiled function in
        # the globals of the function it translates, and its LOAD_GLOBAL
        # wraps every global, so one module's globals would grow each round.
        fn = types.FunctionType(
            fn.__code__.replace(co_name=f"fn_{seed}"), dict(globals())
        )
    f = paddle.jit.to_static(fn, full_graph=full_graph)
    x = paddle.to_tensor(
        np.random.default_rng(seed).standard_normal(3), stop_gradient=False
    )
    f(x).backward()


def main(builds):
    gc.set_threshold(20, 5, 5)
    done = 0
    seed = 0
    while done < builds:
        static_round(seed)
        to_static_round(seed, True)
        to_static_round(seed, False)
        done += 3
        seed += 1
        LOG.clear()
        # Paddle caches the interpreters of each to_static program, and their
        # threads, until the process exits (docs/upstream-bugs.md): drop the
        # cache of this round's programs, which are gone, so that the process
        # does not gather thousands of threads.
        paddle.base.core.clear_executor_cache()
    print(f"soak: {done} builds")


if __name__ == "__main__":
    main(int(sys.argv[1]))
