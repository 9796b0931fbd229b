"""Lab 07: answers written from the released notebook's text alone (blind corpus, round 3)."""

WRONG = {
    'tf1_train': [
        ('runs the update and the loss in two sess.run calls, the update first: losses[t] is the loss after step t, not before it',
         '''def tf1_train(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer net, as a TF1 static graph run in a session.

    Args:
        x, y: float32 arrays (N, D_in) and (N, D_out), fed through placeholders.
        w1, w2: float32 arrays (D_in, H) and (H, D_out), the Variables' initial values.
        lr: learning rate.  steps: number of gradient-descent steps.

    Returns:
        (losses, w1, w2): NumPy arrays; losses has shape (steps,), losses[t] being the loss
        before step t; w1 and w2 are the final weights.
    """
    graph = tf.Graph()
    with graph.as_default():
        x_in = tf1.placeholder(tf.float32, shape=x.shape)
        y_in = tf1.placeholder(tf.float32, shape=y.shape)
        v1 = tf1.Variable(np.array(w1, dtype=np.float32))
        v2 = tf1.Variable(np.array(w2, dtype=np.float32))
        h = tf.maximum(tf.matmul(x_in, v1), 0)
        y_pred = tf.matmul(h, v2)
        loss = tf.reduce_mean(tf.reduce_sum((y_pred - y_in) ** 2, axis=1))
        grad_w1, grad_w2 = tf1.gradients(loss, [v1, v2])
        updates = tf.group(v1.assign(v1 - lr * grad_w1), v2.assign(v2 - lr * grad_w2))
        init = tf1.global_variables_initializer()
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        feed = {x_in: x, y_in: y}
        for _ in range(steps):
            sess.run(updates, feed_dict=feed)
            loss_value = sess.run(loss, feed_dict=feed)
            losses.append(loss_value)
        w1_final, w2_final = sess.run([v1, v2])
    return np.array(losses, dtype=np.float32), w1_final, w2_final
'''),
    ],
    'tape_train': [
        ("takes only w1's gradient from the tape, updates w1, then records a second forward pass for w2's gradient (a tape answers once): w2's step is computed with the already-updated w1 instead of both gradients at the same point",
         '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape.

    Returns:
        (losses, w1, w2): NumPy arrays, as tf1_train returns them.
    """
    x = tf.constant(x, dtype=tf.float32)
    y = tf.constant(y, dtype=tf.float32)
    v1 = tf.Variable(tf.constant(w1, dtype=tf.float32))
    v2 = tf.Variable(tf.constant(w2, dtype=tf.float32))
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, v1), 0)
            y_pred = tf.matmul(h, v2)
            loss = tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=1))
        grad_w1 = tape.gradient(loss, v1)
        losses.append(loss.numpy())
        v1.assign_sub(lr * grad_w1)
        # a tape gives one gradient: record the forward pass again for w2
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, v1), 0)
            loss2 = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, v2) - y) ** 2, axis=1))
        v2.assign_sub(lr * tape.gradient(loss2, v2))
    return np.array(losses, dtype=np.float32), v1.numpy(), v2.numpy()
'''),
    ],
    'tape_derivatives': [
        ('x is watched only by the inner tape: a tf.Variable is watched by both tapes automatically and works, but for a tf.constant the outer tape records nothing and d2y and dz come back as None',
         '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y).

    Args:
        f: an elementwise function of a tensor.
        x: a 1-D float64 tensor (tf.constant or tf.Variable).

    Returns:
        (dy, d2y, dz): three tensors of x's shape.
    """
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
        z = tf.reduce_sum(y * y)
    d2y = outer.gradient(dy, x)
    dz = outer.gradient(z, x)
    del outer
    return dy, d2y, dz
'''),
    ],
    'predict_traces': [
        ('keys Python numbers by (type, value): an int and a float of equal value (1 and 1.0) are counted as two traces, but tf.function traces them once',
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`.

    Args:
        calls: a list of arguments: Python ints and floats, tf.constant tensors, NumPy arrays.

    Returns:
        A list of ints, one per call: the traces made so far.
    """
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (bool, int, float)):
            key = ("python", type(arg).__name__, arg)
        else:
            key = ("tensor", tf.as_dtype(arg.dtype).name, tuple(arg.shape))
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
        ('keys tensors by (kind of object, dtype, shape): a NumPy array and a tf.constant with the same dtype and shape are counted as two traces, but both have the same TensorSpec',
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`.

    Args:
        calls: a list of arguments: Python ints and floats, tf.constant tensors, NumPy arrays.

    Returns:
        A list of ints, one per call: the traces made so far.
    """
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (bool, int, float)):
            key = ("python", arg)  # by value: 1 and 1.0 are equal, hence one trace
        else:
            key = (type(arg).__name__, tf.as_dtype(arg.dtype).name, tuple(arg.shape))
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
    ],
    'signature_function': [
        ('TensorSpec(shape=None, dtype=tf.float32): one trace for vectors and the int32 vector refused, but a float32 matrix is accepted (and traced again) instead of refused',
         '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length.

    Args:
        fn: a Python function of one float32 vector.

    Returns:
        The tf.function.
    """
    return tf.function(fn, input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32)])
'''),
    ],
    'custom_fit': [
        ("the epoch's loss is the plain mean of the batch losses: right when every batch is full, but a partial last batch counts as much as a full one",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does.

    Args:
        model: a Keras model (not compiled), trained in place.
        x, y: float32 arrays (N, D_in) and (N, D_out).
        epochs, batch_size: as for fit.  lr: SGD's learning rate.

    Returns:
        A list of `epochs` floats: each epoch's loss as fit reports it.
    """
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    loss_fn = keras.losses.MeanSquaredError()
    n = len(x)
    history = []
    for _ in range(epochs):
        batch_losses = []
        for start in range(0, n, batch_size):
            xb = x[start:start + batch_size]
            yb = y[start:start + batch_size]
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            batch_losses.append(float(loss))
        history.append(sum(batch_losses) / len(batch_losses))
    return history
'''),
        ("the batch loss is summed squared error divided by batch_size * D_out with the nominal batch_size: the partial last batch's loss, and its gradient step, are scaled too small",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does.

    Args:
        model: a Keras model (not compiled), trained in place.
        x, y: float32 arrays (N, D_in) and (N, D_out).
        epochs, batch_size: as for fit.  lr: SGD's learning rate.

    Returns:
        A list of `epochs` floats: each epoch's loss as fit reports it.
    """
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    n = len(x)
    history = []
    for _ in range(epochs):
        total = 0.0
        for start in range(0, n, batch_size):
            xb = x[start:start + batch_size]
            yb = y[start:start + batch_size]
            with tf.GradientTape() as tape:
                err = model(xb, training=True) - yb
                loss = tf.reduce_sum(err * err) / (batch_size * y.shape[1])
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss) * len(xb)
        history.append(total / n)
    return history
'''),
    ],
    'tensorboard_scalars': [
        ("read_scalars concatenates the event files in file-name order and does not sort by step: with a resumed run's second file the pairs come out in file order, not by step",
         '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step, value in enumerate(values):
            tf.summary.scalar(tag, value, step=step)
    writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    pairs = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents*"))):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return pairs  # files are named by time, so already in order
'''),
    ],
    'tf_torch_grads': [
        ("the torch weights are built with reshape(out, in) instead of a transpose: same shape, no error, but a different network, so torch's loss and gradients are wrong (Keras' side is right)",
         '''def tf_torch_grads(x, y, w1, b1, w2, b2):
    """The net relu(x @ w1 + b1) @ w2 + b2 built in Keras and in PyTorch from the same weights.

    Args:
        x, y: float64 arrays (N, D_in) and (N, D_out).
        w1, b1, w2, b2: float64 arrays (D_in, H), (H,), (H, D_out), (D_out,).

    Returns:
        {"tf": {...}, "torch": {...}}, each with "loss" (a float) and the gradients of that
        loss "w1", "b1", "w2", "b2" (NumPy arrays, each shaped like the framework's own
        parameter: a Dense kernel is (in, out), an nn.Linear weight (out, in)).
    """
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    d_in, h = w1.shape
    d_out = w2.shape[1]

    dense1 = keras.layers.Dense(h, activation="relu")
    dense2 = keras.layers.Dense(d_out)
    dense1.build((None, d_in))
    dense2.build((None, h))
    dense1.set_weights([w1.astype(np.float32), b1.astype(np.float32)])
    dense2.set_weights([w2.astype(np.float32), b2.astype(np.float32)])
    with tf.GradientTape() as tape:
        pred = dense2(dense1(x32))
        loss = tf.reduce_mean(tf.reduce_sum((pred - y32) ** 2, axis=1))
    g = tape.gradient(loss, [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias])
    tf_out = {"loss": float(loss), "w1": g[0].numpy(), "b1": g[1].numpy(),
              "w2": g[2].numpy(), "b2": g[3].numpy()}

    lin1 = torch.nn.Linear(d_in, h)
    lin2 = torch.nn.Linear(h, d_out)
    with torch.no_grad():
        lin1.weight.copy_(torch.from_numpy(w1.reshape(h, d_in).astype(np.float32)))
        lin1.bias.copy_(torch.from_numpy(b1.astype(np.float32)))
        lin2.weight.copy_(torch.from_numpy(w2.reshape(d_out, h).astype(np.float32)))
        lin2.bias.copy_(torch.from_numpy(b2.astype(np.float32)))
    pred_t = lin2(torch.relu(lin1(torch.from_numpy(x32))))
    loss_t = (pred_t - torch.from_numpy(y32)).pow(2).sum(dim=1).mean()
    loss_t.backward()
    torch_out = {"loss": loss_t.item(), "w1": lin1.weight.grad.numpy(), "b1": lin1.bias.grad.numpy(),
                 "w2": lin2.weight.grad.numpy(), "b2": lin2.bias.grad.numpy()}
    return {"tf": tf_out, "torch": torch_out}
'''),
    ],
}

