"""Lab 10: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "data_parallel": [
        ("runs the model on the whole batch on every rank (no shard), then averages as asked", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    world_size = dist.get_world_size()
    loss = loss_fn(model(x), y)
    loss.backward()
    for p in model.parameters():
        if p.grad is None:
            continue
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
        ("averages clones of the gradients and returns those, leaving each .grad at the shard's value", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    averaged = []
    for p in model.parameters():
        if p.grad is None:
            averaged.append(None)
            continue
        g = p.grad.clone()
        dist.all_reduce(g)
        averaged.append(g / world_size)
    return averaged
'''),
        ("returns the gradients of the trainable parameters only, so a frozen bias shifts the list", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    trainable = [p for p in model.parameters() if p.requires_grad]
    for p in trainable:
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return [p.grad for p in trainable]
'''),
    ],
    "ring_all_reduce": [
        ("sends the chunks as float32 to halve the traffic, losing float64 precision", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    flat = tensor.view(-1)
    chunks = torch.tensor_split(flat, world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    for step in range(world_size - 1):
        send_index = (rank - step) % world_size
        recv_index = (rank - step - 1) % world_size
        outgoing = chunks[send_index].float()
        request = dist.isend(outgoing, dst=right)
        incoming = torch.empty_like(chunks[recv_index], dtype=torch.float32)
        dist.recv(incoming, src=left)
        request.wait()
        chunks[recv_index].add_(incoming)
    for step in range(world_size - 1):
        send_index = (rank + 1 - step) % world_size
        recv_index = (rank - step) % world_size
        outgoing = chunks[send_index].float()
        request = dist.isend(outgoing, dst=right)
        incoming = torch.empty_like(chunks[recv_index], dtype=torch.float32)
        dist.recv(incoming, src=left)
        request.wait()
        chunks[recv_index].copy_(incoming)
    return tensor
'''),
        ("reduce-scatter rebinds the list entry (chunks[i] = chunks[i] + buf), so the sums never reach tensor", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    flat = tensor.view(-1)
    chunks = list(torch.tensor_split(flat, world_size))
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    for step in range(world_size - 1):
        send_index = (rank - step) % world_size
        recv_index = (rank - step - 1) % world_size
        request = dist.isend(chunks[send_index], dst=right)
        buffer = torch.empty_like(chunks[recv_index])
        dist.recv(buffer, src=left)
        request.wait()
        chunks[recv_index] = chunks[recv_index] + buffer
    for step in range(world_size - 1):
        send_index = (rank + 1 - step) % world_size
        recv_index = (rank - step) % world_size
        request = dist.isend(chunks[send_index], dst=right)
        buffer = torch.empty_like(chunks[recv_index])
        dist.recv(buffer, src=left)
        request.wait()
        chunks[recv_index].copy_(buffer)
    return tensor
'''),
        ("all-gather reuses the reduce-scatter indices (sends chunk r-s instead of r+1-s)", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    flat = tensor.view(-1)
    chunks = torch.tensor_split(flat, world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size

    def exchange(send_index, recv_index):
        request = dist.isend(chunks[send_index], dst=right)
        buffer = torch.empty_like(chunks[recv_index])
        dist.recv(buffer, src=left)
        request.wait()
        return buffer

    for step in range(world_size - 1):
        i_send, i_recv = (rank - step) % world_size, (rank - step - 1) % world_size
        chunks[i_recv].add_(exchange(i_send, i_recv))
    for step in range(world_size - 1):
        i_send, i_recv = (rank - step) % world_size, (rank - step - 1) % world_size
        chunks[i_recv].copy_(exchange(i_send, i_recv))
    return tensor
'''),
    ],
    "two_stage": [
        ("rank 1 returns the detached loss tensor instead of a float (loss.item())", '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
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
    ],
    "mirrored_step": [
        ("builds the variables and the batch in float32, as TensorFlow usually is, so the step is float32", '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    global_batch = x.shape[0]
    half = global_batch // 2
    with strategy.scope():
        w = tf.Variable(weights[0], dtype=tf.float32)
        b = tf.Variable(weights[1], dtype=tf.float32)

    def rows_for(context):
        i = context.replica_id_in_sync_group
        return (tf.constant(x[i * half:(i + 1) * half], dtype=tf.float32),
                tf.constant(y[i * half:(i + 1) * half], dtype=tf.float32))

    shards = strategy.experimental_distribute_values_from_function(rows_for)

    def replica_step(xs, ys):
        with tf.GradientTape() as tape:
            losses = per_example_loss(ys, xs @ w + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=global_batch)
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def train_step(shards):
        loss, grad_w, grad_b = strategy.run(replica_step, args=shards)
        loss = strategy.reduce("SUM", loss, axis=None)
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = train_step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
        ("sums the gradients but reduces the loss with MEAN, so the reported loss is half the batch mean", '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    global_batch = x.shape[0]
    half = global_batch // 2
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])

    def rows_for(context):
        i = context.replica_id_in_sync_group
        return (tf.constant(x[i * half:(i + 1) * half]), tf.constant(y[i * half:(i + 1) * half]))

    shards = strategy.experimental_distribute_values_from_function(rows_for)

    def replica_step(xs, ys):
        with tf.GradientTape() as tape:
            losses = per_example_loss(ys, xs @ w + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=global_batch)
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def train_step(shards):
        loss, grad_w, grad_b = strategy.run(replica_step, args=shards)
        loss = strategy.reduce("MEAN", loss, axis=None)
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = train_step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
        ("hands every replica all B rows (thinking the strategy splits them itself)", '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    global_batch = x.shape[0]
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])

    def rows_for(context):
        return (tf.constant(x), tf.constant(y))

    shards = strategy.experimental_distribute_values_from_function(rows_for)

    def replica_step(xs, ys):
        with tf.GradientTape() as tape:
            losses = per_example_loss(ys, xs @ w + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=global_batch)
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def train_step(shards):
        loss, grad_w, grad_b = strategy.run(replica_step, args=shards)
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
        ("strided shard x[rank::N], divides each gradient by N before the all_reduce", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x[rank::world_size]), y[rank::world_size])
    loss.backward()
    for p in model.parameters():
        if p.requires_grad and p.grad is not None:
            p.grad.div_(world_size)
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("irecv and isend both posted, then both waited; one exchange helper with add_/copy_ passed in", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), n)
    right, left = (rank + 1) % n, (rank - 1) % n

    def exchange(send_i, recv_i, combine):
        buffer = torch.empty_like(chunks[recv_i])
        requests = [dist.irecv(buffer, src=left), dist.isend(chunks[send_i], dst=right)]
        for request in requests:
            request.wait()
        combine(chunks[recv_i], buffer)

    for s in range(n - 1):
        exchange((rank - s) % n, (rank - s - 1) % n, torch.Tensor.add_)
    for s in range(n - 1):
        exchange((rank + 1 - s) % n, (rank - s) % n, torch.Tensor.copy_)
'''),
    ],
    "mirrored_step": [
        ("tf.data dataset of one global batch through experimental_distribute_dataset; per-replica reduce_mean and strategy.reduce('MEAN')", '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(np.asarray(weights[0], dtype=np.float64))
        b = tf.Variable(np.asarray(weights[1], dtype=np.float64))
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(x.shape[0])
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))

    def replica_step(inputs):
        xs, ys = inputs
        with tf.GradientTape() as tape:
            # each replica has exactly half the rows: the mean of the two means is the batch mean
            loss = tf.reduce_mean(per_example_loss(ys, tf.matmul(xs, w) + b))
        return (loss, *tape.gradient(loss, [w, b]))

    @tf.function
    def train_step(batch):
        per_replica = strategy.run(replica_step, args=(batch,))
        loss, grad_w, grad_b = (strategy.reduce("MEAN", v, axis=None) for v in per_replica)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = train_step(batch)
    return [w.numpy(), b.numpy()], float(loss)
'''),
    ],
}
