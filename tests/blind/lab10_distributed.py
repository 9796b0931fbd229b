"""Lab 10: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "data_parallel": [
        
        ("a frozen parameter gets a zero gradient so that every rank all-reduces the same list", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank]).backward()
    for p in model.parameters():
        if p.grad is None:
            p.grad = torch.zeros_like(p)
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
        ("loss divided by world_size as in tf.distribute, then the gradients averaged again: 1/N too small", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    output = model(x.chunk(world_size)[rank])
    loss = loss_fn(output, y.chunk(world_size)[rank]) / world_size   # this rank's share of the mean
    loss.backward()
    for p in model.parameters():
        if p.requires_grad and p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("passes the whole tensor round the ring N-1 times: right sum, N(N-1) tensors of traffic", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    travelling = tensor.clone()
    total = tensor.clone()
    for _ in range(world_size - 1):
        incoming = torch.empty_like(travelling)
        request = dist.isend(travelling, dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        total += incoming
        travelling = incoming
    tensor.copy_(total)
    return tensor
'''),
        ("all-gather phase adds the received chunk instead of overwriting it", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    chunks = torch.tensor_split(tensor.view(-1), world_size)
    for s in range(world_size - 1):
        send_index, recv_index = (rank - s) % world_size, (rank - s - 1) % world_size
        buffer = torch.empty_like(chunks[recv_index])
        request = dist.isend(chunks[send_index], dst=right)
        dist.recv(buffer, src=left)
        request.wait()
        chunks[recv_index].add_(buffer)
    for s in range(world_size - 1):
        send_index, recv_index = (rank + 1 - s) % world_size, (rank - s) % world_size
        buffer = torch.empty_like(chunks[recv_index])
        request = dist.isend(chunks[send_index], dst=right)
        dist.recv(buffer, src=left)
        request.wait()
        chunks[recv_index].add_(buffer)
    return tensor
'''),
        ("chunks sent upcast to float64 for an accurate sum: twice the bytes on the wire", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    chunks = torch.tensor_split(tensor.view(-1), world_size)

    def exchange(send_index, recv_index):
        outgoing = chunks[send_index].to(torch.float64)
        incoming = torch.empty(chunks[recv_index].shape, dtype=torch.float64)
        request = dist.isend(outgoing, dst=right)
        dist.recv(incoming, src=left)
        request.wait()
        return incoming.to(tensor.dtype)

    for s in range(world_size - 1):
        recv_index = (rank - s - 1) % world_size
        chunks[recv_index].add_(exchange((rank - s) % world_size, recv_index))
    for s in range(world_size - 1):
        recv_index = (rank - s) % world_size
        chunks[recv_index].copy_(exchange((rank + 1 - s) % world_size, recv_index))
    return tensor
'''),
    ],
    "two_stage": [
        ("receive buffer allocated in the dtype of the targets on rank 1, not of its stage's parameters", '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
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
        ("rank 0 also detaches its activation into a leaf: backward never reaches the first stage", '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
        activation = stage(batch).detach().requires_grad_()
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
    return loss.item()
'''),
    ],
    "mirrored_step": [
        ("replicas reduced with MEAN instead of SUM after dividing by the global batch: half a step", '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    batch = x.shape[0]
    half = batch // 2
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])
    x_all, y_all = tf.constant(x), tf.constant(y)

    def shard(context):
        i = context.replica_id_in_sync_group
        return x_all[i * half:(i + 1) * half], y_all[i * half:(i + 1) * half]

    shards = strategy.experimental_distribute_values_from_function(shard)

    def replica_step(rows):
        xs, ys = rows
        with tf.GradientTape() as tape:
            losses = per_example_loss(ys, tf.matmul(xs, w) + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=batch)
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def train_step(rows):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(rows,))
        loss = strategy.reduce("MEAN", loss, axis=None)
        grad_w = strategy.reduce("MEAN", grad_w, axis=None)
        grad_b = strategy.reduce("MEAN", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = train_step(shards)
    return [w.numpy(), b.numpy()], float(loss)
'''),
        ("every replica gets all B rows (no sharding): the summed gradient is twice the batch's", '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    batch = x.shape[0]
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])
    x_all, y_all = tf.constant(x), tf.constant(y)
    rows = strategy.experimental_distribute_values_from_function(lambda context: (x_all, y_all))

    def replica_step(rows):
        xs, ys = rows
        with tf.GradientTape() as tape:
            losses = per_example_loss(ys, tf.matmul(xs, w) + b)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=batch)
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

    loss = train_step(rows)
    return [w.numpy(), b.numpy()], float(loss)
'''),
    ],
}

RIGHT = {
    "data_parallel": [
        ("filter() over trainable parameters, all_reduce then div_ under torch.no_grad()", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    world_size = dist.get_world_size()
    rank = dist.get_rank()
    x_shard, y_shard = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    loss_fn(model(x_shard), y_shard).backward()
    with torch.no_grad():
        for p in filter(lambda p: p.requires_grad and p.grad is not None, model.parameters()):
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad.div_(world_size)
    return [p.grad for p in model.parameters()]
'''),
        ("strided shard x[rank::world_size]: the same average (first written as wrong; the text now says any equal split is fine, as an honest alternative had it)", '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard, y_shard = x[rank::world_size], y[rank::world_size]
    loss_fn(model(x_shard), y_shard).backward()
    for p in model.parameters():
        if p.grad is None:
            continue
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("one exchange helper with irecv and isend both asynchronous, waited together", '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), n)
    right, left = (rank + 1) % n, (rank - 1) % n

    def exchange(send_index, recv_index):
        incoming = torch.empty_like(chunks[recv_index])
        outgoing = dist.isend(chunks[send_index], dst=right)
        arriving = dist.irecv(incoming, src=left)
        arriving.wait()
        outgoing.wait()
        return incoming

    for s in range(n - 1):                      # reduce-scatter
        target = (rank - s - 1) % n
        chunks[target].add_(exchange((rank - s) % n, target))
    for s in range(n - 1):                      # all-gather
        target = (rank - s) % n
        chunks[target].copy_(exchange((rank + 1 - s) % n, target))
    return tensor
'''),
    ],
    "two_stage": [
        ("torch.autograd.backward with grad_tensors on rank 0, buffer dtype from the stage's first parameter", '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.send(activation.detach().contiguous(), dst=1)
        gradient = torch.empty(activation.shape, dtype=activation.dtype)
        dist.recv(gradient, src=1)
        torch.autograd.backward([activation], grad_tensors=[gradient])
        return None
    dtype = next(iter(stage.parameters())).dtype
    received = torch.empty(tuple(hidden_shape), dtype=dtype)
    dist.recv(received, src=0)
    received.requires_grad_(True)
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad.contiguous(), dst=0)
    return float(loss.item())
'''),
    ],
}
