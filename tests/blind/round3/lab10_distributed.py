"""Lab 10: answers written from the released notebook's text alone (blind corpus, round 3)."""

WRONG = {
    "data_parallel": [
        ("all-reduces a clone of each gradient and returns the averaged clones: the returned list is right, but the .grad left on the parameters is this rank's own, unaveraged shard gradient",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    averaged = []
    for p in model.parameters():
        if p.grad is None:
            averaged.append(None)
            continue
        g = p.grad.clone()           # keep the local gradient intact
        dist.all_reduce(g)
        averaged.append(g / world_size)
    return averaged
'''),
        ("returns only the trainable parameters' gradients ([p.grad for p in params if p.requires_grad]): with a frozen bias the list is shorter and every later entry is shifted against model.parameters()",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard = x.chunk(world_size)[rank]
    y_shard = y.chunk(world_size)[rank]
    loss = loss_fn(model(x_shard), y_shard)
    loss.backward()
    trainable = [p for p in model.parameters() if p.requires_grad]
    for p in trainable:
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return [p.grad for p in trainable]
'''),
        ("divides the shard loss by world_size before backward (as if summing) AND divides the all-reduced gradient by world_size: the gradient is world_size times too small",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard = x.chunk(world_size)[rank]
    y_shard = y.chunk(world_size)[rank]
    # this shard's share of the whole batch's mean loss
    loss = loss_fn(model(x_shard), y_shard) / world_size
    loss.backward()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("one receive buffer shaped like chunk 0 is allocated once and reused: right when the size divides by the number of ranks, but tensor_split's chunks differ by one otherwise and the receive/add fails",
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    flat = tensor.view(-1)
    chunks = torch.tensor_split(flat, world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    buffer = torch.empty_like(chunks[0])     # every chunk has this size
    for s in range(world_size - 1):
        request = dist.isend(chunks[(rank - s) % world_size], dst=right)
        dist.recv(buffer, src=left)
        request.wait()
        chunks[(rank - s - 1) % world_size].add_(buffer)
    for s in range(world_size - 1):
        request = dist.isend(chunks[(rank + 1 - s) % world_size], dst=right)
        dist.recv(buffer, src=left)
        request.wait()
        chunks[(rank - s) % world_size].copy_(buffer)
'''),
        ("sends every chunk as float32 to halve the traffic and adds it back into the tensor: a float64 tensor loses precision and half the bytes are sent",
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size

    def exchange(send_index, recv_index):
        outgoing = chunks[send_index].to(torch.float32)          # fewer bytes on the wire
        incoming = torch.empty(chunks[recv_index].shape, dtype=torch.float32)
        request = dist.isend(outgoing, dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        return incoming

    for s in range(world_size - 1):
        received = exchange((rank - s) % world_size, (rank - s - 1) % world_size)
        chunks[(rank - s - 1) % world_size].add_(received)
    for s in range(world_size - 1):
        received = exchange((rank + 1 - s) % world_size, (rank - s) % world_size)
        chunks[(rank - s) % world_size].copy_(received)
'''),
        ("a ring that passes WHOLE tensors along: every rank forwards what it received N-1 times and adds it up; right values and right on 2 ranks, but each rank sends N-1 tensors, not 2(N-1)/N",
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    passing = tensor.clone()
    total = tensor.clone()
    for _ in range(world_size - 1):
        incoming = torch.empty_like(tensor)
        request = dist.isend(passing, dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        total += incoming
        passing = incoming           # hand it on to the right next time
    tensor.copy_(total)
'''),
    ],
    "two_stage": [
        ("rank 1 allocates the receive buffer with torch.empty(hidden_shape), in the default float32, not in the dtype of its stage's parameters: a float64 model fails",
         '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
        ("the gradients are right, but rank 1 returns the loss as a detached 0-d tensor (loss.detach()) instead of a Python float",
         '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    rank = dist.get_rank()
    dtype = next(stage.parameters()).dtype
    if rank == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty(hidden_shape, dtype=dtype)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.detach()
'''),
    ],
    "mirrored_step": [
        ("each replica averages its own rows with tf.reduce_mean (divides by B/2, not by the global batch B): after the SUM the gradient, and the step, are twice the single-device ones",
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    w0, b0 = weights
    half = x.shape[0] // 2
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(w0)
        b = tf.Variable(b0)

    def rows(context):
        i = context.replica_id_in_sync_group
        return tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half])

    shards = strategy.experimental_distribute_values_from_function(rows)

    def replica_step(shard):
        xs, ys = shard
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(per_example_loss(ys, xs @ w + b))
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def distributed_step(shards):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(shards,))
        return (strategy.reduce("SUM", loss, axis=None),
                strategy.reduce("SUM", grad_w, axis=None),
                strategy.reduce("SUM", grad_b, axis=None))

    loss, grad_w, grad_b = distributed_step(shards)
    w.assign_sub(lr * grad_w)
    b.assign_sub(lr * grad_b)
    return [w.numpy(), b.numpy()], float(loss)
'''),
        ("losses divided by the global batch and gradients summed (the step is right), but the loss is combined with strategy.reduce('MEAN'): the reported loss is half the batch's mean loss",
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    w0, b0 = weights
    global_batch = x.shape[0]
    half = global_batch // 2
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(w0)
        b = tf.Variable(b0)

    def rows(context):
        i = context.replica_id_in_sync_group
        return tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half])

    shards = strategy.experimental_distribute_values_from_function(rows)

    def replica_step(shard):
        xs, ys = shard
        with tf.GradientTape() as tape:
            losses = per_example_loss(ys, xs @ w + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=global_batch)
        return (loss,) + tuple(tape.gradient(loss, [w, b]))

    @tf.function
    def distributed_step(shards):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(shards,))
        loss = strategy.reduce("MEAN", loss, axis=None)      # the loss of the step
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = distributed_step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
    ],
}

RIGHT = {
    "data_parallel": [
        ("a strided shard (rows rank, rank + N, ...: the text allows any equal split), and the averaging under torch.no_grad() with div_, skipping frozen parameters by requires_grad",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    output = model(x[rank::world_size])
    loss_fn(output, y[rank::world_size]).backward()
    with torch.no_grad():
        for p in model.parameters():
            if not p.requires_grad:
                continue
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad.div_(world_size)
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("the receive is posted first with dist.irecv, then a blocking dist.send, then wait(); one helper for both phases, the chunk indices from a table per phase",
         '''def _ring_exchange(chunk_out, chunk_in_like, right, left):
    incoming = torch.empty_like(chunk_in_like)
    request = dist.irecv(incoming, src=left)
    dist.send(chunk_out, dst=right)
    request.wait()
    return incoming


def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    if n == 1:
        return
    chunks = torch.tensor_split(tensor.view(-1), n)
    right, left = (rank + 1) % n, (rank - 1) % n
    # reduce-scatter: send (r - s), add into (r - s - 1)
    for s in range(n - 1):
        out_i, in_i = (rank - s) % n, (rank - s - 1) % n
        chunks[in_i].add_(_ring_exchange(chunks[out_i], chunks[in_i], right, left))
    # all-gather: send (r + 1 - s), overwrite (r - s)
    for s in range(n - 1):
        out_i, in_i = (rank + 1 - s) % n, (rank - s) % n
        chunks[in_i].copy_(_ring_exchange(chunks[out_i], chunks[in_i], right, left))
'''),
    ],
    "mirrored_step": [
        ("the batch goes through a tf.data.Dataset batched to B and strategy.experimental_distribute_dataset (B/2 rows per replica); gradients and loss reduced with tf.distribute.ReduceOp.SUM",
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    global_batch = int(x.shape[0])
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        variables = [tf.Variable(np.asarray(weights[0])), tf.Variable(np.asarray(weights[1]))]
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch)
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))

    def on_replica(xs, ys):
        with tf.GradientTape() as tape:
            prediction = tf.matmul(xs, variables[0]) + variables[1]
            loss = tf.nn.compute_average_loss(per_example_loss(ys, prediction),
                                              global_batch_size=global_batch)
        return loss, tape.gradient(loss, variables)

    @tf.function
    def step(xs, ys):
        loss, grads = strategy.run(on_replica, args=(xs, ys))
        total = strategy.reduce(tf.distribute.ReduceOp.SUM, loss, axis=None)
        for variable, grad in zip(variables, grads):
            variable.assign_sub(lr * strategy.reduce(tf.distribute.ReduceOp.SUM, grad, axis=None))
        return total

    loss = step(*batch)
    return [v.numpy() for v in variables], float(loss)
'''),
    ],
}
