"""Model parallelism by hand: a model cut into two stages, one per rank.

Rank 0 holds the first stage and the input, rank 1 the second stage and the targets. The
forward pass sends the activation at the cut from rank 0 to rank 1; the backward pass sends
the loss's gradient with respect to that activation back from rank 1 to rank 0, which
continues backpropagation through its stage with ``activation.backward(gradient)``. Each
rank ends with the gradients of its own parameters, equal to those of the whole model run
in one process.
"""
from __future__ import annotations

from typing import Any, Callable


def two_stage_step(stage: Any, batch: Any, hidden_shape: tuple[int, ...],
                   loss_fn: Callable[[Any, Any], Any]) -> float | None:
    """One forward and backward pass through a model split over ranks 0 and 1.

    Args:
        stage: this rank's part of the model.
        batch: the input ``x`` on rank 0, the targets ``y`` on rank 1.
        hidden_shape: the shape of the activation that rank 0 sends to rank 1.
        loss_fn: ``loss_fn(output, y)``, on rank 1.

    Returns:
        the loss as a float on rank 1, None on rank 0.
    """
    import torch
    import torch.distributed as dist

    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    parameter = next(stage.parameters())
    received = torch.empty(hidden_shape, dtype=parameter.dtype, device=parameter.device)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