RIGHT = {
    'tape_train': [
        ('eager loop with a forward helper, tf.nn.relu / tf.square, the updates applied by zipping gradients with the Variables, losses as Python floats turned into an array at the end',
         '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape.

    Returns:
        (losses, w1, w2): NumPy arrays, as tf1_train returns them.
    """
    x = tf.convert_to_tensor(x, dtype=tf.float32)
    y = tf.convert_to_tensor(y, dtype=tf.float32)
    weights = [tf.Variable(np.array(w1, dtype=np.float32)), tf.Variable(np.array(w2, dtype=np.float32))]

    def loss_of(first, second):
        hidden = tf.nn.relu(x @ first)
        return tf.reduce_mean(tf.reduce_sum(tf.square(hidden @ second - y), axis=1))

    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = loss_of(*weights)
        grads = tape.gradient(loss, weights)
        losses.append(float(loss))
        for variable, grad in zip(weights, grads):
            variable.assign_sub(lr * grad)
    return np.array(losses, dtype=np.float32), weights[0].numpy(), weights[1].numpy()
'''),
    ],
    'predict_traces': [
        ('a dict from trace key to trace number; the key built by a helper that normalises dtypes through np.dtype and shapes through tf.TensorShape',
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`.

    Args:
        calls: a list of arguments: Python ints and floats, tf.constant tensors, NumPy arrays.

    Returns:
        A list of ints, one per call: the traces made so far.
    """

    def trace_key(arg):
        if isinstance(arg, (int, float)):
            # Python numbers are part of the key by value; equal values (2 == 2.0) hash alike
            return ("literal", arg)
        dtype = np.dtype(tf.as_dtype(arg.dtype).as_numpy_dtype)
        return ("spec", dtype.str, tuple(tf.TensorShape(arg.shape).as_list()))

    traces = {}
    result = []
    for arg in calls:
        traces.setdefault(trace_key(arg), len(traces) + 1)
        result.append(len(traces))
    return result
'''),
    ],
    'tensorboard_scalars': [
        ('writer flushed and closed in a try/finally; reader with tf.compat.v1.train.summary_iterator over every event file in logdir, pairs sorted by step with a stable sort',
         '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    try:
        with writer.as_default():
            for i in range(len(values)):
                tf.summary.scalar(tag, float(values[i]), step=i)
        writer.flush()
    finally:
        writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    found = []
    for name in sorted(os.listdir(logdir)):
        if "tfevents" not in name:
            continue
        for event in tf1.train.summary_iterator(os.path.join(logdir, name)):
            for value in event.summary.value:
                if value.tag == tag:
                    found.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    found.sort(key=lambda pair: pair[0])
    return found
'''),
    ],
}
