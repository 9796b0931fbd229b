"""Count the bytes a rank sends: every point-to-point send of torch.distributed
(``send``, ``isend``, ``batch_isend_irecv``) goes through ``ProcessGroup.send``."""
from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def counting_sent_bytes() -> Iterator[list[int]]:
    """Within the block, ``counter[0]`` grows by the size in bytes of every tensor this
    process sends. Meant for a rank's own process (it patches ``ProcessGroup.send``)."""
    from torch._C._distributed_c10d import ProcessGroup

    counter = [0]
    original = ProcessGroup.send

    def send(self, tensors, *args, **kwargs):
        counter[0] += sum(t.numel() * t.element_size() for t in tensors)
        return original(self, tensors, *args, **kwargs)

    ProcessGroup.send = send
    try:
        yield counter
    finally:
        ProcessGroup.send = original
