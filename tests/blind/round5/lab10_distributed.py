"""Lab 10: answers written from the released notebook's text alone (blind corpus, round 5)."""

_RING_HEAD = '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
'''

_MIRRORED = '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    w0, b0 = weights
    global_batch = x.shape[0]
    half = global_batch // 2
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        w = tf.Variable(w0)
        b = tf.Variable(b0)
    x_all, y_all = tf.constant(x), tf.constant(y)

    def shard(context):
        i = context.replica_id_in_sync_group
        return x_all[i * half:(i + 1) * half], y_all[i * half:(i + 1) * half]

    batches = strategy.experimental_distribute_values_from_function(shard)

    def replica_step(batch):
        xb, yb = batch
        with tf.GradientTape() as tape:
            prediction = tf.matmul(xb, w) + b
            losses = LOSSES
            loss = REPLICA_LOSS
        grad_w, grad_b = tape.gradient(loss, [w, b])
        return loss, grad_w, grad_b

    @tf.function
    def run(batches):
        loss, grad_w, grad_b = strategy.run(replica_step, args=(batches,))
        loss = strategy.reduce(LOSS_REDUCE, loss, axis=None)
        grad_w = strategy.reduce("SUM", grad_w, axis=None)
        grad_b = strategy.reduce("SUM", grad_b, axis=None)
        w.assign_sub(lr * grad_w)
        b.assign_sub(lr * grad_b)
        return loss

    loss = run(batches)
    return [w.numpy(), b.numpy()], float(loss)
'''


def _mirrored(losses="per_example_loss(yb, prediction)",
              replica_loss="tf.nn.compute_average_loss(losses, global_batch_size=global_batch)",
              loss_reduce='"SUM"'):
    return (_MIRRORED.replace("LOSSES", losses).replace("REPLICA_LOSS", replica_loss)
            .replace("LOSS_REDUCE", loss_reduce))


