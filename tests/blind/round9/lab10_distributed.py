"""Lab 10: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'data_parallel': [
        ('Clears the gradients with model.zero_grad() before backward, so a model that already holds gradients of an earlier micro-batch loses them, though the text says backward adds to them.', '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    model.zero_grad(set_to_none=True)          # start from a clean gradient
    loss_fn(model(x_shard), y_shard).backward()
    for p in model.parameters():
        if p.requires_grad:
            dist.all_reduce(p.grad)
            p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
        ('Averages clones of the gradients and returns them, leaving each parameter\'s .grad as the shard\'s own gradient instead of averaging the .grad in place.', '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    grads = []
    for p in model.parameters():
        if p.grad is None:
            grads.append(None)
            continue
        g = p.grad.clone()
        dist.all_reduce(g)
        grads.append(g / world_size)
    return grads
'''),
        ('Cuts the batch with x.split(world_size), which makes pieces of world_size rows each, instead of x.chunk(world_size) (world_size pieces): the ranks see the wrong rows unless the batch has world_size squared rows.', '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.split(world_size)[rank], y.split(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad.div_(world_size)
    return [p.grad for p in model.parameters()]
'''),
    ],
    'ring_all_reduce': [
        ('Flattens with tensor.reshape(-1) instead of view(-1): for a non-contiguous (transposed) tensor reshape makes a copy, the ring sums the copy, and the caller\'s tensor is left unchanged.', '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.reshape(-1), n)
    right, left = (rank + 1) % n, (rank - 1) % n
    for s in range(n - 1):
        request = dist.isend(chunks[(rank - s) % n], right)
        target = chunks[(rank - s - 1) % n]
        incoming = torch.empty_like(target)
        dist.recv(incoming, left)
        request.wait()
        target += incoming
    for s in range(n - 1):
        request = dist.isend(chunks[(rank + 1 - s) % n], right)
        target = chunks[(rank - s) % n]
        incoming = torch.empty_like(target)
        dist.recv(incoming, left)
        request.wait()
        target.copy_(incoming)
'''),
        ('Cuts with torch.chunk instead of torch.tensor_split: chunk may return fewer than world_size pieces (5 elements on 4 ranks give 3), so sizes that do not divide evenly fail on 3 or 4 ranks.', '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.chunk(tensor.view(-1), n)
    right, left = (rank + 1) % n, (rank - 1) % n
    for s in range(n - 1):
        request = dist.isend(chunks[(rank - s) % n], right)
        target = chunks[(rank - s - 1) % n]
        incoming = torch.empty_like(target)
        dist.recv(incoming, left)
        request.wait()
        target += incoming
    for s in range(n - 1):
        request = dist.isend(chunks[(rank + 1 - s) % n], right)
        target = chunks[(rank - s) % n]
        incoming = torch.empty_like(target)
        dist.recv(incoming, left)
        request.wait()
        target.copy_(incoming)
'''),
        ('Sends every chunk as float64 "to keep the partial sums exact": the sum is the same, but a float32 tensor now costs twice the bytes on the wire, breaking "send chunks in the tensor\'s own dtype" and the 2(N-1)/N bound.', '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), n)
    right, left = (rank + 1) % n, (rank - 1) % n
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(n - 1):
            send_index = (rank - s) % n if phase == "reduce-scatter" else (rank + 1 - s) % n
            recv_index = (send_index - 1) % n
            outgoing = chunks[send_index].to(torch.float64)
            request = dist.isend(outgoing, right)
            incoming = torch.empty(chunks[recv_index].shape, dtype=torch.float64)
            dist.recv(incoming, left)
            request.wait()
            if phase == "reduce-scatter":
                chunks[recv_index].add_(incoming)
            else:
                chunks[recv_index].copy_(incoming)
'''),
    ],
    'two_stage': [
        ('Rank 1 returns the loss as a detached tensor instead of a Python float (loss.item()).', '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
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
    dist.send(received.grad, dst=0)
    return loss.detach()
'''),
        ('Calls loss_fn(y, output) with the arguments swapped: the same for the symmetric MSE, wrong (or an error) for cross-entropy, whose first argument must be the output.', '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
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
    loss = loss_fn(batch, stage(received))
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
    ],
    'mirrored_step': [
        ('Creates the tf.Variables before entering strategy.scope(): the numbers are right, but the variables are ordinary ones on one device, not mirrored copies on every replica\'s device.', '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    w = tf.Variable(weights[0])
    b = tf.Variable(weights[1])
    B = x.shape[0]
    half = B // 2

    def rows(context):
        i = context.replica_id_in_sync_group
        return tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half])

    inputs = strategy.experimental_distribute_values_from_function(rows)

    def replica_step(batch):
        xs, ys = batch
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(per_example_loss(ys, xs @ w + b), global_batch_size=B)
        return (loss,) + tuple(tape.gradient(loss, [w, b]))

    @tf.function
    def step(batch):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(batch,))
        loss = strategy.reduce("SUM", loss, axis=None)
        w.assign_sub(lr * strategy.reduce("SUM", grad_w, axis=None))
        b.assign_sub(lr * strategy.reduce("SUM", grad_b, axis=None))
        return loss

    loss = step(inputs)
    return [w.numpy(), b.numpy()], float(loss)
'''),
        ('Averages each replica\'s losses over its own B/2 rows (tf.reduce_mean) and then sums the replicas, so the loss and the step are twice those of the single-device step, the bug the text warns about.', '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])
    half = x.shape[0] // 2

    def rows(context):
        i = context.replica_id_in_sync_group
        return tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half])

    inputs = strategy.experimental_distribute_values_from_function(rows)

    def replica_step(batch):
        xs, ys = batch
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(per_example_loss(ys, xs @ w + b))
        return (loss,) + tuple(tape.gradient(loss, [w, b]))

    @tf.function
    def step(batch):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(batch,))
        loss = strategy.reduce("SUM", loss, axis=None)
        w.assign_sub(lr * strategy.reduce("SUM", grad_w, axis=None))
        b.assign_sub(lr * strategy.reduce("SUM", grad_b, axis=None))
        return loss

    loss = step(inputs)
    return [w.numpy(), b.numpy()], float(loss)
'''),
    ],
}

RIGHT = {
    'data_parallel': [
        ('Takes a strided shard x[rank::world_size] (which the text allows), skips frozen parameters by requires_grad, and divides with div_.', '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x[rank::world_size]), y[rank::world_size])
    loss.backward()
    trainable = [p for p in model.parameters() if p.requires_grad]
    for p in trainable:
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
        p.grad.div_(world_size)
    return [p.grad for p in model.parameters()]
'''),
    ],
    'ring_all_reduce': [
        ('Posts the receive with irecv and the send with isend, waits on both, and writes each phase with one helper; the chunk views come from tensor_split of view(-1).', '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size

    def exchange(send_index, recv_index, combine):
        buffer = torch.empty_like(chunks[recv_index])
        requests = [dist.irecv(buffer, src=left), dist.isend(chunks[send_index], dst=right)]
        for request in requests:
            request.wait()
        combine(chunks[recv_index], buffer)

    for s in range(world_size - 1):
        exchange((rank - s) % world_size, (rank - s - 1) % world_size, lambda c, b: c.add_(b))
    for s in range(world_size - 1):
        exchange((rank + 1 - s) % world_size, (rank - s) % world_size, lambda c, b: c.copy_(b))
'''),
    ],
    'two_stage': [
        ('Rank 0 resumes backpropagation through the surrogate (activation * gradient).sum().backward(), whose gradient is the received one; rank 1 takes the buffer dtype from its first parameter and sends received.grad.', '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    rank = dist.get_rank()
    if rank == 0:
        activation = stage(batch)
        dist.send(activation.detach().contiguous(), dst=1)
        upstream = torch.empty_like(activation)
        dist.recv(upstream, src=1)
        (activation * upstream).sum().backward()
        return None
    received = torch.empty(hidden_shape, dtype=next(iter(stage.parameters())).dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    output = stage(received)
    loss = loss_fn(output, batch)
    loss.backward()
    dist.send(received.grad.contiguous(), dst=0)
    return float(loss.item())
'''),
    ],
}
