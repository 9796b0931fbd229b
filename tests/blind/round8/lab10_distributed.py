"""Lab 10: answers written from the released notebook's text alone (blind corpus, round 8)."""

_MIRRORED = '''def mirrored_step(weights, x, y, lr, per_example_loss):
    """One SGD step of `x @ w + b` under MirroredStrategy on /cpu:0 and /cpu:1; returns
    ([w, b] updated, as NumPy arrays, the loss as a float)."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    batch = x.shape[0]
    half = batch // 2
VARIABLES
    def rows(context):
        r = context.replica_id_in_sync_group
        return (tf.constant(x[r * half:(r + 1) * half]), tf.constant(y[r * half:(r + 1) * half]))

    shards = strategy.experimental_distribute_values_from_function(rows)

    def replica_step(shard):
        xs, ys = shard
        with tf.GradientTape() as tape:
            losses = per_example_loss(ys, xs @ w + b)
            loss = LOSS_LINE
        grads = tape.gradient(loss, [w, b])
        return loss, grads

DRIVER
    return [w.numpy(), b.numpy()], float(loss)
'''

_VARS_IN_SCOPE = '''    with strategy.scope():
        w = tf.Variable(weights[0])
        b = tf.Variable(weights[1])
'''

_DRIVER_FN = '''    @tf.function
    def train_step():
        loss, grads = strategy.run(replica_step, args=(shards,))
        loss = strategy.reduce("SUM", loss, axis=None)
        grads = [strategy.reduce("SUM", g, axis=None) for g in grads]
        w.assign_sub(lr * grads[0])
        b.assign_sub(lr * grads[1])
        return loss

    loss = train_step()
'''

_DRIVER_EAGER = '''    loss, grads = strategy.run(replica_step, args=(shards,))
    loss = strategy.reduce("SUM", loss, axis=None)
    grads = [strategy.reduce("SUM", g, axis=None) for g in grads]
    w.assign_sub(lr * grads[0])
    b.assign_sub(lr * grads[1])
'''

_GLOBAL = "tf.nn.compute_average_loss(losses, global_batch_size=batch)"


def _mirrored(variables=_VARS_IN_SCOPE, loss_line=_GLOBAL, driver=_DRIVER_FN):
    return (_MIRRORED.replace("VARIABLES\n", variables).replace("LOSS_LINE", loss_line)
            .replace("DRIVER\n", driver))


WRONG = {
    "data_parallel": [
        ('Returns the gradients of the trainable parameters only ([p.grad ... if p.requires_grad]): with a frozen bias the list is shorter and misaligned with model.parameters(), where the text returns [p.grad for p in model.parameters()] (None for a frozen one)', '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss = loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank])
    loss.backward()
    trainable = [p for p in model.parameters() if p.requires_grad]
    for p in trainable:
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return [p.grad for p in trainable]
'''),
        ('Calls model.zero_grad(set_to_none=True) before the backward "to start clean": a model handed over with gradients already accumulated (micro-batches) loses them, where the text\'s step 2 is a plain backward(), which adds to .grad', '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    model.zero_grad(set_to_none=True)
    loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank]).backward()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad.div_(world_size)
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ('Flattens with tensor.reshape(-1) instead of tensor.view(-1): for a non-contiguous tensor (a transposed gradient) reshape silently copies, the ring sums the copy and `tensor` is left unchanged, where the text promises in place (view would at least raise)', '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.reshape(-1), world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    for s in range(world_size - 1):
        request = dist.isend(chunks[(rank - s) % world_size], dst=right)
        incoming = torch.empty_like(chunks[(rank - s - 1) % world_size])
        dist.recv(incoming, src=left)
        request.wait()
        chunks[(rank - s - 1) % world_size].add_(incoming)
    for s in range(world_size - 1):
        request = dist.isend(chunks[(rank + 1 - s) % world_size], dst=right)
        incoming = torch.empty_like(chunks[(rank - s) % world_size])
        dist.recv(incoming, src=left)
        request.wait()
        chunks[(rank - s) % world_size].copy_(incoming)
'''),
        ('Cuts with flat.chunk(world_size) instead of torch.tensor_split: for n = N + 1 elements chunk returns fewer than N chunks, so the ring indexes past the end', '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    chunks = tensor.view(-1).chunk(world_size)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    for phase in ("reduce", "gather"):
        for s in range(world_size - 1):
            send_index = (rank - s) % world_size if phase == "reduce" else (rank + 1 - s) % world_size
            recv_index = (rank - s - 1) % world_size if phase == "reduce" else (rank - s) % world_size
            request = dist.isend(chunks[send_index], dst=right)
            incoming = torch.empty_like(chunks[recv_index])
            dist.recv(incoming, src=left)
            request.wait()
            if phase == "reduce":
                chunks[recv_index].add_(incoming)
            else:
                chunks[recv_index].copy_(incoming)
'''),
    ],
    "two_stage": [
        ('Rank 1 allocates the receive buffer with torch.empty(hidden_shape), float32 by default, not in the dtype of its stage\'s parameters: a float64 model breaks (and a bf16 one would too)', '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
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
        ('Rank 1 clears its stage\'s gradients (zero_grad) before backward, "to start clean": a stage that already held gradients (accumulation over micro-batches) loses them, where one process running the whole model would add to them', '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
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
    stage.zero_grad(set_to_none=True)
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.send(received.grad, dst=0)
    return loss.item()
'''),
    ],
    "mirrored_step": [
        ('Each replica averages over its own rows (tf.reduce_mean) instead of dividing by the global batch size: on two replicas the summed gradient and loss are twice the single-device ones', _mirrored(loss_line="tf.reduce_mean(losses)")),
        ('Creates w and b outside strategy.scope(): plain variables on one device, not mirrored (the text asks for one copy per device); the step reads them across devices and still computes the same numbers here', _mirrored(variables='''    w = tf.Variable(weights[0])
    b = tf.Variable(weights[1])
''')),
        ('Returns the updated weights as TensorFlow tensors (w.read_value()) instead of NumPy arrays as the text asks', _mirrored().replace("return [w.numpy(), b.numpy()], float(loss)", "return [w.read_value(), b.read_value()], float(loss)")),
        ('Calls strategy.run eagerly, without the tf.function the text asks for: the same numbers, but one Python thread per replica and the overhead the text warns about', _mirrored(driver=_DRIVER_EAGER)),
    ],
}