WRONG = {
    "data_parallel": [
        ("shard taken with x.split(world_size)[rank]: pieces of world_size rows each instead of world_size pieces (right only when B == world_size ** 2)",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x_shard = x.split(world_size)[rank]
    y_shard = y.split(world_size)[rank]
    loss = loss_fn(model(x_shard), y_shard)
    loss.backward()
    for p in model.parameters():
        if p.grad is None:
            continue
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return [p.grad for p in model.parameters()]
'''),
        ("returns only the gradients of trainable parameters: with a frozen bias the list is shorter than model.parameters() (its None is dropped)",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    out = model(x.chunk(world_size)[rank])
    loss_fn(out, y.chunk(world_size)[rank]).backward()
    grads = []
    for p in model.parameters():
        if not p.requires_grad:
            continue
        dist.all_reduce(p.grad)
        p.grad.div_(world_size)
        grads.append(p.grad)
    return grads
'''),
    ],
    "ring_all_reduce": [
        ("all-gather phase adds the received chunk instead of overwriting it: completed chunks are summed again",
         _RING_HEAD + '''    chunks = torch.tensor_split(tensor.view(-1), world_size)
    for phase in ("reduce", "gather"):
        for s in range(world_size - 1):
            if phase == "reduce":
                send_i, recv_i = (rank - s) % world_size, (rank - s - 1) % world_size
            else:
                send_i, recv_i = (rank + 1 - s) % world_size, (rank - s) % world_size
            request = dist.isend(chunks[send_i], dst=right)
            buffer = torch.empty_like(chunks[recv_i])
            dist.recv(buffer, src=left)
            request.wait()
            chunks[recv_i].add_(buffer)
'''),
        ("cuts the tensor with flat.chunk(world_size) instead of tensor_split: for sizes like 5 on 4 ranks chunk makes fewer than world_size pieces (IndexError / wrong chunks)",
         _RING_HEAD + '''    chunks = tensor.view(-1).chunk(world_size)
    for s in range(world_size - 1):
        send_i, recv_i = (rank - s) % world_size, (rank - s - 1) % world_size
        request = dist.isend(chunks[send_i], dst=right)
        buffer = torch.empty_like(chunks[recv_i])
        dist.recv(buffer, src=left)
        request.wait()
        chunks[recv_i].add_(buffer)
    for s in range(world_size - 1):
        send_i, recv_i = (rank + 1 - s) % world_size, (rank - s) % world_size
        request = dist.isend(chunks[send_i], dst=right)
        buffer = torch.empty_like(chunks[recv_i])
        dist.recv(buffer, src=left)
        request.wait()
        chunks[recv_i].copy_(buffer)
'''),
        ("sends every chunk as float32 (chunk.float(), to halve the traffic) and receives into float32 buffers: float64 tensors lose precision (and fewer bytes are sent than the text's dtype rule)",
         _RING_HEAD + '''    chunks = torch.tensor_split(tensor.view(-1), world_size)

    def exchange(send_i, recv_i):
        request = dist.isend(chunks[send_i].float().contiguous(), dst=right)
        buffer = torch.empty(chunks[recv_i].shape, dtype=torch.float32)
        dist.recv(buffer, src=left)
        request.wait()
        return buffer

    for s in range(world_size - 1):
        got = exchange((rank - s) % world_size, (rank - s - 1) % world_size)
        chunks[(rank - s - 1) % world_size].add_(got.to(tensor.dtype))
    for s in range(world_size - 1):
        got = exchange((rank + 1 - s) % world_size, (rank - s) % world_size)
        chunks[(rank - s) % world_size].copy_(got)
'''),
    ],
    "two_stage": [
        ("rank 1 calls loss_fn(y, output), arguments swapped: the same for MSE, wrong (or an error) for cross-entropy",
         '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
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
        ("rank 1 returns the loss as a detached 0-d tensor, not a Python float",
         '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    rank = dist.get_rank()
    if rank == 0:
        activation = stage(batch)
        dist.send(activation.detach().contiguous(), dst=1)
        grad = torch.empty_like(activation)
        dist.recv(grad, src=1)
        activation.backward(grad)
        return None
    param = next(stage.parameters())
    received = torch.zeros(hidden_shape, dtype=param.dtype)
    dist.recv(received, src=0)
    received.requires_grad_()
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad.contiguous(), dst=0)
    return loss.detach()
'''),
    ],
    "mirrored_step": [
        ("each replica divides by its own rows with tf.reduce_mean instead of the global batch: the step (and the loss) are twice the single-device ones",
         _mirrored(replica_loss="tf.reduce_mean(losses)")),
        ("the replicas' losses combined with strategy.reduce(\"MEAN\") while each is already a share of the global mean: the reported loss is half the batch's mean loss (weights right)",
         _mirrored(loss_reduce='"MEAN"')),
        ("ignores the per_example_loss argument and hard-codes the squared error of the demo: wrong for any other loss, and per_example_loss is never called",
         _mirrored(losses="tf.reduce_sum(tf.square(prediction - yb), axis=-1)")),
    ],
}

RIGHT = {
    "data_parallel": [
        ("strided shard x[rank::world_size] (the text allows any split into equal parts), one all_reduce on all gradients flattened together, then copied back",
         '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x[rank::world_size]), y[rank::world_size])
    loss.backward()
    with torch.no_grad():
        live = [p for p in model.parameters() if p.grad is not None]
        flat = torch.cat([p.grad.reshape(-1) for p in live])
        dist.all_reduce(flat)
        flat /= world_size
        offset = 0
        for p in live:
            n = p.grad.numel()
            p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
            offset += n
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ("one helper for both phases with the combine step passed as a function, isend / recv / wait in every step",
         _RING_HEAD + '''    chunks = torch.tensor_split(tensor.view(-1), world_size)

    def ring_pass(first_send_offset, combine):
        for s in range(world_size - 1):
            send_i = (rank + first_send_offset - s) % world_size
            recv_i = (send_i - 1) % world_size
            request = dist.isend(chunks[send_i], dst=right)
            incoming = torch.empty_like(chunks[recv_i])
            dist.recv(incoming, src=left)
            request.wait()
            combine(chunks[recv_i], incoming)

    ring_pass(0, lambda mine, theirs: mine.add_(theirs))        # reduce-scatter
    ring_pass(1, lambda mine, theirs: mine.copy_(theirs))       # all-gather
'''),
    ],
    "two_stage": [
        ("non-blocking isend / irecv with explicit waits on both ranks, buffer dtype read from the stage's parameters",
         '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.isend(activation.detach().contiguous(), dst=1).wait()
        upstream = torch.empty_like(activation)
        dist.irecv(upstream, src=1).wait()
        torch.autograd.backward(activation, grad_tensors=upstream)
        return None
    dtype = next(iter(stage.parameters())).dtype
    hidden = torch.empty(tuple(hidden_shape), dtype=dtype)
    dist.irecv(hidden, src=0).wait()
    hidden.requires_grad_(True)
    loss = loss_fn(stage(hidden), batch)
    loss.backward()
    dist.isend(hidden.grad.contiguous(), dst=0).wait()
    return float(loss.item())
'''),
    ],
}
