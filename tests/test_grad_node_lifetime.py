"""The patch set does not keep eager grad nodes (and the graphs and hooks
they hold) alive.

Stock ``Tensor.grad_fn`` returns the grad node with one reference too many:
every access keeps that node, and everything it reaches, alive for the rest
of the process. The patches never leave such a reference: a hooked non-leaf
input of a to_static function (whose grad node is checked at each call) and
hooks on PyLayer outputs (found by identity) are freed with their graph.
"""

import gc
import weakref

import paddle
from conftest import Square


class Payload:
    pass


def _freed(make, n=30):
    refs = [make() for _ in range(n)]
    gc.collect()
    return sum(r() is not None for r in refs)


def test_stock_grad_fn_keeps_the_node_alive():
    """What the tests below guard against (stock 3.3.1)."""

    def make():
        payload = Payload()
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        y = x * 2.0
        y._register_grad_hook(lambda g, payload=payload: g)
        assert y.grad_fn is not None
        return weakref.ref(payload)

    assert _freed(make) == 30


def f(x):
    return x * 2.0, x * 3.0


STATIC_F = paddle.jit.to_static(f, full_graph=True)


def test_hooked_non_leaf_input_of_to_static_is_freed():
    def make():
        payload = Payload()
        w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        h = w * 1.5  # non-leaf: its grad node is checked at each call
        h.register_hook(lambda g, payload=payload: g * 2.0)
        a, _ = STATIC_F(h)
        a.sum().backward()
        return weakref.ref(payload)

    make()
    assert _freed(make) == 0


def test_hook_on_pylayer_output_is_freed():
    def make():
        payload = Payload()
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        y = Square.apply(x)
        y.register_hook(lambda g, payload=payload: g * 2.0)
        y.sum().backward()
        return weakref.ref(payload)

    assert _freed(make) == 0


def test_hook_on_output_of_pylayer_without_backward_is_freed():
    def make():
        payload = Payload()
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        y = Square.apply(x)
        y.register_hook(lambda g, payload=payload: g * 2.0)
        return weakref.ref(payload)

    assert _freed(make) == 0
