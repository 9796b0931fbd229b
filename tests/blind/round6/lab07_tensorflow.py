"""Lab 07: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "tf1_train": [
        ("runs the update first and fetches the loss in a second sess.run, so losses[t] is the loss after step t instead of before it",
         '''def tf1_train(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer net, as a TF1 static graph run in a session."""
    graph = tf.Graph()
    with graph.as_default():
        x_in = tf1.placeholder(tf.float32, shape=x.shape)
        y_in = tf1.placeholder(tf.float32, shape=y.shape)
        w1_var = tf1.Variable(np.asarray(w1, dtype=np.float32))
        w2_var = tf1.Variable(np.asarray(w2, dtype=np.float32))
        h = tf.maximum(tf.matmul(x_in, w1_var), 0)
        y_pred = tf.matmul(h, w2_var)
        loss = tf.reduce_mean(tf.reduce_sum((y_pred - y_in) ** 2, axis=1))
        grad_w1, grad_w2 = tf1.gradients(loss, [w1_var, w2_var])
        updates = tf.group(w1_var.assign(w1_var - lr * grad_w1),
                           w2_var.assign(w2_var - lr * grad_w2))
        init = tf1.global_variables_initializer()
    feed = {x_in: x, y_in: y}
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(updates, feed_dict=feed)
            losses.append(sess.run(loss, feed_dict=feed))
        w1_final, w2_final = sess.run([w1_var, w2_var])
    return np.array(losses), w1_final, w2_final
'''),
    ],
    "tape_train": [
        ("returns the tf.Variable objects themselves as the final weights instead of NumPy arrays",
         '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    x = tf.constant(x, dtype=tf.float32)
    y = tf.constant(y, dtype=tf.float32)
    w1_var = tf.Variable(w1, dtype=tf.float32)
    w2_var = tf.Variable(w2, dtype=tf.float32)
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, w1_var), 0)
            y_pred = tf.matmul(h, w2_var)
            loss = tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=1))
        grad_w1, grad_w2 = tape.gradient(loss, [w1_var, w2_var])
        w1_var.assign_sub(lr * grad_w1)
        w2_var.assign_sub(lr * grad_w2)
        losses.append(loss.numpy())
    return np.array(losses), w1_var, w2_var
'''),
    ],
    "tape_derivatives": [
        ("copies x into a float32 Variable so the tape watches it automatically, which silently computes all three derivatives in float32 instead of x's float64",
         '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y)."""
    x = tf.Variable(tf.cast(x, tf.float32))
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            y = f(x)
        dy = inner.gradient(y, x)
        z = tf.reduce_sum(y * y)
    d2y = outer.gradient(dy, x)
    dz = outer.gradient(z, x)
    del outer
    return dy, d2y, dz
'''),
    ],
    "predict_traces": [
        ("keys a tensor or NumPy array by its shape only, forgetting that the dtype is part of the trace type (float32 and float64 of one length share a trace)",
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = []
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("python", arg)
        else:
            key = ("tensor", tuple(int(n) for n in arg.shape))
        if key not in seen:
            seen.append(key)
        counts.append(len(seen))
    return counts
'''),
    ],
    "signature_function": [
        ("uses TensorSpec(shape=None, ...), which fixes the dtype but accepts any rank, so a float32 matrix is not refused",
         '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length."""
    return tf.function(fn, input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32)])
'''),
    ],
    "custom_fit": [
        ("reports each epoch's loss as the plain mean of the batch losses, so a smaller last batch weighs as much as a full one",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    history = []
    for _ in range(epochs):
        batch_losses = []
        for start in range(0, len(x), batch_size):
            xb = x[start:start + batch_size]
            yb = y[start:start + batch_size]
            with tf.GradientTape() as tape:
                pred = model(xb, training=True)
                loss = tf.reduce_mean(tf.square(yb - pred))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            batch_losses.append(float(loss))
        history.append(float(np.mean(batch_losses)))
    return history
'''),
        ("trains on the lecture's loss (row sums of squared errors, then the mean over rows) instead of Keras' 'mse', the mean over every element, so steps and losses are D_out times too large",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    n = len(x)
    history = []
    for _ in range(epochs):
        total = 0.0
        for start in range(0, n, batch_size):
            xb = x[start:start + batch_size]
            yb = y[start:start + batch_size]
            with tf.GradientTape() as tape:
                pred = model(xb, training=True)
                loss = tf.reduce_mean(tf.reduce_sum((pred - yb) ** 2, axis=1))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss) * len(xb)
        history.append(total / n)
    return history
