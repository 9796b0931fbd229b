"""Realistic wrong answers for lab10_distributed: each must lose points in its checks cell."""

_DP_DOC = '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
'''

_RING_DOC = '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
'''

_TWO_STAGE_DOC = '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
'''

_RING_STEPS = '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
'''


def _ring(reduce_send, reduce_receive, gather_send, gather_receive, combine="chunks[receive].add_(incoming)",
          steps="world_size - 1", wire=""):
    """The solution's ring; ``wire``, a dtype, is what the chunks travel as instead of their own."""
    buffer_dtype, sent = (f", dtype={wire}", f".to({wire})") if wire else ("", "")
    return _RING_DOC + _RING_STEPS + f'''    for step in range({steps}):
        send, receive = {reduce_send}, {reduce_receive}
        incoming = torch.empty_like(chunks[receive]{buffer_dtype})
        request = dist.isend(chunks[send]{sent}, dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        {combine}
    for step in range({steps}):
        send, receive = {gather_send}, {gather_receive}
        incoming = torch.empty_like(chunks[receive]{buffer_dtype})
        request = dist.isend(chunks[send]{sent}, dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        chunks[receive].copy_(incoming)
'''


_RS = ("(rank - step) % world_size", "(rank - step - 1) % world_size")
_AG = ("(rank + 1 - step) % world_size", "(rank - step) % world_size")

_MIRRORED_DOC = '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
'''


def _mirrored(devices='["/cpu:0", "/cpu:1"]',
              loss="tf.nn.compute_average_loss(losses, global_batch_size=global_batch)",
              grad_reduce='"SUM"', loss_reduce='"SUM"',
              update="variable.assign_sub(lr * strategy.reduce({grad_reduce}, grad, axis=None))"):
    """The solution, with one piece replaced."""
    update = update.format(grad_reduce=grad_reduce)
    return _MIRRORED_DOC + f'''    strategy = tf.distribute.MirroredStrategy({devices})
    with strategy.scope():
        w, b = tf.Variable(weights[0]), tf.Variable(weights[1])
    global_batch = x.shape[0]

    def shard(context):
        half = global_batch // strategy.num_replicas_in_sync
        rows = slice(context.replica_id_in_sync_group * half,
                     (context.replica_id_in_sync_group + 1) * half)
        return tf.constant(x[rows]), tf.constant(y[rows])

    x_shards, y_shards = strategy.experimental_distribute_values_from_function(shard)

    def replica_step(x_shard, y_shard):
        with tf.GradientTape() as tape:
            losses = per_example_loss(y_shard, x_shard @ w + b)
            loss = {loss}
        return loss, tape.gradient(loss, [w, b])

    @tf.function
    def step(x_shards, y_shards):
        losses, grads = strategy.run(replica_step, args=(x_shards, y_shards))
        for variable, grad in zip([w, b], grads):
            {update}
        return strategy.reduce({loss_reduce}, losses, axis=None)

    loss = step(x_shards, y_shards)
    return [w.numpy(), b.numpy()], float(loss)
