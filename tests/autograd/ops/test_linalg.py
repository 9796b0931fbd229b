"""matmul: 1-D, 2-D and batched with broadcast batch dims, against torch; gradcheck; shape errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import coursekit as ck
from coursekit.autograd import ShapeError, gradcheck

from ..helpers import DIFFERENTIAL, arrays, assert_matches_torch, random_inputs


@st.composite
def matmul_shapes(draw):
    """Shapes of a @ b: either may be 1-D; 2-D and more get broadcastable batch dims."""
    m, k, n = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch_a, batch_b = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3)
    ).input_shapes
    a_vector, b_vector = draw(st.booleans()), draw(st.booleans())
    a = (k,) if a_vector else batch_a + (m, k)
    b = (k,) if b_vector else batch_b + (k, n)
    return a, b


@DIFFERENTIAL
@given(data=st.data(), shapes=matmul_shapes(), which=st.sampled_from(["both", "a", "b"]))
def test_matmul_matches_torch(data, shapes, which):
    a = data.draw(arrays(shapes[0]), label="a")
    b = data.draw(arrays(shapes[1]), label="b")
    requires = [which in ("both", "a"), which in ("both", "b")]
    assert_matches_torch(lambda x, y: x @ y, lambda x, y: x @ y, [a, b], requires_grad=requires, rtol=1e-6)


def test_matmul_method_and_function_and_numpy_operand_agree():
    a = ck.tensor(np.arange(6.0).reshape(2, 3))
    b = np.arange(3.0)
    np.testing.assert_allclose(a.matmul(b).data, a.data @ b)
    np.testing.assert_allclose(ck.matmul(a, b).data, a.data @ b)
    np.testing.assert_allclose((b[None] @ a.T).data, b[None] @ a.data.T)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((4,), (4, 3)), ((2, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (4, 2)), ((2, 1, 3, 4), (5, 4, 2))],
                         ids=lambda s: f"{s[0]}@{s[1]}")
def test_gradcheck_passes(shapes):
    assert gradcheck(lambda a, b: a @ b, random_inputs(*shapes))


def test_matmul_shape_mismatch_names_both_shapes_and_inner_sizes():
    a = ck.tensor(np.zeros((3, 4)), requires_grad=True)
    b = ck.tensor(np.zeros((5, 2)))
    with pytest.raises(ShapeError) as info:
        a @ b
    assert str(info.value) == "matmul: (3, 4) @ (5, 2) — inner sizes 4 and 5 differ"


def test_matmul_with_unbroadcastable_batch_dims_raises_shape_error():
    with pytest.raises(ShapeError, match=r"batch dimensions \(2,\) and \(3,\) do not broadcast"):
        ck.tensor(np.zeros((2, 3, 4))) @ ck.tensor(np.zeros((3, 4, 5)))


def test_matmul_of_a_scalar_is_refused_with_shape_error():
    with pytest.raises(ShapeError, match="at least one dimension"):
        ck.tensor(2.0) @ ck.tensor([1.0, 2.0])


def test_shape_error_is_a_value_error():
    with pytest.raises(ValueError):
        ck.tensor(np.zeros((3, 4))) @ ck.tensor(np.zeros((3, 4)))


def test_matmul_skips_the_gradient_of_an_input_that_does_not_need_one():
    x = ck.tensor(np.ones((2, 3)))
    w = ck.tensor(np.ones((3, 4)), requires_grad=True)
    y = x @ w
    assert y.grad_fn.needs_input_grad == (False, True)
    y.sum().backward()
    assert x.grad is None and w.grad is not None
