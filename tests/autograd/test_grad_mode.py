"""no_grad and enable_grad, as context managers and decorators."""
from __future__ import annotations

import pytest

import coursekit as ck
from coursekit.autograd import is_grad_enabled, set_grad_enabled


def test_no_grad_builds_no_graph():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    with ck.no_grad():
        y = (x * 2).exp().sum()
    assert y.grad_fn is None and not y.requires_grad
    assert is_grad_enabled()


def test_enable_grad_inside_no_grad_records_again():
    x = ck.tensor([1.0], requires_grad=True)
    with ck.no_grad():
        with ck.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and y.grad_fn is not None
    assert not z.requires_grad


def test_no_grad_as_decorator_with_and_without_parentheses():
    x = ck.tensor([1.0], requires_grad=True)

    @ck.no_grad()
    def f(t):
        return t * 2

    @ck.no_grad
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad
    assert f.__name__ == "f"
    assert (x * 2).requires_grad


def test_enable_grad_as_decorator_inside_no_grad():
    x = ck.tensor([1.0], requires_grad=True)

    @ck.enable_grad()
    def f(t):
        return t * 2

    with ck.no_grad():
        assert f(x).requires_grad


def test_grad_mode_is_restored_after_an_exception():
    with pytest.raises(ValueError):
        with ck.no_grad():
            raise ValueError
    assert is_grad_enabled()


def test_nested_no_grad_restores_the_outer_mode():
    with ck.no_grad():
        with ck.no_grad():
            pass
        assert not is_grad_enabled()
    assert is_grad_enabled()


def test_set_grad_enabled_false():
    x = ck.tensor([1.0], requires_grad=True)
    with set_grad_enabled(False):
        assert not (x * 2).requires_grad


def test_updating_parameters_under_no_grad_does_not_record():
    w = ck.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with ck.no_grad():
        w.data -= 0.1 * w.grad.data
        w2 = w - 0.1 * w.grad
    assert w.is_leaf and w2.grad_fn is None
