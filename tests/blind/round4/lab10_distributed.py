"""Lab 10: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "data_parallel": [
        ("averages the .grad of every parameter without skipping frozen ones: a parameter with "
         "requires_grad=False has .grad None, and all_reduce(None) raises (right for models "
         "with nothing frozen)",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
        ("shards with x.split(world_size), which cuts pieces of world_size ROWS each (not "
         "world_size pieces): rank r sees rows r*N .. r*N+N-1; right only when the batch has "
         "world_size**2 rows",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard = x.split(world_size)[rank]
    y_shard = y.split(world_size)[rank]
    loss = loss_fn(model(x_shard), y_shard)
    loss.backward()
    for p in model.parameters():
        if p.requires_grad:
            dist.all_reduce(p.grad)
            p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
        ("all-reduces a temporary: dist.all_reduce(p.grad / world_size) sums a new tensor in "
         "place and throws it away; the .grad returned (and left on the parameters) is this "
         "rank's own shard gradient, never averaged",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad / world_size)   # average = sum of the shares
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("every receive buffer is torch.empty_like(chunks[0]): right when the size divides by "
         "the number of ranks, but tensor_split's later chunks are one element shorter "
         "otherwise: the buffer no longer matches the chunk it is received for and added "
         "into (fails on uneven sizes)",
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), n)
    right, left = (rank + 1) % n, (rank - 1) % n
    buffer = torch.empty_like(chunks[0])
    for s in range(n - 1):                       # reduce-scatter
        request = dist.isend(chunks[(rank - s) % n], dst=right)
        dist.recv(buffer, src=left)
        request.wait()
        chunks[(rank - s - 1) % n].add_(buffer)
    for s in range(n - 1):                       # all-gather
        request = dist.isend(chunks[(rank + 1 - s) % n], dst=right)
        dist.recv(buffer, src=left)
        request.wait()
        chunks[(rank - s) % n].copy_(buffer)
'''),
        ("indices and messages right, but the chunks are updated out of place "
         "(chunks[i] = chunks[i] + received, chunks[i] = received): the list entries are "
         "rebound to new tensors and `tensor` itself never changes",
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    flat = tensor.view(-1)
    chunks = list(torch.tensor_split(flat, n))
    right, left = (rank + 1) % n, (rank - 1) % n
    for s in range(n - 1):
        send_i, recv_i = (rank - s) % n, (rank - s - 1) % n
        received = torch.empty_like(chunks[recv_i])
        request = dist.isend(chunks[send_i], dst=right)
        dist.recv(received, src=left)
        request.wait()
        chunks[recv_i] = chunks[recv_i] + received
    for s in range(n - 1):
        send_i, recv_i = (rank + 1 - s) % n, (rank - s) % n
        received = torch.empty_like(chunks[recv_i])
        request = dist.isend(chunks[send_i], dst=right)
        dist.recv(received, src=left)
        request.wait()
        chunks[recv_i] = received
'''),
        ("passes whole tensors round the ring (each rank forwards what it received, N-1 times, "
         "and adds it up): the sum is right, but every rank sends N-1 whole tensors instead of "
         "2(N-1) chunks; the same traffic as the ring on 2 ranks, too much on 3 or more",
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % n, (rank - 1) % n
    passing = tensor.clone()          # the contribution travelling round the ring
    total = tensor.clone()
    for _ in range(n - 1):
        received = torch.empty_like(tensor)
        request = dist.isend(passing, dst=right)
        dist.recv(received, src=left)
        request.wait()
        total += received
        passing = received
    tensor.view(-1).copy_(total.view(-1))
'''),
    ],
    "two_stage": [
        ("rank 1 allocates the receive buffer in the dtype of its `batch` (the targets) instead "
         "of its stage's parameters: right for MSE targets of the model's dtype, wrong for "
         "cross-entropy's int64 class indices",
         '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach(), dst=1)
        gradient = torch.empty_like(activation)
        dist.recv(gradient, src=1)
        activation.backward(gradient)
        return None
    received = torch.empty(hidden_shape, dtype=batch.dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
        ("calls loss_fn(y, output), the arguments swapped: the same for the symmetric MSE, wrong "
         "(an error) for cross-entropy, which takes the logits first",
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
    output = stage(received)
    loss = loss_fn(batch, output)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
    ],
    "mirrored_step": [
        ("each replica's loss is tf.reduce_mean of its own B/2 rows instead of the sum over "
         "the global batch B: the summed gradient, and the reported loss, are twice the "
         "single-device ones",
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
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

    shards = strategy.experimental_distribute_values_from_function(rows)

    def replica_step(batch):
        xb, yb = batch
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(per_example_loss(yb, xb @ w + b))
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def step(shards):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(shards,))
        loss = strategy.reduce("SUM", loss, axis=None)
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
        ("losses scaled by the global batch and gradients summed (the weights are right), but "
         "the loss is combined with strategy.reduce('MEAN'): the returned loss is half the "
         "batch's mean loss on two replicas",
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    global_batch = x.shape[0]
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])
    half = global_batch // 2

    def rows(context):
        i = context.replica_id_in_sync_group
        return tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half])

    shards = strategy.experimental_distribute_values_from_function(rows)

    def replica_step(batch):
        xb, yb = batch
        with tf.GradientTape() as tape:
            losses = per_example_loss(yb, xb @ w + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=global_batch)
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def step(shards):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(shards,))
        loss = strategy.reduce("MEAN", loss, axis=None)       # the average loss
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
    ],
}

RIGHT = {
    "data_parallel": [
        ("strided shard x[rank::world_size] (allowed by the text), each gradient divided by "
         "world_size BEFORE the in-place all_reduce (a sum of shares), frozen parameters "
         "filtered by requires_grad",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    output = model(x[rank::world_size])
    loss_fn(output, y[rank::world_size]).backward()
    trainable = [p for p in model.parameters() if p.requires_grad]
    with torch.no_grad():
        for p in trainable:
            p.grad.div_(world_size)
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("the receive is posted first with dist.irecv, the send is a blocking dist.send, then "
         "wait; one helper does a step of either phase",
         '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), n)

    def exchange(send_index, recv_index):
        incoming = torch.empty_like(chunks[recv_index])
        pending = dist.irecv(incoming, src=(rank - 1) % n)
        dist.send(chunks[send_index], dst=(rank + 1) % n)
        pending.wait()
        return incoming

    for step in range(n - 1):
        target = (rank - step - 1) % n
        chunks[target].add_(exchange((rank - step) % n, target))
    for step in range(n - 1):
        target = (rank - step) % n
        chunks[target].copy_(exchange((rank + 1 - step) % n, target))
'''),
    ],
    "mirrored_step": [
        ("the whole batch as a tf.data.Dataset of one global batch, split over the replicas "
         "by experimental_distribute_dataset; the per-replica loss written as "
         "reduce_sum(losses) / B",
         '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    B = len(x)
    with strategy.scope():
        variables = [tf.Variable(weights[0]), tf.Variable(weights[1])]
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(B)
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))

    def on_replica(xb, yb):
        w, b = variables
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(per_example_loss(yb, tf.matmul(xb, w) + b)) / B
        return [loss] + tape.gradient(loss, variables)

    @tf.function
    def train(xb, yb):
        per_replica = strategy.run(on_replica, args=(xb, yb))
        loss, grad_w, grad_b = [strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None)
                                for v in per_replica]
        for var, grad in zip(variables, (grad_w, grad_b)):
            var.assign_sub(lr * grad)
        return loss

    loss = train(*batch)
    return [v.numpy() for v in variables], float(loss)
'''),
    ],
}
