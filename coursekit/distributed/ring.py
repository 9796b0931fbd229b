"""Ring all-reduce from point-to-point messages: the algorithm of Horovod and NCCL.

The N ranks form a ring: rank r sends to r + 1 and receives from r - 1 (mod N). The tensor
is cut into N chunks. Two phases of N - 1 steps each:

1. *reduce-scatter*: at step s rank r sends chunk (r - s) mod N and adds the chunk it
   receives, (r - s - 1) mod N, to its own. After N - 1 steps rank r holds the complete sum
   of chunk (r + 1) mod N;
2. *all-gather*: the complete chunks travel once more around the ring, each step
   overwriting the received chunk, until every rank holds every summed chunk.

Each rank sends 2 (N - 1) chunks of about n / N elements: 2 (N - 1) / N times the tensor,
whatever N is. That is the least any all-reduce can send per rank, and why the ring scales:
the time is bounded by each link's bandwidth, not by one busy root.
"""
from __future__ import annotations

from typing import Any


def ring_all_reduce(tensor: Any) -> None:
    """Sum ``tensor`` over all ranks, in place, with ``dist.isend`` / ``dist.recv`` only."""
    import torch
    import torch.distributed as dist

    rank, world_size = dist.get_rank(), dist.get_world_size()
    if world_size == 1:
        return
    flat = tensor.view(-1)  # the same memory: writes into chunks land in ``tensor``
    chunks = list(torch.tensor_split(flat, world_size))
    right, left = (rank + 1) % world_size, (rank - 1) % world_size

    def exchange(send_index: int, receive_index: int) -> Any:
        incoming = torch.empty_like(chunks[receive_index])
        request = dist.isend(chunks[send_index].contiguous(), dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        return incoming

    for step in range(world_size - 1):  # reduce-scatter
        send, receive = (rank - step) % world_size, (rank - step - 1) % world_size
        chunks[receive] += exchange(send, receive)
    for step in range(world_size - 1):  # all-gather
        send, receive = (rank + 1 - step) % world_size, (rank - step) % world_size
        chunks[receive].copy_(exchange(send, receive))
