"""Shared oracles and hypothesis strategies for the autograd tests.

The main oracle runs one program through coursekit and through PyTorch in float64 and
compares the output and every input's gradient under a random upstream gradient.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import coursekit as ck

# Modest example counts: the whole autograd suite must stay well under two minutes on 2 cores.
DIFFERENTIAL = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def floats(lo: float = -3.0, hi: float = 3.0) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=64)


def away_from_zero(lo: float = 0.5, hi: float = 3.0) -> st.SearchStrategy[float]:
    return st.one_of(floats(-hi, -lo), floats(lo, hi))


def arrays(shape: Any, elements: st.SearchStrategy[float] | None = None) -> st.SearchStrategy[np.ndarray]:
    """float64 arrays; hypothesis likes repeated values and exact zeros, which is the point:
    ties and kinks must follow torch's conventions too."""
    return hnp.arrays(np.float64, shape, elements=elements if elements is not None else floats())


def shapes(min_dims: int = 0, max_dims: int = 4, max_side: int = 4) -> st.SearchStrategy[tuple[int, ...]]:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)


def broadcastable_shapes(num_shapes: int = 2) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
    """Shapes that broadcast together (some dims 1, some leading dims missing)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=0, max_dims=4, max_side=4).map(
        lambda s: s.input_shapes
    )


def assert_matches_torch(
    ck_fn: Callable[..., ck.Tensor],
    torch_fn: Callable[..., torch.Tensor],
    arrays: Sequence[np.ndarray],
    requires_grad: Sequence[bool] | None = None,
    rtol: float = 1e-7,
    atol: float = 1e-10,
    seed: int = 0,
) -> None:
    """Run the same program through coursekit and torch (float64); compare value and gradients.

    The upstream gradient is random (not ones), so a backward that ignores it, or
    transposes it, is caught.
    """
    requires_grad = list(requires_grad) if requires_grad is not None else [True] * len(arrays)
    ck_in = [ck.tensor(np.array(a, dtype=np.float64), requires_grad=r) for a, r in zip(arrays, requires_grad)]
    t_in = [torch.tensor(np.array(a, dtype=np.float64), requires_grad=r) for a, r in zip(arrays, requires_grad)]
    out = ck_fn(*ck_in)
    expected = torch_fn(*t_in)

    assert isinstance(out, ck.Tensor)
    assert out.shape == tuple(expected.shape), f"shape: got {out.shape}, expected {tuple(expected.shape)}"
    assert out.dtype == np.float64, f"dtype: got {out.dtype}, expected float64"
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=rtol, atol=atol, err_msg="forward value")

    upstream = np.random.default_rng(seed).standard_normal(tuple(expected.shape))
    out.backward(upstream)
    expected.backward(torch.from_numpy(upstream))
    for i, (c, t, r) in enumerate(zip(ck_in, t_in, requires_grad)):
        if not r:
            assert c.grad is None, f"input {i} does not require grad but got one"
            continue
        want = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
        got = c.grad.data if c.grad is not None else np.zeros(c.shape)
        assert got.shape == want.shape, f"gradient of input {i}: shape {got.shape}, expected {want.shape}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")


def random_inputs(*shapes_: tuple[int, ...], seed: int = 0, positive: bool = False) -> list[ck.Tensor]:
    """float64 leaves with distinct random values (no ties, no kinks): for gradcheck."""
    rng = np.random.default_rng(seed)
    return [
        ck.tensor(rng.uniform(0.5, 2.0, s) if positive else rng.standard_normal(s), requires_grad=True)
        for s in shapes_
    ]
