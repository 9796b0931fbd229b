"""Lab 10: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    "data_parallel": [
        ('Averages clones of the gradients and returns them, but never writes the average back: the returned list is right, while the .grad left on the parameters is still this rank\'s shard gradient.',
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank])
    loss.backward()
    averaged = []
    for p in model.parameters():
        if p.grad is None:              # frozen parameter
            averaged.append(None)
            continue
        g = p.grad.clone()
        dist.all_reduce(g)
        averaged.append(g / world_size)
    return averaged
'''),
        ('All-reduces a temporary: dist.all_reduce(p.grad / world_size) sums the quotient in a fresh tensor and throws it away, so p.grad (and the returned list) keep the unaveraged shard gradient.',
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    for p in model.parameters():
        if p.requires_grad:
            dist.all_reduce(p.grad / world_size)
    return [p.grad for p in model.parameters()]
'''),
        ('Runs the model on the whole batch and slices the outputs to this rank\'s rows: the averaged gradient is the same, but every rank\'s model sees all B rows, so nothing of the work is split.',
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    rows = torch.arange(len(x)).chunk(world_size)[rank]
    output = model(x)[rows]
    loss_fn(output, y[rows]).backward()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad.div_(world_size)
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ('Cuts with flat.chunk(world_size) instead of torch.tensor_split: chunk picks ceil(n/N) per piece and may return fewer than N chunks (5 elements on 4 ranks give 3), so the N+1-element case fails with an IndexError.',
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    chunks = tensor.view(-1).chunk(world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    for step in range(world_size - 1):
        send_chunk = chunks[(rank - step) % world_size]
        mine = chunks[(rank - step - 1) % world_size]
        request = dist.isend(send_chunk, dst=right)
        incoming = torch.empty_like(mine)
        dist.recv(incoming, src=left)
        request.wait()
        mine += incoming
    for step in range(world_size - 1):
        send_chunk = chunks[(rank + 1 - step) % world_size]
        mine = chunks[(rank - step) % world_size]
        request = dist.isend(send_chunk, dst=right)
        incoming = torch.empty_like(mine)
        dist.recv(incoming, src=left)
        request.wait()
        mine.copy_(incoming)
'''),
        ('Sends every chunk as float64 "so the partial sums lose nothing", then casts back: the result is right, but a float32 tensor puts twice the bytes on the wire, breaking "send chunks in the tensor\'s own dtype" and the 2(N-1)/N traffic.',
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size

    def exchange(send_index, recv_index):
        request = dist.isend(chunks[send_index].double(), dst=right)
        incoming = torch.empty_like(chunks[recv_index], dtype=torch.float64)
        dist.recv(incoming, src=left)
        request.wait()
        return incoming.to(tensor.dtype)

    for step in range(world_size - 1):
        recv_index = (rank - step - 1) % world_size
        chunks[recv_index].add_(exchange((rank - step) % world_size, recv_index))
    for step in range(world_size - 1):
        recv_index = (rank - step) % world_size
        chunks[recv_index].copy_(exchange((rank + 1 - step) % world_size, recv_index))
'''),
        ('Adds with chunks[i] = chunks[i] + incoming, which rebinds the list entry to a new tensor instead of writing into the view; the sum is returned with torch.cat, but `tensor` itself is not the sum afterwards (not in place).',
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    chunks = list(torch.tensor_split(tensor.view(-1), world_size))
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    for step in range(world_size - 1):
        send_index, recv_index = (rank - step) % world_size, (rank - step - 1) % world_size
        request = dist.isend(chunks[send_index], dst=right)
        incoming = torch.empty_like(chunks[recv_index])
        dist.recv(incoming, src=left)
        request.wait()
        chunks[recv_index] = chunks[recv_index] + incoming
    for step in range(world_size - 1):
        send_index, recv_index = (rank + 1 - step) % world_size, (rank - step) % world_size
        request = dist.isend(chunks[send_index], dst=right)
        incoming = torch.empty_like(chunks[recv_index])
        dist.recv(incoming, src=left)
        request.wait()
        chunks[recv_index] = incoming
    return torch.cat(chunks).view_as(tensor)
'''),
    ],
    "two_stage": [
        ('Sends the activation as float32 "to halve the traffic" and rank 1 receives it into a float32 buffer, converting to the stage\'s dtype afterwards: runs, but a float64 model loses half its digits at the cut, against "in the dtype of its stage\'s parameters".',
         '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach().float(), dst=1)       # half the bytes on the wire
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    dtype = next(stage.parameters()).dtype
    wire = torch.empty(hidden_shape, dtype=torch.float32)
    dist.recv(wire, src=0)
    received = wire.to(dtype).requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
        ('Rank 1 divides the activation\'s gradient by the batch size before sending it ("the loss is a mean over the rows"), though the mean is already inside loss.backward(): the first stage\'s gradients come out B times too small.',
         '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    rank = dist.get_rank()
    if rank == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    dtype = next(stage.parameters()).dtype
    received = torch.empty(hidden_shape, dtype=dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad / hidden_shape[0], dst=0)   # average over the batch rows
    return loss.item()
'''),
    ],
    "mirrored_step": [
        ('Combines the gradients with "SUM" but the loss with "MEAN" ("the loss to report is the replicas\' average"): the step is right, the returned loss is half the batch\'s mean loss.',
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    global_batch = x.shape[0]
    half = global_batch // 2
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])

    def rows(context):
        i = context.replica_id_in_sync_group
        return tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half])

    shards = strategy.experimental_distribute_values_from_function(rows)

    def replica_step(shard):
        xs, ys = shard
        with tf.GradientTape() as tape:
            losses = per_example_loss(ys, xs @ w + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=global_batch)
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def step(shards):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(shards,))
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return strategy.reduce("MEAN", loss, axis=None)

    loss = step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
        ('Batches the tf.data.Dataset by the per-replica size B // 2 before experimental_distribute_dataset, which expects the global batch and splits it again: one step sees only the first B/2 rows, split again between the two replicas.',
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    B = len(x)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w, b = tf.Variable(weights[0]), tf.Variable(weights[1])
    per_replica = B // strategy.num_replicas_in_sync
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(per_replica)
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))

    def replica_step(xs, ys):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(per_example_loss(ys, xs @ w + b),
                                              global_batch_size=B)
        return (loss, *tape.gradient(loss, [w, b]))

    @tf.function
    def step(xs, ys):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(xs, ys))
        loss, grad_w, grad_b = (strategy.reduce("SUM", v, axis=None)
                                for v in (loss, grad_w, grad_b))
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = step(*batch)
    return [w.numpy(), b.numpy()], float(loss)
'''),
    ],
}

RIGHT = {
    "data_parallel": [
        ('Divides the shard loss by world_size before backward (as DDP-style scaling), so a plain summing all_reduce already leaves the average; no division of the gradients afterwards.',
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    (loss_fn(model(x_shard), y_shard) / world_size).backward()
    for p in model.parameters():
        if p.requires_grad and p.grad is not None:
            dist.all_reduce(p.grad)         # a sum of the ranks' (loss / N) gradients
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ('One loop over all 2(N-1) steps with the phase picked by the step number and the combine as a function (Tensor.add_ or Tensor.copy_), instead of two written-out loops.',
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), n)
    for t in range(2 * (n - 1)):
        if t < n - 1:                                   # reduce-scatter
            send_i, recv_i, combine = (rank - t) % n, (rank - t - 1) % n, torch.Tensor.add_
        else:                                           # all-gather
            s = t - (n - 1)
            send_i, recv_i, combine = (rank + 1 - s) % n, (rank - s) % n, torch.Tensor.copy_
        request = dist.isend(chunks[send_i], dst=(rank + 1) % n)
        buffer = torch.empty_like(chunks[recv_i])
        dist.recv(buffer, src=(rank - 1) % n)
        request.wait()
        combine(chunks[recv_i], buffer)
'''),
    ],
    "mirrored_step": [
        ('Feeds the replicas through a tf.data.Dataset batched to the global B and strategy.experimental_distribute_dataset (the text\'s alternative), and reduces a tuple in one loop.',
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    B = len(x)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w, b = tf.Variable(weights[0]), tf.Variable(weights[1])
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(B)
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))

    def replica_step(xs, ys):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(per_example_loss(ys, xs @ w + b),
                                              global_batch_size=B)
        return (loss, *tape.gradient(loss, [w, b]))

    @tf.function
    def step(xs, ys):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(xs, ys))
        loss, grad_w, grad_b = (strategy.reduce("SUM", v, axis=None)
                                for v in (loss, grad_w, grad_b))
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = step(*batch)
    return [w.numpy(), b.numpy()], float(loss)
'''),
    ],
}
