"""Checks for lab10_distributed: data-parallel gradients, a ring all-reduce from point-to-point
messages, a model split into two stages over two processes, and one SGD step of
``tf.distribute.MirroredStrategy`` over two logical CPUs.

Every case runs the answer on real processes: :func:`coursekit.distributed.launch` forks the
ranks (in a grading kernel they inherit its monitor) and joins them in a gloo group on the
loopback. The functions named ``_..._rank`` below are what each rank runs: they build the
rank's inputs from arrays drawn in the program, call the answer, and hand back plain values.
The references are :mod:`coursekit.distributed`'s; tests/distributed proves them equal to
the single-process computation, to ``DistributedDataParallel`` and to ``dist.all_reduce``.

``lab10.mirrored_step`` runs in the kernel itself (no processes: TensorFlow's replicas are
threads over logical devices). Its reference is the same step on one device, in float64, with
the batch cut into the strategy's two shards; tests/labs/test_lab10_mirrored.py proves it
equal to the full-batch step and to a real ``MirroredStrategy`` run. It cannot itself be a
``MirroredStrategy``: TensorFlow fixes its devices when it first runs an op, and a grader
that already ran another lab's TensorFlow has one CPU device for good.
"""
from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..program import Case, EarlierStepFailed, check
from ..properties import edge, parameter, promise

TIMEOUT_S = 20.0   # per launch: rendezvous, every collective, and the whole run
# How long one send or recv may wait for its partner, in the point-to-point exercises: a
# deadlock (two blocking sends that wait for each other) is said after this, not after the
# whole run's time. A step of these tiny models takes milliseconds, even under the monitor.
P2P_TIMEOUT_S = 8.0
_COLLECTIVES = ("all_reduce", "reduce", "all_gather", "all_gather_into_tensor",
                "all_gather_object", "reduce_scatter", "reduce_scatter_tensor", "broadcast",
                "all_to_all", "all_to_all_single", "gather", "scatter")
_FORBID_COLLECTIVES = tuple(f"torch.distributed.{name}" for name in _COLLECTIVES) + (
    ".allreduce", ".allgather", ".reduce_scatter", ".allreduce_coalesced")

# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------

# Each reference is the library's, behind a function of this module: a grading kernel never
# runs the grader's references, and the monitor knows them by where they are defined.


def _reference_data_parallel():
    from coursekit.distributed.data_parallel import data_parallel_grads as library

    def data_parallel_grads(model, x, y, loss_fn):
        return library(model, x, y, loss_fn)

    return data_parallel_grads


def _reference_ring():
    from coursekit.distributed.ring import ring_all_reduce as library

    def ring_all_reduce(tensor):
        return library(tensor)

    return ring_all_reduce


def _reference_two_stage():
    from coursekit.distributed.model_parallel import two_stage_step as library

    def two_stage_step(stage, batch, hidden_shape, loss_fn):
        return library(stage, batch, hidden_shape, loss_fn)

    return two_stage_step


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _launch(rank_fn, world_size: int, *args: Any, op_timeout: float | None = None) -> list:
    from coursekit.distributed import launch

    return launch(rank_fn, world_size, *args, timeout=TIMEOUT_S, op_timeout=op_timeout)


_DEADLOCK = "deadlock"
_SENT_NONE = "sent None"


def _diagnosis(error: BaseException) -> str:
    """What a failed launch says about the answer, in the check's own words: a deadlock, a
    None sent where a tensor belongs, or another error (its first line)."""
    text = str(error)
    if "Timed out waiting" in text or "did not finish within" in text:
        return _DEADLOCK
    if "Expected parameter `tensor` of type torch.Tensor" in text:
        return _SENT_NONE
    return text.splitlines()[0][:300] if text else type(error).__name__


