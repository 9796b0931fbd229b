"""Lab 10: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "data_parallel": [
        ("all-reduces and averages a clone of each gradient and returns the clones, so the .grad left on the parameters is this rank's own, unaveraged gradient", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    grads = []
    for p in model.parameters():
        if p.grad is None:
            grads.append(None)
            continue
        averaged = p.grad.clone()
        dist.all_reduce(averaged)
        averaged /= world_size
        grads.append(averaged)
    return grads
'''),
        ("every rank runs the model on the whole batch instead of its shard: the averaged gradient is right, but each rank's model sees all B rows (no data parallelism)", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    world_size = dist.get_world_size()
    loss = loss_fn(model(x), y)
    loss.backward()
    for p in model.parameters():
        if p.requires_grad and p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
        ("returns only the gradients of trainable parameters, so with a frozen bias the list is shorter than model.parameters() and every later entry is shifted", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    trainable = [p for p in model.parameters() if p.requires_grad]
    for p in trainable:
        dist.all_reduce(p.grad)
        p.grad.div_(world_size)
    return [p.grad for p in trainable]
'''),
    ],
    "ring_all_reduce": [
        ("all-gather phase rebinds the list entry (chunks[i] = buffer) instead of copying into the chunk, so the completed chunks never reach `tensor`: only the rank's own reduced chunk is right", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if world_size == 1:
        return tensor
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    chunks = list(torch.tensor_split(tensor.view(-1), world_size))
    for s in range(world_size - 1):
        send_index, recv_index = (rank - s) % world_size, (rank - s - 1) % world_size
        request = dist.isend(chunks[send_index], dst=right)
        buffer = torch.empty_like(chunks[recv_index])
        dist.recv(buffer, src=left)
        request.wait()
        chunks[recv_index] += buffer
    for s in range(world_size - 1):
        send_index, recv_index = (rank + 1 - s) % world_size, (rank - s) % world_size
        request = dist.isend(chunks[send_index], dst=right)
        buffer = torch.empty_like(chunks[recv_index])
        dist.recv(buffer, src=left)
        request.wait()
        chunks[recv_index] = buffer
    return tensor
'''),
        ("the ring runs the other way round: every rank sends to its LEFT neighbour and receives from the right (indices mirrored, so the sum is still right) instead of sending only to the right", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if world_size == 1:
        return tensor
    to_rank, from_rank = (rank - 1) % world_size, (rank + 1) % world_size
    chunks = torch.tensor_split(tensor.view(-1), world_size)
    for s in range(world_size - 1):
        send_index, recv_index = (rank + s) % world_size, (rank + s + 1) % world_size
        request = dist.isend(chunks[send_index], dst=to_rank)
        buffer = torch.empty_like(chunks[recv_index])
        dist.recv(buffer, src=from_rank)
        request.wait()
        chunks[recv_index].add_(buffer)
    for s in range(world_size - 1):
        send_index, recv_index = (rank - 1 + s) % world_size, (rank + s) % world_size
        request = dist.isend(chunks[send_index], dst=to_rank)
        buffer = torch.empty_like(chunks[recv_index])
        dist.recv(buffer, src=from_rank)
        request.wait()
        chunks[recv_index].copy_(buffer)
    return tensor
'''),
        ("the all-gather loop runs world_size steps instead of world_size - 1: the values are right (the extra round re-sends complete chunks) but every rank sends one chunk too many, beyond the 2(N-1) bound", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if world_size == 1:
        return tensor
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    chunks = torch.tensor_split(tensor.view(-1), world_size)

    def exchange(send_index, recv_index):
        request = dist.isend(chunks[send_index], dst=right)
        buffer = torch.empty_like(chunks[recv_index])
        dist.recv(buffer, src=left)
        request.wait()
        return buffer

    for s in range(world_size - 1):
        recv_index = (rank - s - 1) % world_size
        chunks[recv_index].add_(exchange((rank - s) % world_size, recv_index))
    for s in range(world_size):
        recv_index = (rank - s) % world_size
        chunks[recv_index].copy_(exchange((rank + 1 - s) % world_size, recv_index))
    return tensor
'''),
    ],
    "two_stage": [
        ("rank 1 returns the loss as a 0-dim tensor (loss.detach()) instead of a Python float", '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    rank = dist.get_rank()
    dtype = next(stage.parameters()).dtype
    if rank == 0:
        activation = stage(batch)
        dist.send(activation.detach().contiguous(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad.contiguous(), dst=0)
    return loss.detach()
'''),
        ("rank 1 also sends the loss back so that both ranks return it: rank 0 returns a float instead of None", '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    rank = dist.get_rank()
    dtype = next(stage.parameters()).dtype
    if rank == 0:
        activation = stage(batch)
        dist.send(activation.detach().contiguous(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        loss = torch.empty((), dtype=dtype)
        dist.recv(loss, src=1)
        return loss.item()
    received = torch.empty(hidden_shape, dtype=dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad.contiguous(), dst=0)
    dist.send(loss.detach().to(dtype).reshape(()), dst=0)
    return loss.item()
'''),
    ],
    "mirrored_step": [
        ("the gradients are combined with SUM but the loss with strategy.reduce('MEAN'), so the reported loss is half the batch's mean loss (the weights are right)", '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    global_batch = x.shape[0]
    half = global_batch // 2
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])

    def shard(context):
        i = context.replica_id_in_sync_group
        return tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half])

    shards = strategy.experimental_distribute_values_from_function(shard)

    def replica_step(rows):
        x_rows, y_rows = rows
        with tf.GradientTape() as tape:
            losses = per_example_loss(y_rows, tf.matmul(x_rows, w) + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=global_batch)
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def train_step(rows):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(rows,))
        loss = strategy.reduce("MEAN", loss, axis=None)
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = train_step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
        ("each replica averages its losses with tf.reduce_mean over its own B/2 rows instead of dividing by the global batch size, so the summed gradient (and loss) is twice the single-device one", '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    half = x.shape[0] // 2
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])

    def shard(context):
        i = context.replica_id_in_sync_group
        return tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half])

    shards = strategy.experimental_distribute_values_from_function(shard)

    def replica_step(rows):
        x_rows, y_rows = rows
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(per_example_loss(y_rows, tf.matmul(x_rows, w) + b))
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def train_step(rows):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(rows,))
        loss = strategy.reduce("SUM", loss, axis=None)
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = train_step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
    ],
}

RIGHT = {
    "data_parallel": [
        ("shards with torch.tensor_split, divides each gradient by N before an explicit ReduceOp.SUM all_reduce (the sum of g/N is the mean), walks named_parameters", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    x_part = torch.tensor_split(x, world_size)[rank]
    y_part = torch.tensor_split(y, world_size)[rank]
    output = model(x_part)
    loss = loss_fn(output, y_part)
    loss.backward()
    for _, parameter in model.named_parameters():
        if not parameter.requires_grad or parameter.grad is None:
            continue
        parameter.grad.div_(world_size)
        dist.all_reduce(parameter.grad, op=dist.ReduceOp.SUM)
    return [parameter.grad for parameter in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("one schedule of (send chunk, receive chunk, combine) triples for both phases, the receive posted first with irecv and the send blocking, then wait", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), n)
    right, left = (rank + 1) % n, (rank - 1) % n
    schedule = [((rank - s) % n, (rank - s - 1) % n, "add") for s in range(n - 1)]
    schedule += [((rank + 1 - s) % n, (rank - s) % n, "copy") for s in range(n - 1)]
    for send_index, recv_index, how in schedule:
        incoming = torch.empty_like(chunks[recv_index])
        pending = dist.irecv(incoming, src=left)
        dist.send(chunks[send_index], dst=right)
        pending.wait()
        if how == "add":
            chunks[recv_index].add_(incoming)
        else:
            chunks[recv_index].copy_(incoming)
    return tensor
'''),
    ],
    "two_stage": [
        ("non-blocking isend/irecv with explicit waits, torch.autograd.backward(tensors, grad_tensors) on rank 0, and a receive buffer made with torch.zeros", '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
        hidden = stage(batch)
        dist.isend(hidden.detach().contiguous(), dst=1).wait()
        upstream = torch.zeros_like(hidden)
        dist.irecv(upstream, src=1).wait()
        torch.autograd.backward([hidden], grad_tensors=[upstream])
        return None
    dtype = next(iter(stage.parameters())).dtype
    hidden = torch.zeros(tuple(hidden_shape), dtype=dtype)
    dist.irecv(hidden, src=0).wait()
    hidden.requires_grad_(True)
    loss = loss_fn(stage(hidden), batch)
    loss.backward()
    dist.isend(hidden.grad.contiguous(), dst=0).wait()
    return float(loss.item())
'''),
    ],
}
