"""lab10's references against what they stand for, on real gloo ranks: the data-parallel
gradient equals the single process's and DistributedDataParallel's, the ring equals
``dist.all_reduce`` for 2, 3 and 4 ranks within the 2(N-1)/N bound, and the two-stage step
equals the whole model's backward in one process."""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

from coursekit.distributed import launch
from coursekit.distributed.data_parallel import data_parallel_grads
from coursekit.distributed.model_parallel import two_stage_step
from coursekit.distributed.ring import ring_all_reduce
from coursekit.distributed.traffic import counting_sent_bytes

F = torch.nn.functional


def _model(seed: int = 0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(),
                               torch.nn.Linear(7, 3)).double()


def _batch(rows: int, seed: int = 1):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(rows, 5, generator=generator, dtype=torch.float64),
            torch.randint(0, 3, (rows,), generator=generator))


def _by_hand(x, y):
    return data_parallel_grads(_model(), x, y, F.cross_entropy)


def _by_ddp(x, y):
    from torch.nn.parallel import DistributedDataParallel

    rank, world_size = dist.get_rank(), dist.get_world_size()
    model = DistributedDataParallel(_model())
    F.cross_entropy(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank]).backward()
    return [p.grad for p in model.parameters()]


@pytest.mark.parametrize("world_size", [2, 3, 4])
def test_data_parallel_gradient_is_the_single_process_and_ddp_gradient(world_size):
    x, y = _batch(3 * world_size)
    single = _model()
    F.cross_entropy(single(x), y).backward()
    for grads in launch(_by_hand, world_size, x, y) + launch(_by_ddp, world_size, x, y):
        for got, parameter in zip(grads, single.parameters()):
            torch.testing.assert_close(got, parameter.grad, rtol=1e-12, atol=1e-14)


def _ring_against_all_reduce(shape):
    generator = torch.Generator().manual_seed(10 + dist.get_rank())
    tensor = torch.randn(shape, generator=generator, dtype=torch.float64)
    expected = tensor.clone()
    dist.all_reduce(expected)
    with counting_sent_bytes() as sent:
        ring_all_reduce(tensor)
    return (tensor - expected).abs().max().item(), sent[0]


@pytest.mark.parametrize("world_size", [2, 3, 4])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
def test_ring_equals_all_reduce_within_the_ring_bound(world_size, shape):
    numel = math.prod(shape)
    results = launch(_ring_against_all_reduce, world_size, shape)
    assert max(error for error, _ in results) < 1e-12
    sent = [count for _, count in results]
    assert max(sent) <= 2 * (world_size - 1) * math.ceil(numel / world_size) * 8
    assert sum(sent) == 2 * (world_size - 1) * numel * 8


def _two_stages(whole, x, y, cut):
    rank = dist.get_rank()
    stage = whole[:cut] if rank == 0 else whole[cut:]
    stage.zero_grad(set_to_none=True)
    loss = two_stage_step(stage, x if rank == 0 else y, (x.shape[0], whole[cut - 2].out_features),
                          F.mse_loss)
    return loss, [p.grad for p in stage.parameters()]


def test_two_stage_step_equals_the_whole_model_in_one_process():
    torch.manual_seed(4)
    whole = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5),
                                torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    x, y = torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 2, dtype=torch.float64)
    loss = F.mse_loss(whole(x), y)
    loss.backward()
    (none, grads_0), (loss_1, grads_1) = launch(_two_stages, 2, whole, x, y, 4)
    assert none is None and loss_1 == pytest.approx(loss.item(), rel=1e-12)
    for got, parameter in zip(grads_0 + grads_1, whole.parameters()):
        torch.testing.assert_close(got, parameter.grad, rtol=1e-12, atol=1e-14)