def _plain(value: Any) -> Any:
    """Tensors detached and copied (a rank's result is pickled to the launcher); containers
    kept; anything else as it is."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if type(value) in (list, tuple):
        return type(value)(_plain(v) for v in value)
    return value


def _grads(module) -> list:
    return [None if p.grad is None else p.grad.detach().clone() for p in module.parameters()]


def _layers(weights: list[tuple[np.ndarray, np.ndarray]], activation: str | None,
            after_last: bool = False):
    """``Linear`` layers with the given (weight, bias) pairs and ``activation`` (tanh, relu)
    between them, and after the last one too when ``after_last`` (a stage cut there); float64."""
    import torch

    layers = []
    for index, (weight, bias) in enumerate(weights):
        linear = torch.nn.Linear(weight.shape[1], weight.shape[0], dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(weight))
            linear.bias.copy_(torch.from_numpy(bias))
        layers.append(linear)
        if activation and (index < len(weights) - 1 or after_last):
            layers.append(torch.nn.Tanh() if activation == "tanh" else torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def _draw_linear(rng, sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(rng.standard_normal((n_out, n_in)) / math.sqrt(n_in), rng.standard_normal(n_out) * 0.1)
            for n_in, n_out in zip(sizes[:-1], sizes[1:])]


def _loss(name: str):
    import torch.nn.functional as F

    return F.cross_entropy if name == "cross_entropy" else F.mse_loss


def _targets(rng, name: str, rows: int, classes: int) -> np.ndarray:
    return (rng.integers(0, classes, rows) if name == "cross_entropy"
            else rng.standard_normal((rows, classes)))


class _Box:
    """What a launch handed back, for the cases after it: reading it before the launch
    succeeded says so."""

    def __init__(self, what: str):
        self.what, self.value = what, None

    def get(self) -> Any:
        if self.value is None:
            raise EarlierStepFailed(f"skipped: {self.what} did not finish (see the case above)")
        return self.value


# ---------------------------------------------------------------------------------------------
# lab10.data_parallel
# ---------------------------------------------------------------------------------------------


def _data_parallel_rank(impl, weights, x, y, loss_name, frozen, held=None):
    """One rank: the model from ``weights``, the full batch, the answer; what it left. With
    ``held``, the parameters hold these gradients before the call (an earlier micro-batch's)."""
    import torch

    model = _layers(weights, "tanh")
    if frozen:
        model[0].bias.requires_grad_(False)
    if held is not None:
        for parameter, grad in zip(model.parameters(), held):
            parameter.grad = torch.from_numpy(grad.copy())
    rows = []
    model.register_forward_pre_hook(lambda module, inputs: rows.append(int(inputs[0].shape[0])))
    returned = impl(model, torch.from_numpy(x), torch.from_numpy(y), _loss(loss_name))
    return {"returned": _plain(returned), "grads": _grads(model), "rows": sum(rows)}


@check("lab10.data_parallel", reference=_reference_data_parallel,
       forbid=("torch.nn.parallel.DistributedDataParallel", "coursekit.distributed.data_parallel"))
def data_parallel_program(impl: Any, rng):
    """data_parallel_grads: this rank's shard, its gradient, averaged over the ranks."""
    for trial, world_size in enumerate((2, int(rng.integers(3, 5)))):
        rows = world_size * int(rng.integers(2, 5))
        sizes = [int(rng.integers(2, 6)), int(rng.integers(3, 7)), int(rng.integers(2, 5))]
        weights = _draw_linear(rng, sizes)
        loss_name = "mse_loss" if trial == 0 else "cross_entropy"
        x = rng.standard_normal((rows, sizes[0]))
        y = _targets(rng, loss_name, rows, sizes[-1])
        frozen = trial == 0
        where = (f"{world_size} ranks, a batch of {rows} rows, {loss_name}"
                 + (", first bias frozen" if frozen else ""))
        box = _Box(f"the run on {world_size} ranks")

        def run(box=box, args=(world_size, impl, weights, x, y, loss_name, frozen)):
            ranks = _launch(_data_parallel_rank, *args)
            box.value = ranks
            return [rank["returned"] for rank in ranks]

        yield Case(f"{where}: the gradients each rank returns", run, weight=2, rtol=1e-9,
                   atol=1e-12,
                   hint="every rank must return the gradient of the whole batch's mean loss: "
                        "backward on this rank's shard, then dist.all_reduce each .grad (a sum) "
                        "and divide by the world size; a frozen parameter's grad stays None")
        yield Case(f"{where}: each parameter's .grad after the call, on every rank",
                   lambda box=box: [rank["grads"] for rank in box.get()], rtol=1e-9, atol=1e-12,
                   hint="average the .grad tensors in place (all_reduce writes into its "
                        "argument): the optimizer reads p.grad, not your return value")
        yield Case(f"{where}: rows of the batch each rank's model saw",
                   lambda box=box: [rank["rows"] for rank in box.get()],
                   hint="each rank runs the model on its own 1/world_size of the rows, "
                        "x.chunk(world_size)[rank]: data parallelism splits the batch, not the "
                        "work on each row")
    # Planted: a model handed over holding gradients (an earlier micro-batch's): backward()
    # adds to them. On one rank, where averaging changes nothing: on more, accepted answers
    # differ in what the average does to gradients held before (the loss divided by the world
    # size before backward leaves them N times over), which the text does not settle.
    sizes = [int(rng.integers(2, 6)), int(rng.integers(3, 7)), int(rng.integers(2, 5))]
    weights = _draw_linear(rng, sizes)
    rows = int(rng.integers(2, 6))
    x, y = rng.standard_normal((rows, sizes[0])), rng.standard_normal((rows, sizes[-1]))
    held = [g for w, b in _draw_linear(rng, sizes) for g in (w, b)]
    yield Case(f"1 rank, a batch of {rows} rows, mse_loss, the model holding gradients of an "
               f"earlier micro-batch: each parameter's .grad after the call (backward adds)",
               lambda: [rank["grads"] for rank in
                        _launch(_data_parallel_rank, 1, impl, weights, x, y, "mse_loss", False,
                                held)],
               rtol=1e-9, atol=1e-12,
               hint="step 2 is a plain backward(), which ADDS to the .grad the model holds "
                    "(gradients accumulated over micro-batches): do not clear them "
                    "(zero_grad, p.grad = None) before backward")


# ---------------------------------------------------------------------------------------------
# lab10.ring_all_reduce
# ---------------------------------------------------------------------------------------------


def _ring_rank(impl, arrays):
    """One rank: its own tensor of each shape, the answer on each, the bytes it sent and the
    ranks it sent them to."""
    import torch
    import torch.distributed as dist
    from torch._C._distributed_c10d import ProcessGroup

    from coursekit.distributed.traffic import counting_sent_bytes

    rank = dist.get_rank()
    results = []
    for stacked in arrays:
        tensor = torch.from_numpy(stacked[rank].copy())
        destinations: set[int] = set()
        with counting_sent_bytes() as sent:
            counted = ProcessGroup.send

            # Every point-to-point send (send, isend, batch_isend_irecv) goes through
            # ProcessGroup.send(tensors, dstRank, tag): the destination, a rank of the group
            # (of the default group: the global rank).
            def send(self, tensors, *args, **kwargs):
                where = args[0] if args else kwargs.get("dstRank", kwargs.get("dst"))
                destinations.add(int(where))
                return counted(self, tensors, *args, **kwargs)

            ProcessGroup.send = send
            try:
                impl(tensor)
            finally:
                ProcessGroup.send = counted
        results.append({"tensor": tensor.clone(), "bytes": sent[0],
                        "destinations": sorted(destinations)})
    return results


_SUMMED_OR_REFUSED = "summed in place, or refused with an error"


def _ring_transposed_rank(impl, stacked):
    """One rank: a transposed (non-contiguous) view of its own array handed to the answer.
    What matters is that the call never returns with the tensor left unsummed: summed in place
    (as dist.all_reduce does) or refused (tensor.view(-1) raises, as the text's way does) are
    both kept."""
    import torch
    import torch.distributed as dist

    tensor = torch.from_numpy(stacked[dist.get_rank()].copy()).t()
    try:
        impl(tensor)
    except NotImplementedError:   # the stub: the launcher says so
        raise
    except Exception:   # noqa: BLE001 — raising before any message leaves the peers alike
        refused = True
    else:
        refused = False
    # A rank that refused sent nothing: without this, it could leave while its peer is still
    # connecting to it, and the peer's error would fail the run.
    dist.barrier()
    if refused:
        return _SUMMED_OR_REFUSED
    total = torch.from_numpy(stacked.sum(axis=0)).t()
    if torch.allclose(tensor, total, rtol=1e-10, atol=1e-12):
        return _SUMMED_OR_REFUSED
    return ("returned normally with the tensor left as it was" if
            torch.equal(tensor, torch.from_numpy(stacked[dist.get_rank()]).t())
            else "returned normally with the tensor holding something else than the sum")


def _destinations(results: list[dict]) -> dict:
    """Whom each rank sent to, over all the calls of one run."""
    sent_to = [sorted({d for call in rank for d in call["destinations"]}) for rank in results]
    return {f"rank {r}": "sends to " + (", ".join(f"rank {d}" for d in to) or "nobody")
            for r, to in enumerate(sent_to)}


def _traffic(results: list[dict], world_size: int, numel: int, itemsize: int) -> dict:
    """The ring's cost, in units of the tensor's size: what all ranks send together, and
    whether the busiest rank stays within 2(N-1) chunks of ceil(n/N) elements."""
    sent = [r["bytes"] for r in results]
    bound = 2 * (world_size - 1) * math.ceil(numel / world_size) * itemsize
    return {"all ranks together, in tensor sizes": sum(sent) / (numel * itemsize),
            "busiest rank within 2(N-1) chunks of ceil(n/N)": max(sent) <= bound}


@check("lab10.ring_all_reduce", reference=_reference_ring,
       forbid=_FORBID_COLLECTIVES + ("coursekit.distributed.ring",))
def ring_all_reduce_program(impl: Any, rng):
    """ring_all_reduce: the sum over ranks, in place, with a ring's traffic."""
    big = int(rng.integers(3, 5))
    # Both dtypes on every seed: a ring that sends float64 chunks whatever the tensor's dtype
    # sends twice the bytes only on a float32 tensor.
    # ... and big + 1 elements: tensor.chunk(big) would make fewer than big pieces of them
    # (2 of 2 and 2 for 4 elements on 3 ranks), where tensor_split makes big.
    runs = [(2, np.float32, [(int(rng.integers(5, 12)),)]),
            (big, np.float64, [(int(rng.integers(2, 4)), big + int(rng.integers(1, 4))),
                               (big * int(rng.integers(2, 5)) + int(rng.integers(1, big)),),
                               (big + 1,)])]
    for world_size, dtype, shapes in runs:
        arrays = [rng.standard_normal((world_size, *shape)).astype(dtype) for shape in shapes]
        itemsize = np.dtype(dtype).itemsize
        box = _Box(f"the run on {world_size} ranks")

        def run(box=box, world_size=world_size, arrays=arrays):
            from coursekit.distributed import RankFailed

            try:
                box.value = _launch(_ring_rank, world_size, impl, arrays,
                                    op_timeout=P2P_TIMEOUT_S)
            except RankFailed as error:
                failure = _diagnosis(error)
                raise RuntimeError(
                    "the ranks waited for each other forever (a deadlock): every rank sent "
                    "with a blocking dist.send before any received" if failure == _DEADLOCK
                    else failure) from None
            return [rank[0]["tensor"] for rank in box.value]

        for index, shape in enumerate(shapes):
            numel = math.prod(shape)
            where = f"{world_size} ranks, shape {shape}, {np.dtype(dtype).name}"
            thunk = run if index == 0 else (
                lambda box=box, index=index: [rank[index]["tensor"] for rank in box.get()])
            yield Case(f"{where}: the tensor on every rank afterwards", thunk, weight=2,
                       rtol=1e-10 if itemsize == 8 else 1e-6,
                       atol=1e-12 if itemsize == 8 else 1e-7,
                       hint="every rank must end with the elementwise sum of all ranks' tensors, "
                            "written into the tensor it was given (flatten with view(-1), cut "
                            "into world_size chunks, N-1 reduce-scatter steps, then N-1 "
                            "all-gather steps); start each step's send with dist.isend and "
                            "wait for it after the recv: blocking sends on every rank at once "
                            "wait for each other forever")
            yield Case(f"{where}: bytes sent",
                       lambda box=box, index=index, w=world_size, n=numel, size=itemsize:
                       _traffic([rank[index] for rank in box.get()], w, n, size),
                       hint="in a ring each rank sends 2(N-1) chunks of about n/N elements, "
                            "one per step, only to its right neighbour, in the tensor's own "
                            "dtype; together the ranks send 2(N-1) tensor sizes")
        yield Case(f"{world_size} ranks, {np.dtype(dtype).name}: whom each rank sends to",
                   lambda box=box: _destinations(box.get()),
                   hint="the ring runs one way: rank r sends only to its right neighbour, "
                        "(r + 1) % world_size, and receives only from its left, "
                        "(r - 1) % world_size; sending to the left (r - 1) is the ring turned "
                        "round, which sums right but is not the exercise's ring")
    # Planted: a transposed tensor (a gradient of a transposed weight), not contiguous:
    # reshape(-1) or contiguous() copies it, and the ring would sum the copy.
    shape = (int(rng.integers(2, 4)), int(rng.integers(4, 7)))
    stacked = rng.standard_normal((2, *shape))

    def transposed(stacked=stacked):
        from coursekit.distributed import RankFailed

        try:
            return _launch(_ring_transposed_rank, 2, impl, stacked, op_timeout=P2P_TIMEOUT_S)
        except RankFailed as error:
            failure = _diagnosis(error)
            raise RuntimeError("the ranks waited for each other forever (a deadlock)"
                               if failure == _DEADLOCK else failure) from None

    yield Case(f"2 ranks, a transposed (non-contiguous) tensor of shape {shape[::-1]}: after "
               f"the call returns, it holds the sum", transposed,
               hint="the sum must land in the tensor given, in place: tensor.reshape(-1) (or "
                    "contiguous(), flatten()) copies a non-contiguous tensor, and the ring then "
                    "sums the copy while the tensor stays as it was; tensor.view(-1) shares its "
                    "memory (and raises where it cannot)")


# ---------------------------------------------------------------------------------------------
# lab10.two_stage
# ---------------------------------------------------------------------------------------------


def _two_stage_rank(impl, trials):
    """One rank of two: its stage of each trial's model, the answer, what it left."""
    import torch
    import torch.distributed as dist

    rank = dist.get_rank()
    results = []
    for trial in trials:
        stage = _layers(trial["stages"][rank], *trial["activations"][rank])
        if trial.get("held"):   # gradients an earlier micro-batch left in the stage
            for parameter, grad in zip(stage.parameters(), trial["held"][rank]):
                parameter.grad = torch.from_numpy(grad.copy())
        batch = torch.from_numpy(trial["x"] if rank == 0 else trial["y"])
        returned = impl(stage, batch, trial["hidden_shape"], _loss(trial["loss"]))
        results.append({"returned": _plain(returned), "grads": _grads(stage)})
    return results


@check("lab10.two_stage", reference=_reference_two_stage,
       forbid=("torch.distributed.rpc", "torch.distributed.pipelining",
               "torch.distributed.autograd", "coursekit.distributed.model_parallel")
       + _FORBID_COLLECTIVES)
def two_stage_program(impl: Any, rng):
    """two_stage_step: the model cut in two over ranks 0 and 1, gradients as in one process."""
    trials = []
    for trial in range(3):
        rows = int(rng.integers(2, 7))
        d_in, hidden = int(rng.integers(2, 6)), int(rng.integers(3, 7))
        if trial != 1:
            sizes_1, sizes_2 = [d_in, hidden], [hidden, int(rng.integers(1, 4))]
            activations, loss = (("tanh", True), (None, False)), "mse_loss"
        else:
            middle = int(rng.integers(2, 6))
            sizes_1, sizes_2 = [d_in, middle, hidden], [hidden, int(rng.integers(2, 5))]
            activations, loss = (("relu", True), (None, False)), "cross_entropy"
        trials.append({"stages": (_draw_linear(rng, sizes_1), _draw_linear(rng, sizes_2)),
                       "activations": activations, "loss": loss,
                       "x": rng.standard_normal((rows, d_in)),
                       "y": _targets(rng, loss, rows, sizes_2[-1]),
                       "hidden_shape": (rows, hidden)})
        if trial == 2:   # planted: both stages hold gradients of an earlier micro-batch
            trials[-1]["held"] = tuple([g for w, b in _draw_linear(rng, sizes) for g in (w, b)]
                                       for sizes in (sizes_1, sizes_2))
    box = _Box("the run on 2 ranks")
    outcome: dict = {}

    def run() -> bool:
        from coursekit.distributed import RankFailed

        try:
            box.value = _launch(_two_stage_rank, 2, impl, trials, op_timeout=P2P_TIMEOUT_S)
        except RankFailed as error:
            outcome["failure"] = _diagnosis(error)
            if outcome["failure"] not in (_DEADLOCK, _SENT_NONE):
                raise RuntimeError(outcome["failure"]) from None   # its first line, no trace
        return outcome.get("failure") != _DEADLOCK

    def sends_a_tensor() -> bool:
        if (not outcome and box.value is None) or outcome.get("failure") == _DEADLOCK:
            raise EarlierStepFailed("skipped: the run on 2 ranks did not get that far")
        return outcome.get("failure") != _SENT_NONE

    # Two mistakes stop the run itself; each is its own case, so the message names it.
    yield Case("both ranks finish: neither waits forever for the other", run, weight=0.5,
               hint="a blocking dist.send waits until the other rank receives, and dist.recv "
                    "until it sends: if both ranks send first (or both receive first), each "
                    "waits for the other forever, a deadlock. Rank 0 sends the activation, "
                    "then receives the gradient; rank 1 receives the activation, then sends "
                    "the gradient")
    yield Case("rank 1 sends a tensor back, not None",
               sends_a_tensor, weight=0.5,
               hint="the received activation is a leaf that does not require grad, so "
                    "loss.backward() leaves received.grad None: call received.requires_grad_() "
                    "before running rank 1's stage on it, then send received.grad")
    yield Case("rank 0 returns None", lambda: [r["returned"] for r in box.get()[0]], weight=0.5,
               hint="rank 0 computes no loss: it returns None, and only rank 1 returns "
                    "loss.item()")
    yield Case("rank 1 returns the loss as a Python float",
               # By type, not by the type's name: a class of the answer's may call itself float.
               lambda: [isinstance(r["returned"], float) for r in box.get()[1]], weight=0.5,
               hint="return loss.item(), a Python float: not a tensor (detached or not), a "
                    "NumPy scalar or another number type")
    held_hint = ("; backward ADDS to the .grad a stage already holds (gradients of earlier "
                 "micro-batches), as it would in one process: do not clear them (zero_grad) "
                 "before backward")
    for index, trial in enumerate(trials):
        where = (f"trial {index + 1} ({trial['loss']}, a batch of {trial['x'].shape[0]}, "
                 f"activation {trial['hidden_shape']}"
                 + (", both stages holding gradients of an earlier micro-batch)"
                    if trial.get("held") else ")"))
        extra = held_hint if trial.get("held") else ""
        yield Case(f"{where}: the loss rank 1 returns",
                   lambda index=index: box.get()[1][index]["returned"],
                   rtol=1e-9, atol=1e-12,
                   hint="rank 1 receives the activation into a tensor of hidden_shape, runs its "
                        "stage and the loss, and returns loss.item()")
        yield Case(f"{where}: gradients of the first stage, on rank 0",
                   lambda index=index: box.get()[0][index]["grads"], weight=2, rtol=1e-9,
                   atol=1e-12,
                   hint="rank 0's gradients come from the gradient rank 1 sends back: rank 1 "
                        "must send received.grad (the received activation marked with "
                        "requires_grad_()), and rank 0 continues backward with "
                        "activation.backward(gradient)" + extra)
        yield Case(f"{where}: gradients of the second stage, on rank 1",
                   lambda index=index: box.get()[1][index]["grads"], rtol=1e-9, atol=1e-12,
                   hint="rank 1's stage must run on the received activation, with the loss "
                        "loss_fn(output, y) and loss.backward()" + extra)


# ---------------------------------------------------------------------------------------------
# lab10.mirrored_step
# ---------------------------------------------------------------------------------------------

REPLICAS = 2  # the exercise's MirroredStrategy(["/cpu:0", "/cpu:1"])
# The weights' shapes are the same in every trial and every seed: TensorFlow 2.21 numbers the
# collectives of each new MirroredStrategy from the same start, and a replica-context
# all_reduce then fails ("Shape mismatch in the collective instance") once an earlier
# strategy of the kernel reduced tensors of another shape. The batch size varies.
D_IN, D_OUT = 4, 2


def _one_device_step(weights, x, y, lr, per_example_loss):
    """One SGD step of ``x @ w + b`` as MirroredStrategy computes it, on one device: each of
    the two shards' per-example losses summed and divided by the GLOBAL batch size, the
    shards' gradients summed (the all-reduce), the update applied once. Float64."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")   # as lab07: no C++ INFO lines when a
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # grader imports it here first
    import tensorflow as tf

    batch = x.shape[0]
    variables = [tf.Variable(np.asarray(w, dtype=np.float64)) for w in weights]
    losses, grads = [], [tf.zeros_like(v) for v in variables]
    for x_shard, y_shard in zip(np.array_split(x, REPLICAS), np.array_split(y, REPLICAS)):
        with tf.GradientTape() as tape:
            prediction = tf.constant(x_shard) @ variables[0] + variables[1]
            loss = tf.reduce_sum(per_example_loss(tf.constant(y_shard), prediction)) / batch
        losses.append(loss)
        grads = [total + g for total, g in zip(grads, tape.gradient(loss, variables))]
    for variable, grad in zip(variables, grads):
        variable.assign_sub(lr * grad)
    return [v.numpy() for v in variables], float(tf.add_n(losses))


def _reference_mirrored():
    def mirrored_step(weights, x, y, lr, per_example_loss):
        return _one_device_step(weights, x, y, lr, per_example_loss)

    return mirrored_step


def _recording_loss(rows: list, devices: list | None = None):
    """The per-example squared error, summed over the outputs; it notes the rows of every
    call (the static size: a replica's shard is known when strategy.run calls it), and the
    device the prediction was computed on (a replica's, under a strategy) in ``devices``."""
    def per_example_loss(y_true, y_pred):
        import tensorflow as tf

        size = y_pred.shape[0] if getattr(y_pred, "shape", None) is not None else None
        rows.append(None if size is None else int(size))
        if devices is not None:
            devices.append(getattr(y_pred, "device", None))
        return tf.reduce_sum(tf.square(y_pred - tf.cast(y_true, y_pred.dtype)), axis=-1)

    return per_example_loss


def _device_key(name: Any) -> Any:
    """(type, index) of a TensorFlow device name; None when it names none."""
    if not name:
        return None
    import tensorflow as tf

    spec = tf.DeviceSpec.from_string(str(name))
    return (spec.device_type, spec.device_index or 0) if spec.device_type else None


def _copies_where_replicas_run(made: list, used: list, count: int) -> bool:
    """Whether every device a replica computed on holds its own copy of each of the ``count``
    variables: a mirrored variable is made once per device (``made``: the devices of every
    variable made), a plain one once, on one device. Devices not known say nothing."""
    held = [_device_key(d) for d in made]
    return all(held.count(where) >= count for where in {_device_key(d) for d in used} - {None})


def _array_kinds(result: Any) -> Any:
    """The module each returned weight's type comes from: ``numpy`` for NumPy arrays."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return result
    weights = result[0]
    if not isinstance(weights, (tuple, list)):
        return type(weights).__module__.split(".")[0]
    return [type(w).__module__.split(".")[0] for w in weights]


def _weights_and_loss(result: Any) -> Any:
    """``(weights, loss)`` as plain values: NumPy arrays (a tf.Variable or tensor converted)
    and a float; anything else as it came."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return result
    weights, loss = result
    if isinstance(weights, (tuple, list)):
        weights = [np.asarray(w.numpy() if hasattr(w, "numpy") else w) for w in weights]
    if hasattr(loss, "numpy"):
        loss = loss.numpy()
    try:
        loss = float(loss)
    except (TypeError, ValueError):
        pass
    return weights, loss


@check("lab10.mirrored_step", reference=_reference_mirrored)
def mirrored_step_program(impl: Any, rng):
    """mirrored_step: one SGD step over two replicas equals the one-device full-batch step."""
    for trial in range(2):
        rows = REPLICAS * int(rng.integers(2, 6))
        d_in, d_out = D_IN, D_OUT
        weights = [rng.standard_normal((d_in, d_out)) / math.sqrt(d_in),
                   rng.standard_normal(d_out) * 0.1]
        x = rng.standard_normal((rows, d_in))
        y = rng.standard_normal((rows, d_out))
        lr = float(rng.uniform(0.05, 0.3))
        where = f"trial {trial + 1} (a batch of {rows}, {d_in} inputs, {d_out} outputs, lr {lr:.3f})"
        seen: list = []
        box, kinds = _Box(f"the step of {where}"), _Box(f"the step of {where}")
        placement = _Box(f"the step of {where}")

        def run(box=box, kinds=kinds, placement=placement, seen=seen, args=(weights, x, y, lr)):
            import tensorflow as tf

            made, used = [], []

            def note(next_creator, **kwargs):   # sees each copy a strategy makes, per device
                variable = next_creator(**kwargs)
                made.append(getattr(variable, "device", None))
                return variable

            with tf.variable_creator_scope(note):
                result = impl(*args, _recording_loss(seen, used))
            kinds.value = _array_kinds(result)
            placement.value = _copies_where_replicas_run(made, used, len(args[0]))
            box.value = _weights_and_loss(result)
            return box.value[0] if isinstance(box.value, tuple) else box.value

        yield Case(f"{where}: the updated weights [w, b]", run, weight=2, rtol=1e-9, atol=1e-12,
                   hint="the step must equal one device's SGD step on the whole batch: on each "
                        "replica, sum the per-example losses and divide by the GLOBAL batch "
                        "size (tf.nn.compute_average_loss), then strategy.reduce the gradients "
                        "with SUM and apply w - lr * grad once; a per-replica mean doubles the "
                        "gradient on two replicas")
        yield Case(f"{where}: the loss", lambda box=box: box.get()[1], rtol=1e-9, atol=1e-12,
                   hint="each replica's loss is its share of the global mean: strategy.reduce "
                        "them with SUM (MEAN would halve it)")
        yield Case(f"{where}: rows each call of per_example_loss saw",
                   lambda box=box, seen=seen: (box.get(), sorted(seen, key=str))[1],
                   hint="build the strategy over two devices, "
                        "tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1']), and let "
                        "strategy.run call per_example_loss on each replica's half of the batch")
        yield Case(f"{where}: the weights come back as NumPy arrays",
                   lambda kinds=kinds: kinds.get(), weight=0.5,
                   hint="return [w.numpy(), b.numpy()]: NumPy arrays, not TensorFlow tensors "
                        "or variables (w.read_value() and tf.convert_to_tensor give tensors)")
        yield Case(f"{where}: every device a replica runs on holds its own copy of w and b",
                   lambda placement=placement: placement.get(), weight=0.5,
                   hint="create w and b INSIDE `with strategy.scope():` so that they are "
                        "mirrored, one copy per device; made outside it they are plain "
                        "variables on one device, which the other replica reads across devices")


# ---------------------------------------------------------------------------------------------
# property tables (see coursekit.grading.properties)
# ---------------------------------------------------------------------------------------------

PROPERTIES = {
    "lab10.data_parallel": (
        parameter("model", "each parameter's .grad after the call, on every rank"),
        parameter("x", "rows of the batch each rank's model saw"),
        parameter("y", "the gradients each rank returns"),
        parameter("loss_fn", "cross_entropy: the gradients each rank returns"),
        promise("rank r takes part r of the rows, split into equal parts",
                "rows of the batch each rank's model saw"),
        promise("gradients all-reduced and divided by world_size",
                "the gradients each rank returns"),
        promise("the averaged gradients left in each parameter's .grad",
                "each parameter's .grad after the call, on every rank"),
        promise("DistributedDataParallel is not used",
                forbidden="torch.nn.parallel.DistributedDataParallel"),
        edge("a frozen parameter is skipped", "first bias frozen"),
        edge("more than two ranks", "4 ranks"),
        promise("backward() adds to gradients the model already holds (micro-batches)",
                "the model holding gradients of an earlier micro-batch"),
        edge("a group of one rank", "1 rank, a batch of"),
    ),
    "lab10.ring_all_reduce": (
        parameter("tensor", "the tensor on every rank afterwards"),
        promise("the elementwise sum over all ranks, in place",
                "the tensor on every rank afterwards"),
        promise("2(N-1) chunks per rank", "bytes sent"),
        promise("sent only to the right neighbour, (rank + 1) mod N", "whom each rank sends to"),
        promise("chunks sent in the tensor's own dtype", "float32: bytes sent"),
        promise("no collective", forbidden="torch.distributed.all_reduce"),
        edge("a size that does not divide by the number of ranks", "shape (13,)"),
        edge("a tensor of two dimensions", "shape (2, 7)"),
        edge("N + 1 elements on N ranks: N pieces, where tensor.chunk makes fewer",
             "4 ranks, shape (5,)"),
        edge("a non-contiguous tensor: never left unsummed (view(-1) raises, reshape copies)",
             "a transposed (non-contiguous) tensor"),
    ),
    "lab10.two_stage": (
        parameter("stage", "gradients of the first stage, on rank 0"),
        parameter("batch", "the loss rank 1 returns"),
        parameter("hidden_shape", "both ranks finish"),
        parameter("loss_fn", "cross_entropy, a batch of"),
        promise("each stage's .grad as in one process (the gradient sent back to rank 0)",
                "gradients of the first stage, on rank 0"),
        promise("rank 1's stage runs on the received activation",
                "gradients of the second stage, on rank 1"),
        promise("rank 1 returns the loss's value", "the loss rank 1 returns"),
        promise("rank 1 returns a Python float", "rank 1 returns the loss as a Python float"),
        promise("rank 0 returns None", "rank 0 returns None"),
        promise("rank 1 sends the activation's gradient back", "rank 1 sends a tensor back"),
        promise("torch.distributed.rpc is not used", forbidden="torch.distributed.rpc"),
        promise("the pipelining package is not used", forbidden="torch.distributed.pipelining"),
        edge("a send and a receive that could wait for each other forever",
             "neither waits forever for the other"),
        promise("backward adds to gradients a stage already holds, as in one process",
                "holding gradients of an earlier micro-batch): gradients of the second stage"),
    ),
    "lab10.mirrored_step": (
        parameter("weights", "the updated weights [w, b]"),
        parameter("x", "rows each call of per_example_loss saw"),
        parameter("y", "the loss"),
        parameter("lr", "lr "),
        parameter("per_example_loss", "rows each call of per_example_loss saw"),
        promise("one SGD step, the loss divided by the global batch size",
                "the updated weights [w, b]"),
        promise("the loss as a float, the replicas' shares summed", "the loss"),
        promise("each replica gets half of the rows", "rows each call of per_example_loss saw"),
        promise("w and b made inside strategy.scope(): mirrored, one copy per device",
                "holds its own copy of w and b"),
        promise("the updated weights as NumPy arrays", "the weights come back as NumPy arrays"),
    ),
}