'''),
    ],
    "tensorboard_scalars": [
        ("write_scalars makes its writer the global default with set_as_default() and never flushes or closes it, so the records stay in the writer's queue (the default keeps it alive) when the function returns",
         '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    writer.set_as_default()
    for step, value in enumerate(values):
        tf.summary.scalar(tag, value, step=step)


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    pairs = []
    for path in glob.glob(os.path.join(logdir, "events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(pairs, key=lambda pair: pair[0])
'''),
        ("read_scalars concatenates the files in name order and never sorts by step, so later steps in the file whose name sorts first come out before earlier ones",
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
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return pairs
'''),
    ],
    "tf_torch_grads": [
        ("transposes the torch weight gradients back to (in, out) so they line up with Keras', instead of returning them in nn.Linear's own (out, in) layout",
         '''def tf_torch_grads(x, y, w1, b1, w2, b2):
    """The net relu(x @ w1 + b1) @ w2 + b2 built in Keras and in PyTorch from the same weights."""
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    d_in, hidden = w1.shape
    d_out = w2.shape[1]

    dense1 = keras.layers.Dense(hidden, activation="relu")
    dense2 = keras.layers.Dense(d_out)
    dense1.build((None, d_in))
    dense2.build((None, hidden))
    dense1.set_weights([w1.astype(np.float32), b1.astype(np.float32)])
    dense2.set_weights([w2.astype(np.float32), b2.astype(np.float32)])
    with tf.GradientTape() as tape:
        pred = dense2(dense1(x32))
        tf_loss = tf.reduce_mean(tf.reduce_sum((pred - y32) ** 2, axis=1))
    tf_grads = tape.gradient(tf_loss, [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias])

    lin1 = torch.nn.Linear(d_in, hidden)
    lin2 = torch.nn.Linear(hidden, d_out)
    with torch.no_grad():
        lin1.weight.copy_(torch.from_numpy(w1.T.copy()))
        lin1.bias.copy_(torch.from_numpy(b1))
        lin2.weight.copy_(torch.from_numpy(w2.T.copy()))
        lin2.bias.copy_(torch.from_numpy(b2))
    out = lin2(torch.relu(lin1(torch.from_numpy(x32))))
    torch_loss = ((out - torch.from_numpy(y32)) ** 2).sum(dim=1).mean()
    torch_loss.backward()

    return {"tf": {"loss": float(tf_loss),
                   **{name: g.numpy() for name, g in zip(("w1", "b1", "w2", "b2"), tf_grads)}},
            "torch": {"loss": torch_loss.item(),
                      "w1": lin1.weight.grad.numpy().T, "b1": lin1.bias.grad.numpy(),
                      "w2": lin2.weight.grad.numpy().T, "b2": lin2.bias.grad.numpy()}}
'''),
    ],
}

RIGHT = {
    "predict_traces": [
        ("a set of trace keys, relying on Python's own equality and hashing (2 == 2.0 == True share one key), dtype named through tf.as_dtype",
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    def trace_key(arg):
        if isinstance(arg, (bool, int, float)):
            return ("value", arg)
        return ("spec", tf.as_dtype(arg.dtype).name, tuple(int(n) for n in arg.shape))

    cache = set()
    result = []
    for arg in calls:
        cache.add(trace_key(arg))
        result.append(len(cache))
    return result
'''),
    ],
    "custom_fit": [
        ("batches from tf.data.Dataset.batch, per-sample losses summed through keras.losses.mean_squared_error, update written by hand with assign_sub",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    batches = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size)
    variables = model.trainable_variables
    history = []
    for _ in range(epochs):
        loss_sum, seen = 0.0, 0
        for xb, yb in batches:
            with tf.GradientTape() as tape:
                per_sample = keras.losses.mean_squared_error(yb, model(xb, training=True))
                loss = tf.reduce_mean(per_sample)
            for variable, grad in zip(variables, tape.gradient(loss, variables)):
                variable.assign_sub(lr * grad)
            loss_sum += float(tf.reduce_sum(per_sample))
            seen += int(xb.shape[0])
        history.append(loss_sum / seen)
    return history
'''),
    ],
    "tensorboard_scalars": [
        ("the step carried by the writer's default step (as_default(step=0), set_step), the writer closed in a finally; events read with tf.compat.v1.train.summary_iterator, falling back to simple_value",
         '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    try:
        with writer.as_default(step=0):
            for value in values:
                tf.summary.scalar(tag, float(value))
                tf.summary.experimental.set_step(tf.summary.experimental.get_step() + 1)
    finally:
        writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    found = []
    for path in glob.glob(os.path.join(logdir, "*tfevents*")):
        for event in tf1.train.summary_iterator(path):
            for entry in event.summary.value:
                if entry.tag != tag:
                    continue
                if entry.HasField("tensor"):
                    number = tf.make_ndarray(entry.tensor).item()
                else:
                    number = entry.simple_value
                found.append((event.step, float(number)))
    found.sort(key=lambda pair: pair[0])
    return found
'''),
    ],
}
