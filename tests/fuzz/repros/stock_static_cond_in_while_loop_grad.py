"""Stock Paddle 3.3.1 bug (not fixed here; no hook or PyLayer involved): in a
plain static program, a `paddle.static.nn.cond` inside the body of a
`paddle.static.nn.while_loop` gives a silently wrong gradient (the output is
right). Found while adding hooks in `while` bodies. Stock gives zeros; with
the patch set the gradient of one iteration only. It goes wrong when the
`while` body yields the `if`'s result itself as the loop variable: with
`cond(...) * 1.0` the patched build gives eager's gradient (stock still
zeros). Not understood further: copying the gradient the backward `if`
reads (when it is the backward loop's argument) does not help. Run:
python tests/fuzz/repros/stock_static_cond_in_while_loop_grad.py
(exit status 1 = still fails; eager's Python loop is the reference).
"""

import sys

import numpy as np
import paddle

X = np.array([0.3, -0.5, 0.9])


def branch(y):
    return paddle.static.nn.cond(
        y.sum() > 0, lambda: paddle.sin(y) * 2.0, lambda: paddle.cos(y)
    )


def eager():
    x = paddle.to_tensor(X, stop_gradient=False)
    y = x
    for _ in range(3):
        y = branch(y)
    y.sum().backward()
    return y.numpy(), x.grad.numpy()


def static():
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [3], "float64")
            x.stop_gradient = False
            i = paddle.zeros([1], "int64")
            _, y = paddle.static.nn.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, branch(y)), [i, x]
            )
            (gx,) = paddle.static.gradients([y.sum()], [x])
        exe = paddle.static.Executor(paddle.CPUPlace())
        return exe.run(main, feed={"x": X}, fetch_list=[y, gx])
    finally:
        paddle.disable_static()


if __name__ == "__main__":
    (want_y, want_g), (got_y, got_g) = eager(), static()
    print("output", "same" if np.allclose(got_y, want_y) else "differs")
    print("grad eager ", want_g)
    print("grad static", got_g)
    sys.exit(0 if np.allclose(got_g, want_g) else 1)
