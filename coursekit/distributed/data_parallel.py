"""Data parallelism by hand: every rank holds the whole model and 1/N of the batch.

Each rank computes the gradient of its own shard's mean loss; the all-reduce sums those
gradients over the ranks and the division by N turns the sum into their mean. With shards
of equal size, the mean of the shards' mean gradients is the gradient of the whole batch's
mean loss, which is what one process would compute, and what ``DistributedDataParallel``
hands back after its own all-reduce.
"""
from __future__ import annotations

from typing import Any, Callable


def average_gradients(model: Any) -> None:
    """All-reduce every parameter's ``.grad`` (sum), then divide by the world size, in place.
    Parameters without a gradient (frozen ones) are skipped."""
    import torch.distributed as dist

    world_size = dist.get_world_size()
    for parameter in model.parameters():
        if parameter.grad is not None:
            dist.all_reduce(parameter.grad, op=dist.ReduceOp.SUM)
            parameter.grad /= world_size


def data_parallel_grads(model: Any, x: Any, y: Any, loss_fn: Callable[[Any, Any], Any]) -> list:
    """One data-parallel backward pass on this rank: its shard of ``(x, y)`` (rows split in
    ``world_size`` equal parts, this rank's part), the shard's loss, backward, gradients
    averaged over the ranks. Returns every parameter's ``.grad`` (None where frozen)."""
    import torch.distributed as dist

    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard = x.chunk(world_size)[rank]
    y_shard = y.chunk(world_size)[rank]
    loss = loss_fn(model(x_shard), y_shard)
    loss.backward()
    average_gradients(model)
    return [parameter.grad for parameter in model.parameters()]
