"""Stock Paddle 3.3.1 crashes when to_static functions are converted one
after another and each is dropped after its call (no hook, no PyLayer).

    python tests/repro_rebuild_after_free.py [ROUNDS] [--keep]

Each round converts a new function object with ``to_static(full_graph=True)``,
calls it and runs backward, then drops it. With the garbage collector
disabled, stock 3.3.1 fails within about 10-70 rounds on every Python while
building a backward: SIGSEGV in ``add_n`` of a value's partial gradients
(``make_output_with_output_grad``), ``(InvalidType) All the Values in the
input must have the same data type`` there, or "we can only get name of
Value". ``--keep`` keeps every ``StaticFunction`` alive. Each round also
checks ``x.grad`` against eager (rtol 1e-12); exits 0 when all rounds pass.

Cause: ``Block.kwargs`` returns views of the block's storage (pybind11
``return_value_policy::reference``); ``RunnableProgram``'s
``_get_program_all_values`` keeps them in a reference cycle past their
program's life, and pybind11 returns such a stale view for a later Value
cast at the same address (here, among ``call_vjp``'s results) instead of a
copy. The patched ``Block.args`` / ``Block.kwargs`` /
``WhileOp.block_arguments`` return owning copies
(``tests/test_block_argument_values.py`` runs this file).
"""

import gc
import sys

import numpy as np
import paddle


def fn(x):
    t = paddle.sin(x) * 2.0
    u = t * t * t
    v = paddle.concat([u, t], axis=0)
    return (v * v).sum()


def one_round(seed, kept):
    def g(x):  # a new function object each round
        return fn(x)

    f = paddle.jit.to_static(g, full_graph=True)
    grads = []
    for run in (f, fn):  # converted, then eager (the reference)
        x = paddle.to_tensor(
            np.random.default_rng(seed).standard_normal(3), stop_gradient=False
        )
        run(x).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12, err_msg=f"round {seed}")
    if kept is not None:
        kept.append(f)


def main():
    args = [a for a in sys.argv[1:] if a != "--keep"]
    rounds = int(args[0]) if args else 300
    kept = [] if "--keep" in sys.argv else None
    gc.disable()
    for seed in range(rounds):
        one_round(seed, kept)
    print(f"{rounds} rounds passed")


if __name__ == "__main__":
    main()
