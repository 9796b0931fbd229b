"""unbroadcast: the one helper that reduces a gradient to its input's shape."""
from __future__ import annotations

import numpy as np
from hypothesis import given

from coursekit.autograd import unbroadcast

from .helpers import DIFFERENTIAL, broadcastable_shapes


@DIFFERENTIAL
@given(shapes=broadcastable_shapes(2))
def test_unbroadcast_equals_the_sum_over_broadcast_copies(shapes):
    shape, other = shapes
    out_shape = np.broadcast_shapes(shape, other)
    grad = np.random.default_rng(0).standard_normal(out_shape)
    reduced = unbroadcast(grad, shape)
    assert reduced.shape == shape
    # Reference: d/dx sum(grad * broadcast(x)) = sum of grad over every copy of each element,
    # computed by scattering with the broadcast index map.
    index = np.broadcast_to(np.arange(int(np.prod(shape))).reshape(shape), out_shape)
    expected = np.bincount(index.ravel(), weights=grad.ravel(), minlength=int(np.prod(shape))).reshape(shape)
    np.testing.assert_allclose(reduced, expected, rtol=1e-10, atol=1e-12)


def test_unbroadcast_returns_the_gradient_itself_when_shapes_agree():
    grad = np.ones((2, 3))
    assert unbroadcast(grad, (2, 3)) is grad
