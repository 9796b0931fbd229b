"""Lab 07: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'tf1_train': [
        ("Runs the update first and then fetches the loss in a second sess.run, so losses[t] is the loss after step t, breaking \"losses[t] is the loss *before* step t\".", '''def tf1_train(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer net, as a TF1 static graph run in a session."""
    graph = tf.Graph()
    with graph.as_default():
        x_in = tf1.placeholder(tf.float32, shape=x.shape)
        y_in = tf1.placeholder(tf.float32, shape=y.shape)
        w1_var = tf1.Variable(w1)
        w2_var = tf1.Variable(w2)
        h = tf.maximum(tf.matmul(x_in, w1_var), 0)
        loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2_var) - y_in) ** 2, axis=1))
        grad_w1, grad_w2 = tf1.gradients(loss, [w1_var, w2_var])
        train_op = tf.group(w1_var.assign(w1_var - lr * grad_w1),
                            w2_var.assign(w2_var - lr * grad_w2))
        init = tf1.global_variables_initializer()
    feed = {x_in: x, y_in: y}
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(train_op, feed_dict=feed)
            losses.append(sess.run(loss, feed_dict=feed))
        final_w1, final_w2 = sess.run([w1_var, w2_var])
    return np.array(losses), final_w1, final_w2
'''),
        ("Runs the two assign nodes in two separate sess.run calls instead of one grouped run, so w2's gradient is recomputed after w1 has already moved, breaking \"a training step is one sess.run that ... runs the updates, grouped with tf.group\" (every step's w2 update is off).", '''def tf1_train(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer net, as a TF1 static graph run in a session."""
    graph = tf.Graph()
    with graph.as_default():
        x_in = tf1.placeholder(tf.float32, shape=x.shape)
        y_in = tf1.placeholder(tf.float32, shape=y.shape)
        w1_var = tf1.Variable(w1)
        w2_var = tf1.Variable(w2)
        h = tf.maximum(tf.matmul(x_in, w1_var), 0)
        loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2_var) - y_in) ** 2, axis=1))
        grad_w1, grad_w2 = tf1.gradients(loss, [w1_var, w2_var])
        update_w1 = w1_var.assign(w1_var - lr * grad_w1)
        update_w2 = w2_var.assign(w2_var - lr * grad_w2)
        init = tf1.global_variables_initializer()
    feed = {x_in: x, y_in: y}
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            loss_value, _ = sess.run([loss, update_w1], feed_dict=feed)
            sess.run(update_w2, feed_dict=feed)
            losses.append(loss_value)
        final_w1, final_w2 = sess.run([w1_var, w2_var])
    return np.array(losses), final_w1, final_w2
'''),
    ],
    'tape_train': [
        ("Keeps the weights as the NumPy arrays it was given (watched as constants) and updates them with `w1 -= lr * g`, which writes into the caller's arrays, breaking \"the arrays you are given stay as they were\" (and the text's Variables).", '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    x, y = tf.constant(x), tf.constant(y)
    losses = []
    for _ in range(steps):
        w1_t, w2_t = tf.constant(w1), tf.constant(w2)
        with tf.GradientTape() as tape:
            tape.watch([w1_t, w2_t])
            h = tf.maximum(tf.matmul(x, w1_t), 0)
            loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2_t) - y) ** 2, axis=1))
        grad_w1, grad_w2 = tape.gradient(loss, [w1_t, w2_t])
        losses.append(loss.numpy())
        w1 -= lr * grad_w1.numpy()
        w2 -= lr * grad_w2.numpy()
    return np.array(losses), w1, w2
'''),
    ],
    'tape_derivatives': [
        ("Returns dy, d2y and dz converted with .numpy(), so the values are right but the results are NumPy arrays, breaking \"(dy, d2y, dz): three tensors of x's shape\".", '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y)."""
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
        z = tf.reduce_sum(y * y)
    d2y = outer.gradient(dy, x)
    dz = outer.gradient(z, x)
    del outer
    return dy.numpy(), d2y.numpy(), dz.numpy()
'''),
    ],
    'predict_traces': [
        ("Keys a Python number by (type, value), so 1 and 1.0 are predicted to trace twice, whereas the text's rule is that a Python number counts by its value (and 1 == 1.0 share a trace).", '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (tf.Tensor, np.ndarray)):
            key = ("tensor", tf.as_dtype(arg.dtype).name, tuple(arg.shape))
        else:
            key = ("python", type(arg).__name__, arg)
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
        ("Keys tensors and arrays by shape alone, so a float32 and a float64 vector of the same length are predicted to share a trace, breaking \"a tensor or NumPy array counts by dtype and shape\".", '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("value", arg)
        else:
            key = ("shape", tuple(arg.shape))
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
    ],
    'signature_function': [
        ("Uses tf.TensorSpec(shape=None, dtype=tf.float32), which fixes the dtype but accepts any rank, so a float32 matrix is traced instead of refused, breaking \"refuses other dtypes and ranks\".", '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length."""
    return tf.function(fn, input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32)])
'''),
    ],
    'custom_fit': [
        ("Reports each epoch's loss as the plain mean of the batch losses, which over-weights a smaller last batch, breaking \"the mean of the per-sample losses over the epoch\".", '''def custom_fit(model, x, y, epochs, batch_size, lr):
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
    ],
    'tensorboard_scalars': [
        ("read_scalars walks the event files in name order and concatenates their records without sorting by step, so when the later steps sit in the file whose name sorts first they come out first, breaking \"returns the scalars ... sorted by step\".", '''def write_scalars(logdir, tag, values):
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
        if not os.path.isfile(path):
            continue
        for record in tf.data.TFRecordDataset(path):
            event = tf.compat.v1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((event.step, float(tf.make_ndarray(value.tensor))))
    return pairs
'''),
    ],
    'tf_torch_grads': [
        ("Computes the Keras loss with keras.losses.MeanSquaredError(), the mean over every element, which divides the lecture's loss (mean over rows of the row sums) by D_out on the Keras side, so its loss and gradients are D_out times too small.", '''def tf_torch_grads(x, y, w1, b1, w2, b2):
    """The net relu(x @ w1 + b1) @ w2 + b2 built in Keras and in PyTorch from the same weights."""
    x32, y32 = x.astype(np.float32), y.astype(np.float32)

    dense1 = keras.layers.Dense(w1.shape[1], activation="relu")
    dense2 = keras.layers.Dense(w2.shape[1])
    dense1.build((None, w1.shape[0]))
    dense2.build((None, w2.shape[0]))
    dense1.set_weights([w1, b1])
    dense2.set_weights([w2, b2])
    params = [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias]
    with tf.GradientTape() as tape:
        loss = keras.losses.MeanSquaredError()(y32, dense2(dense1(x32)))
    grads = tape.gradient(loss, params)
    tf_result = {"loss": float(loss)}
    for name, g in zip(("w1", "b1", "w2", "b2"), grads):
        tf_result[name] = g.numpy()

    lin1 = torch.nn.Linear(w1.shape[0], w1.shape[1])
    lin2 = torch.nn.Linear(w2.shape[0], w2.shape[1])
    with torch.no_grad():
        lin1.weight.copy_(torch.from_numpy(w1.T))
        lin1.bias.copy_(torch.from_numpy(b1))
        lin2.weight.copy_(torch.from_numpy(w2.T))
        lin2.bias.copy_(torch.from_numpy(b2))
    pred = lin2(torch.relu(lin1(torch.from_numpy(x32))))
    t_loss = ((pred - torch.from_numpy(y32)) ** 2).sum(dim=1).mean()
    t_loss.backward()
    torch_result = {"loss": t_loss.item(), "w1": lin1.weight.grad.numpy(), "b1": lin1.bias.grad.numpy(),
                    "w2": lin2.weight.grad.numpy(), "b2": lin2.bias.grad.numpy()}
    return {"tf": tf_result, "torch": torch_result}
'''),
    ],
}

RIGHT = {
    'tape_train': [
        ("Updates the Variables with w.assign(w - lr * g) instead of assign_sub, uses tf.nn.relu, and collects the losses as floats before converting once at the end.", '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    x_t = tf.convert_to_tensor(x)
    y_t = tf.convert_to_tensor(y)
    weights = [tf.Variable(w1), tf.Variable(w2)]     # Variables copy the arrays
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            y_pred = tf.nn.relu(x_t @ weights[0]) @ weights[1]
            loss = tf.reduce_mean(tf.reduce_sum(tf.square(y_pred - y_t), axis=1))
        grads = tape.gradient(loss, weights)
        losses.append(float(loss))
        for w, g in zip(weights, grads):
            w.assign(w - lr * g)
    return np.array(losses, dtype=np.float32), weights[0].numpy(), weights[1].numpy()
'''),
    ],
    'predict_traces': [
        ("Keeps a list of the trace keys seen and tests membership with ==, so 1 and 1.0 match as equal values, and describes a tensor or array by (dtype name, shape) through np.dtype instead of tf.as_dtype.", '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    keys = []
    counts = []
    for arg in calls:
        if hasattr(arg, "shape") and hasattr(arg, "dtype"):
            dtype = arg.dtype.as_numpy_dtype if isinstance(arg, tf.Tensor) else arg.dtype
            key = ("array", np.dtype(dtype).name, tuple(int(n) for n in arg.shape))
        else:
            key = ("number", arg)
        if key not in keys:
            keys.append(key)
        counts.append(len(keys))
    return counts
'''),
    ],
    'tensorboard_scalars': [
        ("Writes with an explicit flush inside the writer's context, and reads with tf.compat.v1.train.summary_iterator over the files whose names contain tfevents, sorting by step with a key.", '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step in range(len(values)):
            tf.summary.scalar(tag, float(values[step]), step=step)
        writer.flush()
    writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    found = []
    for name in os.listdir(logdir):
        path = os.path.join(logdir, name)
        if "tfevents" not in name or not os.path.isfile(path):
            continue
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    found.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(found, key=lambda pair: pair[0])
'''),
    ],
}
