"""The engine: topological order, accumulation, reuse, retain_graph, freeing, bad backward calls."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import coursekit as ck
from coursekit.autograd import AccumulateGrad, backward, toposort


def test_toposort_puts_every_node_after_the_nodes_it_takes_input_from():
    a = ck.tensor([1.0], requires_grad=True)
    b = a * 2
    c = b + a
    d = c * b
    order = toposort(d.grad_fn)
    position = {node: i for i, node in enumerate(order)}
    for node in order:
        for child, _ in node.next_functions:
            if child is not None:
                assert position[child] < position[node]
    assert order[-1] is d.grad_fn
    assert sum(isinstance(n, AccumulateGrad) for n in order) == 1  # one node per leaf


def test_gradients_accumulate_over_two_backward_calls():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.data, [3.0 + 2.0, 3.0 + 4.0])


def test_accumulation_keeps_the_same_grad_tensor_like_torch():
    x = ck.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward()
    grad = x.grad
    (x * 2).sum().backward()
    assert x.grad is grad and x.grad.tolist() == [4.0]


def test_reused_node_gets_the_sum_of_its_gradients():
    # micrograd's classic bug: b = a + a; c = b + b must give dc/da = 4, not 1 or 2.
    a = ck.tensor(3.0, requires_grad=True)
    b = a + a
    c = b + b
    c.backward()
    assert a.grad.item() == 4.0


def test_diamond_graph_matches_torch():
    def program(lib, x):
        y = x * 2
        return ((y.exp() + y * y) * y.sigmoid()).sum()

    x = ck.tensor(np.array([0.5, -1.0]), requires_grad=True)
    t = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    program(ck, x).backward()
    program(torch, t).backward()
    np.testing.assert_allclose(x.grad.data, t.grad.numpy())


def test_second_backward_without_retain_graph_raises_a_clear_runtime_error():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time.*retain_graph=True"):
        y.backward()


def test_second_backward_with_retain_graph_works_and_accumulates():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.data, [4.0, 8.0])


def test_backward_through_a_shared_subgraph_already_freed_raises():
    x = ck.tensor([1.0], requires_grad=True)
    h = x.exp()
    a, b = h * 2, h * 3
    a.backward()
    with pytest.raises(RuntimeError, match="second time"):
        b.backward()


def test_non_scalar_backward_without_gradient_is_refused_with_a_message():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"only for scalar outputs, got shape \(2,\)"):
        (x * 2).backward()


def test_non_scalar_backward_with_a_gradient_is_a_vector_jacobian_product():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(np.array([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.data, [2.0, 40.0])


def test_gradient_of_the_wrong_shape_is_refused():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"gradient has shape \(3,\), expected \(2,\)"):
        (x * 2).backward(np.ones(3))


def test_backward_on_a_tensor_that_does_not_require_grad_is_refused():
    with pytest.raises(RuntimeError, match="does not require grad"):
        ck.tensor([1.0]).sum().backward()


def test_backward_on_a_leaf_accumulates_ones():
    x = ck.tensor(2.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def test_backward_free_function_equals_the_method():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    backward((x * 5).sum())
    np.testing.assert_allclose(x.grad.data, [5.0, 5.0])


def test_detach_cuts_the_graph_and_shares_data():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.detach()
    assert z.grad_fn is None and not z.requires_grad and z.is_leaf
    assert np.shares_memory(z.data, y.data)
    w = (z * x).sum()
    w.backward()
    np.testing.assert_allclose(x.grad.data, [2.0, 4.0])  # z is a constant: no path through y


def test_requires_grad_propagates_through_ops():
    a = ck.tensor([1.0], requires_grad=True)
    b = ck.tensor([2.0])
    assert (a + b).requires_grad
    assert not (b * 2).requires_grad
    assert (b * 2 + a).requires_grad
    b.requires_grad_()
    assert (b * 2).requires_grad


def test_requires_grad_cannot_be_switched_off_on_a_non_leaf():
    y = ck.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)


def test_non_leaf_tensors_get_no_grad_unless_retained():
    x = ck.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    k = x * 4
    k.retain_grad()
    (h * k).sum().backward()
    assert h.grad is None
    np.testing.assert_allclose(k.grad.data, h.data)


def test_leaf_gradients_never_share_a_buffer():
    a = ck.tensor([1.0, 2.0], requires_grad=True)
    b = ck.tensor([3.0, 4.0], requires_grad=True)
    upstream = np.array([1.0, 1.0], dtype=np.float32)
    (a + b).backward(upstream)
    a.grad.data[...] = 0  # e.g. an optimizer's zero_grad(set_to_none=False)
    np.testing.assert_allclose(b.grad.data, [1.0, 1.0])
    np.testing.assert_allclose(upstream, [1.0, 1.0])
    assert a.grad.data.flags.writeable and b.grad.data.flags.writeable


def test_leaf_gradient_has_the_leaf_dtype():
    w = ck.tensor([1.0, 2.0], requires_grad=True)  # float32
    (w * np.array([1.0, 2.0])).sum().backward()  # float64 operand
    assert w.grad.dtype == np.float32


def test_a_branch_that_carries_no_gradient_is_skipped():
    a = ck.tensor([1.0], requires_grad=True)
    b = ck.tensor([2.0], requires_grad=True)
    y = a * 2 + (b * 0).detach()
    y.backward()
    assert b.grad is None and a.grad.item() == 2.0


def test_a_deep_graph_does_not_hit_the_recursion_limit():
    x = ck.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 1.0001 ** 5000, rtol=1e-4)


def test_a_graph_is_released_once_its_output_is_gone():
    import gc
    import weakref

    x = ck.tensor(np.ones(3), requires_grad=True)
    y = (x.exp() * 2).sum()
    node = weakref.ref(y.grad_fn)
    y.backward()
    del y
    gc.collect()
    assert node() is None


@pytest.mark.parametrize("make, name", [
    (lambda x: x.sum(dim=1), "SumBackward"),
    (lambda x: x.mean(dim=1), "MeanBackward"),
    (lambda x: x.max(), "MaxBackward"),
    (lambda x: x.relu(), "ReLUBackward"),
    (lambda x: x.sigmoid(), "SigmoidBackward"),
])
def test_each_builtin_op_is_one_node(make, name):
    """One op, one node (as torch's MeanBackward): a graph reads like the code that built it."""
    out = make(ck.tensor(np.random.default_rng(0).standard_normal((2, 3)), requires_grad=True))
    assert out.grad_fn.name() == name
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"]
