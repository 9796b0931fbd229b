"""Lab 07: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "tf1_train": [
        ("each step runs the update first and then fetches the loss in a second sess.run: losses[t] is the loss after step t, not before it",
         '''def tf1_train(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer net, as a TF1 static graph run in a session."""
    graph = tf.Graph()
    with graph.as_default():
        x_in = tf1.placeholder(tf.float32, shape=x.shape)
        y_in = tf1.placeholder(tf.float32, shape=y.shape)
        v1 = tf1.Variable(np.array(w1, dtype=np.float32))
        v2 = tf1.Variable(np.array(w2, dtype=np.float32))
        h = tf.maximum(tf.matmul(x_in, v1), 0)
        loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, v2) - y_in) ** 2, axis=1))
        g1, g2 = tf1.gradients(loss, [v1, v2])
        train_op = tf.group(v1.assign(v1 - lr * g1), v2.assign(v2 - lr * g2))
        init = tf1.global_variables_initializer()
    feed = {x_in: x, y_in: y}
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(train_op, feed_dict=feed)
            losses.append(sess.run(loss, feed_dict=feed))
        new_w1, new_w2 = sess.run([v1, v2])
    return np.array(losses, dtype=np.float32), new_w1, new_w2
'''),
    ],
    "tape_train": [
        ("the loss is tf.reduce_mean((y_pred - y) ** 2), the mean over every element (Keras' MSE), not the mean over rows of the row sums: D_out times too small unless D_out == 1",
         '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    x = tf.constant(x, dtype=tf.float32)
    y = tf.constant(y, dtype=tf.float32)
    v1 = tf.Variable(np.array(w1, dtype=np.float32))
    v2 = tf.Variable(np.array(w2, dtype=np.float32))
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, v1), 0)
            loss = tf.reduce_mean((tf.matmul(h, v2) - y) ** 2)
        g1, g2 = tape.gradient(loss, [v1, v2])
        losses.append(float(loss))
        v1.assign_sub(lr * g1)
        v2.assign_sub(lr * g2)
    return np.array(losses), v1.numpy(), v2.numpy()
'''),
    ],
    "tape_derivatives": [
        ("only the inner tape watches x: for a tf.constant x the outer persistent tape records nothing, so d2y and dz come back None (right only when x is a Variable)",
         '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y)."""
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
    "predict_traces": [
        ("a Python number is keyed by (type, value): an int and a float of equal value (2 and 2.0) are counted as two traces, though the cache keys numbers by value",
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("python", type(arg).__name__, arg)
        else:
            key = ("tensor", tf.as_dtype(arg.dtype).name, tuple(arg.shape))
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
        ("tensors are keyed by (kind, dtype, shape) with kind 'numpy' or 'tf': a NumPy array and a tf.constant of the same dtype and shape are counted as two traces, though both have the same trace type",
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("python", arg)
        elif isinstance(arg, np.ndarray):
            key = ("numpy", str(arg.dtype), arg.shape)
        else:
            key = ("tf", arg.dtype.name, tuple(arg.shape.as_list()))
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
    ],
    "signature_function": [
        ("input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32)]: one trace for every length, but shape=None means any rank, so a float32 matrix is accepted instead of refused",
         '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length."""
    return tf.function(fn, input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32)])
'''),
    ],
    "custom_fit": [
        ("the epoch's loss is the mean of the batch losses, each batch counting once: differs from fit's per-sample mean when the last batch is partial",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    loss_fn = keras.losses.MeanSquaredError()
    history = []
    for _ in range(epochs):
        batch_losses = []
        for start in range(0, len(x), batch_size):
            xb, yb = x[start:start + batch_size], y[start:start + batch_size]
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            batch_losses.append(float(loss))
        history.append(float(np.mean(batch_losses)))
    return history
'''),
        ("batches start at range(0, len(x) - batch_size + 1, batch_size): the partial last batch is never trained on (a drop_last that fit does not do)",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    history = []
    for _ in range(epochs):
        total, count = 0.0, 0
        for start in range(0, len(x) - batch_size + 1, batch_size):
            xb, yb = x[start:start + batch_size], y[start:start + batch_size]
            with tf.GradientTape() as tape:
                per_sample = tf.reduce_mean(tf.square(yb - model(xb, training=True)), axis=-1)
                loss = tf.reduce_mean(per_sample)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(tf.reduce_sum(per_sample))
            count += len(xb)
        history.append(total / count)
    return history
'''),
    ],
    "tensorboard_scalars": [
        ("read_scalars keeps every scalar value of every event, whatever its tag: with two tags in the files the other tag's values come back too",
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
            for value in event.summary.value:      # the first event (file version) has none
                pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(pairs, key=lambda pair: pair[0])
'''),
    ],
    "tf_torch_grads": [
        ("the torch weights are made with torch.from_numpy(w).reshape(out, in) instead of a transpose: right shapes, scrambled weights, so torch's loss and gradients are another network's",
         '''def tf_torch_grads(x, y, w1, b1, w2, b2):
    """The net relu(x @ w1 + b1) @ w2 + b2 built in Keras and in PyTorch from the same weights."""
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    d_in, h = w1.shape
    d_out = w2.shape[1]

    dense1 = keras.layers.Dense(h, activation="relu")
    dense2 = keras.layers.Dense(d_out)
    dense1.build((None, d_in))
    dense2.build((None, h))
    dense1.set_weights([w1.astype(np.float32), b1.astype(np.float32)])
    dense2.set_weights([w2.astype(np.float32), b2.astype(np.float32)])
    variables = [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias]
    with tf.GradientTape() as tape:
        pred = dense2(dense1(x32))
        tf_loss = tf.reduce_mean(tf.reduce_sum((pred - y32) ** 2, axis=1))
    tf_grads = tape.gradient(tf_loss, variables)

    lin1 = torch.nn.Linear(d_in, h)
    lin2 = torch.nn.Linear(h, d_out)
    with torch.no_grad():
        lin1.weight.copy_(torch.from_numpy(w1.astype(np.float32)).reshape(h, d_in))
        lin1.bias.copy_(torch.from_numpy(b1.astype(np.float32)))
        lin2.weight.copy_(torch.from_numpy(w2.astype(np.float32)).reshape(d_out, h))
        lin2.bias.copy_(torch.from_numpy(b2.astype(np.float32)))
    out = lin2(torch.relu(lin1(torch.from_numpy(x32))))
    torch_loss = ((out - torch.from_numpy(y32)) ** 2).sum(dim=1).mean()
    torch_loss.backward()

    names = ("w1", "b1", "w2", "b2")
    result = {"tf": {"loss": float(tf_loss)}, "torch": {"loss": torch_loss.item()}}
    for name, g in zip(names, tf_grads):
        result["tf"][name] = np.asarray(g)
    for name, p in zip(names, (lin1.weight, lin1.bias, lin2.weight, lin2.bias)):
        result["torch"][name] = p.grad.numpy().copy()
    return result
'''),
    ],
}

RIGHT = {
    "tape_train": [
        ("the update goes through keras.optimizers.SGD(learning_rate=lr).apply_gradients (plain SGD: w -= lr * g, no momentum) instead of assign_sub; the row-sum loss written with tf.square and tf.nn.relu",
         '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    xs = tf.convert_to_tensor(x, dtype=tf.float32)
    ys = tf.convert_to_tensor(y, dtype=tf.float32)
    weights = [tf.Variable(tf.constant(w1, dtype=tf.float32)),
               tf.Variable(tf.constant(w2, dtype=tf.float32))]
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    losses = np.zeros(steps, dtype=np.float32)
    for t in range(steps):
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(xs @ weights[0])
            loss = tf.reduce_mean(tf.reduce_sum(tf.square(hidden @ weights[1] - ys), axis=1))
        losses[t] = loss.numpy()
        optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
    return losses, weights[0].numpy(), weights[1].numpy()
'''),
    ],
    "custom_fit": [
        ("batches come from tf.data.Dataset.from_tensor_slices(...).batch(batch_size) (in order, last one partial); the epoch loss is a sum of per-sample losses divided by the number of samples",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    batches = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size)

    def train_batch(xb, yb):
        with tf.GradientTape() as tape:
            per_sample = keras.losses.mean_squared_error(yb, model(xb, training=True))
            loss = tf.reduce_mean(per_sample)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return tf.reduce_sum(per_sample)

    history = []
    for _ in range(epochs):
        epoch_sum = 0.0
        for xb, yb in batches:
            epoch_sum += float(train_batch(xb, yb))
        history.append(epoch_sum / len(x))
    return history
'''),
    ],
    "tensorboard_scalars": [
        ("read side uses tf.compat.v1.train.summary_iterator over the files found with os.listdir, and sorts the (step, value) list in place; the writer is flushed and closed in a try/finally",
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
    for name in os.listdir(logdir):
        if "tfevents" not in name:
            continue
        for event in tf1.train.summary_iterator(os.path.join(logdir, name)):
            for v in event.summary.value:
                if v.tag != tag:
                    continue
                if v.HasField("tensor"):
                    value = tf.make_ndarray(v.tensor).item()
                else:
                    value = v.simple_value
                found.append((event.step, float(value)))
    found.sort(key=lambda item: item[0])
    return found
'''),
    ],
}