RIGHT = {
    "data_parallel": [
        ('One all_reduce over a single flat buffer of all gradients (torch.cat of the views), divided once and copied back into every .grad', '''def data_parallel_grads(model, x, y, loss_fn):
    """This rank's shard, its loss and backward, gradients averaged over the ranks."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    loss_fn(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank]).backward()
    with torch.no_grad():
        with_grad = [p for p in model.parameters() if p.grad is not None]
        flat = torch.cat([p.grad.reshape(-1) for p in with_grad])
        dist.all_reduce(flat)
        flat /= world_size
        offset = 0
        for p in with_grad:
            n = p.grad.numel()
            p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
            offset += n
    return [p.grad for p in model.parameters()]
'''),
    ],
    "ring_all_reduce": [
        ('Posts the receive first with dist.irecv, then a blocking dist.send to the right, then waits on the receive; both phases share one loop driven by an index table', '''def ring_all_reduce(tensor):
    """Sum `tensor` over all ranks, in place, with a ring of point-to-point messages."""
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = torch.tensor_split(tensor.view(-1), n)
    plan = [((rank - s) % n, (rank - s - 1) % n, True) for s in range(n - 1)]
    plan += [((rank + 1 - s) % n, (rank - s) % n, False) for s in range(n - 1)]
    for send_index, recv_index, reduce in plan:
        buffer = torch.empty_like(chunks[recv_index])
        receiving = dist.irecv(buffer, src=(rank - 1) % n)
        dist.send(chunks[send_index], dst=(rank + 1) % n)
        receiving.wait()
        if reduce:
            chunks[recv_index].add_(buffer)
        else:
            chunks[recv_index].copy_(buffer)
'''),
    ],
    "two_stage": [
        ('Non-blocking isend/irecv with explicit waits, torch.autograd.backward(..., grad_tensors=) on rank 0, and the buffer dtype taken from the stage\'s first parameter', '''def two_stage_step(stage, batch, hidden_shape, loss_fn):
    """One forward and backward pass of a model split over ranks 0 and 1."""
    if dist.get_rank() == 0:
        activation = stage(batch)
        dist.isend(activation.detach(), dst=1).wait()
        gradient = torch.empty_like(activation)
        dist.irecv(gradient, src=1).wait()
        torch.autograd.backward(activation, grad_tensors=gradient)
        return None
    dtype = next(iter(stage.parameters())).dtype
    received = torch.zeros(hidden_shape, dtype=dtype)
    dist.irecv(received, src=0).wait()
    received.requires_grad_(True)
    loss = loss_fn(stage(received), batch)
    loss.backward()
    dist.isend(received.grad, dst=0).wait()
    return float(loss.detach())
'''),
    ],
}


# Wrong answers the checks still miss (strict expected failures in tests/blind/test_blind.py).
_PROMISE = (
    'a promise of the text that no case tests yet: found by blind round 8 (2026-11-28), to '
    'be caught with a case, a mutant and a property row'
)
_METHOD = (
    'how, not what: the same results on every input the checks give here; the text asks for '
    'a way of doing it that no case observes yet (blind round 8)'
)
_DEVICE = (
    'differs only on a GPU or with another number of devices, which the checks here do not '
    'have (blind round 8)'
)
SURVIVORS = {
    ('mirrored_step', 3): _METHOD,
}