'''


MUTANTS = {
    "data_parallel": [
        ("sums the gradients without dividing by the world size", _DP_DOC + '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank])
    loss.backward()
    for parameter in model.parameters():
        if parameter.grad is not None:
            dist.all_reduce(parameter.grad)
    return [parameter.grad for parameter in model.parameters()]
'''),
        ("never communicates: each rank keeps its shard's gradient", _DP_DOC + '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank])
    loss.backward()
    return [parameter.grad for parameter in model.parameters()]
'''),
        ("every rank runs the whole batch (right gradient, no parallelism)", _DP_DOC + '''    world_size = dist.get_world_size()
    loss = loss_fn(model(x), y)
    loss.backward()
    for parameter in model.parameters():
        if parameter.grad is not None:
            dist.all_reduce(parameter.grad)
            parameter.grad /= world_size
    return [parameter.grad for parameter in model.parameters()]
'''),
        ("averages copies and returns them, leaving .grad unaveraged", _DP_DOC + '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank])
    loss.backward()
    averaged = []
    for parameter in model.parameters():
        if parameter.grad is None:
            averaged.append(None)
            continue
        grad = parameter.grad.clone()
        dist.all_reduce(grad)
        averaged.append(grad / world_size)
    return averaged
'''),
        ("crashes on a frozen parameter (grad None)", _DP_DOC + '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank])
    loss.backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
        parameter.grad /= world_size
    return [parameter.grad for parameter in model.parameters()]
'''),
        ("wraps the model in DistributedDataParallel (what the exercise rebuilds)", _DP_DOC + '''    from torch.nn.parallel import DistributedDataParallel
    rank, world_size = dist.get_rank(), dist.get_world_size()
    wrapped = DistributedDataParallel(model)
    loss = loss_fn(wrapped(x.chunk(world_size)[rank]), y.chunk(world_size)[rank])
    loss.backward()
    return [parameter.grad for parameter in model.parameters()]
'''),
        ("clears the gradients the model holds (zero_grad) before backward", _DP_DOC + '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    model.zero_grad(set_to_none=True)
    loss = loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank])
    loss.backward()
    for parameter in model.parameters():
        if parameter.grad is not None:
            dist.all_reduce(parameter.grad)
            parameter.grad /= world_size
    return [parameter.grad for parameter in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("calls dist.all_reduce (the collective the exercise rebuilds)", _RING_DOC + '''    dist.all_reduce(tensor)
'''),
        ("reduce-scatter only: no all-gather phase", _RING_DOC + _RING_STEPS + '''    for step in range(world_size - 1):
        send, receive = (rank - step) % world_size, (rank - step - 1) % world_size
        incoming = torch.empty_like(chunks[receive])
        request = dist.isend(chunks[send], dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        chunks[receive].add_(incoming)
'''),
        ("all-gather adds instead of overwriting", _ring(*_RS, *_AG).replace(
            "        chunks[receive].copy_(incoming)\n", "        chunks[receive].add_(incoming)\n")),
        ("one step too few in each phase", _ring(*_RS, *_AG, steps="world_size - 2")),
        ("the ring turned round: every rank sends to its left neighbour (indices mirrored, the "
         "sum still right)",
         _ring("(rank + step) % world_size", "(rank + step + 1) % world_size",
               "(rank - 1 + step) % world_size", "(rank + step) % world_size").replace(
             "right, left = (rank + 1) % world_size, (rank - 1) % world_size",
             "right, left = (rank - 1) % world_size, (rank + 1) % world_size")),
        ("chunks sent as float64 whatever the tensor's dtype: twice the bytes of a float32 tensor",
         _ring(*_RS, *_AG, wire="torch.float64")),
        ("all-gather starts from the wrong chunk", _ring(*_RS, "(rank - step) % world_size",
                                                        "(rank - step - 1) % world_size")),
        ("flattens with reshape(-1): a non-contiguous tensor is copied and left unsummed",
         _ring(*_RS, *_AG).replace("tensor.view(-1)", "tensor.reshape(-1)")),
        ("gathers everything on rank 0 and sends the sum back (not a ring)", _RING_DOC + '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        incoming = torch.empty_like(tensor)
        for source in range(1, world_size):
            dist.recv(incoming, src=source)
            tensor += incoming
        for destination in range(1, world_size):
            dist.send(tensor, dst=destination)
    else:
        dist.send(tensor, dst=0)
        dist.recv(tensor, src=0)
'''),
        ("works on a copy: the caller's tensor never changes", _RING_DOC + _RING_STEPS.replace(
            "tensor.view(-1)", "tensor.flatten().clone()") + '''    for step in range(world_size - 1):
        send, receive = (rank - step) % world_size, (rank - step - 1) % world_size
        incoming = torch.empty_like(chunks[receive])
        request = dist.isend(chunks[send], dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        chunks[receive].add_(incoming)
    for step in range(world_size - 1):
        send, receive = (rank + 1 - step) % world_size, (rank - step) % world_size
        incoming = torch.empty_like(chunks[receive])
        request = dist.isend(chunks[send], dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        chunks[receive].copy_(incoming)
'''),
    ],
    "two_stage": [
        ("rank 1 returns the loss tensor, detached, not loss.item()", _TWO_STAGE_DOC + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.detach()
'''),
        ("rank 0 returns its activation, not None", _TWO_STAGE_DOC + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return activation.detach()
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
        ("rank 0 ignores the received gradient: activation.sum().backward()", _TWO_STAGE_DOC + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.sum().backward()
        return None
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
        ("rank 1 forgets requires_grad_ on the received activation", _TWO_STAGE_DOC + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.recv(received, src=0)
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(torch.zeros(hidden_shape, dtype=received.dtype) if received.grad is None
              else received.grad, dst=0)
    return loss.item()
'''),
        ("rank 1 sums the loss instead of using loss_fn's mean", _TWO_STAGE_DOC + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch) * received.shape[0]
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
        ("rank 0 sends the input instead of its stage's activation", _TWO_STAGE_DOC + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(batch[:, :1].expand(-1, activation.shape[1]).contiguous(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
        ("rank 1 clears its stage's gradients (zero_grad) before backward", _TWO_STAGE_DOC + '''    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=next(stage.parameters()).dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    stage.zero_grad(set_to_none=True)
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
    ],
    "mirrored_step": [
        ("each replica averages over its own rows (tf.reduce_mean): the step doubles",
         _mirrored(loss="tf.reduce_mean(losses)")),
        ("each replica its own mean, gradients reduced with MEAN (right) but losses with SUM",
         _mirrored(loss="tf.nn.compute_average_loss(losses, global_batch_size=global_batch // 2)",
                   grad_reduce='"MEAN"')),
        ("per-example losses summed, never divided by the batch size",
         _mirrored(loss="tf.reduce_sum(losses)")),
        ("gradients reduced with MEAN instead of SUM: half the step",
         _mirrored(grad_reduce='"MEAN"')),
        ("losses reduced with MEAN instead of SUM: the loss halved",
         _mirrored(loss_reduce='"MEAN"')),
        ("one device only: MirroredStrategy(['/cpu:0']) takes the whole batch",
         _mirrored(devices='["/cpu:0"]')),
        ("w and b made outside strategy.scope(): plain variables on one device, not mirrored",
         _mirrored().replace("    with strategy.scope():\n        w, b = ", "    w, b = ")),
        ("the updated weights returned as TensorFlow tensors (read_value), not NumPy arrays",
         _mirrored().replace("return [w.numpy(), b.numpy()]",
                             "return [w.read_value(), b.read_value()]")),
        ("the update is computed but never applied to the variables",
         _mirrored(update="strategy.reduce({grad_reduce}, grad, axis=None)")),
        ("the update added instead of subtracted (gradient ascent)",
         _mirrored(update="variable.assign_add(lr * strategy.reduce({grad_reduce}, grad, axis=None))")),
    ],
}

ALTERNATIVES = {
    "data_parallel": [
        ("strided shards, one flat all-reduce of all gradients, torch.div", _DP_DOC + '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    rows = torch.arange(rank, x.shape[0], world_size)
    loss_fn(model(x[rows]), y[rows]).backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    flat = torch.div(flat, world_size)
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("irecv and blocking send in alternating order (even ranks send first)", _RING_DOC + '''    rank, world_size = dist.get_rank(), dist.get_world_size()
    flat = tensor.view(-1)
    bounds = [len(flat) * k // world_size for k in range(world_size + 1)]
    chunk = lambda k: flat[bounds[k % world_size]:bounds[k % world_size + 1]]

    def exchange(out, into):
        buffer = torch.zeros_like(into)
        if rank % 2 == 0:
            dist.send(out.clone(), (rank + 1) % world_size)
            dist.recv(buffer, (rank - 1) % world_size)
        else:
            dist.recv(buffer, (rank - 1) % world_size)
            dist.send(out.clone(), (rank + 1) % world_size)
        return buffer

    for s in range(world_size - 1):
        target = chunk(rank - s - 1)
        target += exchange(chunk(rank - s), target)
    for s in range(world_size - 1):
        target = chunk(rank - s)
        target[:] = exchange(chunk(rank - s + 1), target)
'''),
    ],
    "two_stage": [
        ("isend/irecv with waits, torch.autograd.backward", _TWO_STAGE_DOC + '''    if dist.get_rank() == 0:
        out = stage(batch)
        dist.isend(out.detach().clone(), 1).wait()
        grad_out = torch.zeros(out.shape, dtype=out.dtype)
        dist.irecv(grad_out, 1).wait()
        torch.autograd.backward(out, grad_out)
        return None
    h = torch.zeros(*hidden_shape, dtype=next(stage.parameters()).dtype, requires_grad=True)
    with torch.no_grad():
        dist.irecv(h, 0).wait()
    loss = loss_fn(stage(h), batch)
    loss.backward()
    dist.isend(h.grad, 0).wait()
    return float(loss)
'''),
    ],
    "mirrored_step": [
        ("eager strategy.run over a distributed tf.data batch, sum / n by hand, ReduceOp "
         "enum, assign of a new value", _MIRRORED_DOC + '''    strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0", "/cpu:1"])
    n = len(x)
    with strategy.scope():
        params = [tf.Variable(v) for v in weights]
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(n, drop_remainder=True)
    xs, ys = next(iter(strategy.experimental_distribute_dataset(data)))

    def replica(xb, yb):
        with tf.GradientTape() as tape:
            share = tf.reduce_sum(per_example_loss(yb, tf.matmul(xb, params[0]) + params[1])) / n
        return share, tape.gradient(share, params)

    shares, grads = strategy.run(replica, args=(xs, ys))
    for p, g in zip(params, grads):
        p.assign(p - lr * strategy.reduce(tf.distribute.ReduceOp.SUM, g, axis=None))
    total = strategy.reduce(tf.distribute.ReduceOp.SUM, shares, axis=None)
    return tuple(p.numpy() for p in params), total.numpy()
'''),
        ("replica-context all_reduce, variables that take the first replica's update",
         _MIRRORED_DOC + '''    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        params = [tf.Variable(v, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
                  for v in weights]
    n = len(x)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(n, drop_remainder=True)
    xs, ys = next(iter(strategy.experimental_distribute_dataset(data)))

    @tf.function
    def run(xs, ys):
        def replica(xb, yb):
            with tf.GradientTape() as tape:
                share = tf.reduce_sum(per_example_loss(yb, xb @ params[0] + params[1])) / n
            grads = tf.distribute.get_replica_context().all_reduce(
                "SUM", tape.gradient(share, params))
            for p, g in zip(params, grads):
                p.assign_sub(lr * g)
            return share

        return strategy.reduce("SUM", strategy.run(replica, args=(xs, ys)), axis=None)

    loss = run(xs, ys)
    return [p.numpy() for p in params], loss
'''),
    ],
}
