"""Lab 07: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "tf1_train": [
        ("loss fetched after the update in a second sess.run: losses[t] is the loss after step t", '''def tf1_train(x, y, w1, w2, lr, steps):
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
        step = tf.group(w1_var.assign(w1_var - lr * grad_w1),
                        w2_var.assign(w2_var - lr * grad_w2))
        init = tf1.global_variables_initializer()
    feed = {x_in: x, y_in: y}
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(step, feed_dict=feed)
            losses.append(sess.run(loss, feed_dict=feed))
        w1_out, w2_out = sess.run([w1_var, w2_var])
    return np.array(losses, dtype=np.float32), w1_out, w2_out
'''),
    ],
    "tape_train": [
        ("no tf.Variable: watches constants and updates the caller's NumPy weights in place (inputs mutated)", '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    x_t = tf.constant(x, dtype=tf.float32)
    y_t = tf.constant(y, dtype=tf.float32)
    losses = []
    for _ in range(steps):
        w1_t = tf.constant(w1)
        w2_t = tf.constant(w2)
        with tf.GradientTape() as tape:
            tape.watch([w1_t, w2_t])
            h = tf.maximum(tf.matmul(x_t, w1_t), 0)
            loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2_t) - y_t) ** 2, axis=1))
        g1, g2 = tape.gradient(loss, [w1_t, w2_t])
        w1 -= lr * g1.numpy()          # NumPy arrays are mutable: update in place
        w2 -= lr * g2.numpy()
        losses.append(loss.numpy())
    return np.array(losses), w1, w2
'''),
    ],
    "tape_derivatives": [
        ("inner gradient taken after the outer tape closed: the outer tape never saw it, d2y is None", '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y)."""
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        z = tf.reduce_sum(y * y)
    dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    dz = outer.gradient(z, x)
    del outer
    return dy, d2y, dz
'''),
    ],
    "predict_traces": [
        ("applies reduce_retracing's relaxation to a default tf.function: no new trace after the second shape", '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    relaxed = set()        # (dtype, rank) whose shape has been generalised
    traces = 0
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("python", arg)
            if key not in seen:
                seen.add(key)
                traces += 1
        else:
            dtype = arg.dtype.name
            shape = tuple(int(d) for d in arg.shape)
            key = ("tensor", dtype, shape)
            if key not in seen and (dtype, len(shape)) not in relaxed:
                shapes_so_far = {k[2] for k in seen if k[0] == "tensor" and k[1] == dtype
                                 and len(k[2]) == len(shape)}
                seen.add(key)
                traces += 1
                if shapes_so_far:        # second shape: the signature becomes [None]
                    relaxed.add((dtype, len(shape)))
        counts.append(traces)
    return counts
'''),
        ("a NumPy array and a tf.constant of the same dtype and shape counted as different trace types", '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("python", arg)
        elif isinstance(arg, np.ndarray):
            key = ("numpy", arg.dtype.name, arg.shape)
        else:
            key = ("tensor", arg.dtype.name, tuple(arg.shape.as_list()))
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
    ],
    "signature_function": [
        ("casts every input to float32 before the signed function: int32 vectors accepted instead of refused", '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length."""
    graph_fn = tf.function(fn, input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)])

    def call(vector):
        return graph_fn(tf.cast(vector, tf.float32))   # accept ints and float64 too

    return call
'''),
    ],
    "custom_fit": [
        ("epoch loss as the plain mean of batch losses: the partial last batch weighs as much as a full one", '''def custom_fit(model, x, y, epochs, batch_size, lr):
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
    "tensorboard_scalars": [
        ("read_scalars reads only the newest event file: a resumed run's first file is lost", '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step, value in enumerate(values):
            tf.summary.scalar(tag, value, step=step)
    writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    files = sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")), key=os.path.getmtime)
    pairs = []
    for record in tf.data.TFRecordDataset(files[-1]):     # the current run's file
        event = tf1.Event.FromString(record.numpy())
        for value in event.summary.value:
            if value.tag == tag:
                pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(pairs, key=lambda pair: pair[0])
'''),
        ("steps counted from 1 (epoch numbers) instead of i", '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for epoch, value in enumerate(values, start=1):
            tf.summary.scalar(tag, value, step=epoch)
        writer.flush()
    writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    pairs = []
    for path in glob.glob(os.path.join(logdir, "*tfevents*")):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(pairs, key=lambda pair: pair[0])
'''),
    ],
    "tf_torch_grads": [
        ("torch weight gradients transposed back to the (in, out) layout 'to match Keras'", '''def tf_torch_grads(x, y, w1, b1, w2, b2):
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
        pred = dense2(dense1(tf.constant(x32)))
        tf_loss = tf.reduce_mean(tf.reduce_sum((pred - y32) ** 2, axis=1))
    tf_grads = tape.gradient(tf_loss, [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias])

    lin1 = torch.nn.Linear(d_in, hidden)
    lin2 = torch.nn.Linear(hidden, d_out)
    with torch.no_grad():
        lin1.weight.copy_(torch.from_numpy(w1.T.astype(np.float32)))
        lin1.bias.copy_(torch.from_numpy(b1.astype(np.float32)))
        lin2.weight.copy_(torch.from_numpy(w2.T.astype(np.float32)))
        lin2.bias.copy_(torch.from_numpy(b2.astype(np.float32)))
    out = lin2(torch.relu(lin1(torch.from_numpy(x32))))
    torch_loss = ((out - torch.from_numpy(y32)) ** 2).sum(dim=1).mean()
    torch_loss.backward()

    names = ("w1", "b1", "w2", "b2")
    tf_part = {"loss": float(tf_loss)}
    tf_part.update({n: np.asarray(g) for n, g in zip(names, tf_grads)})
    torch_part = {"loss": float(torch_loss),
                  "w1": lin1.weight.grad.numpy().T, "b1": lin1.bias.grad.numpy(),
                  "w2": lin2.weight.grad.numpy().T, "b2": lin2.bias.grad.numpy()}
    return {"tf": tf_part, "torch": torch_part}
'''),
    ],
}

RIGHT = {
    "predict_traces": [
        ("a set of trace keys, its size after each call; equal numbers (1 == 1.0) and NaNs share a key", '''import math


def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    traced = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (bool, int, float)):
            # a Python number is keyed by its value; tf.function matches NaN with NaN
            key = ("nan",) if isinstance(arg, float) and math.isnan(arg) else ("value", arg)
        else:
            # tensors and NumPy arrays alike: dtype and shape
            key = ("tensor", arg.dtype.name, tuple(int(d) for d in arg.shape))
        traced.add(key)
        counts.append(len(traced))
    return counts
'''),
    ],
    "tape_derivatives": [
        ("tape objects entered by hand, scalar targets built inside the outer tape", '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y)."""
    outer = tf.GradientTape(persistent=True)
    with outer:
        outer.watch(x)
        inner = tf.GradientTape()
        with inner:
            inner.watch(x)
            y = f(x)
            total = tf.reduce_sum(y)
        dy = inner.gradient(total, x)
        dy_total = tf.reduce_sum(dy)
        z = tf.reduce_sum(tf.square(y))
    d2y = outer.gradient(dy_total, x)
    dz = outer.gradient(z, x)
    del outer
    return dy, d2y, dz
'''),
    ],
    "custom_fit": [
        ("tf.data batches and a hand-written SGD update (assign_sub), sample-weighted epoch mean", '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    batches = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size)
    history = []
    for _ in range(epochs):
        weighted_sum, seen = 0.0, 0
        for xb, yb in batches:
            with tf.GradientTape() as tape:
                error = yb - model(xb, training=True)
                loss = tf.reduce_mean(tf.reduce_mean(tf.square(error), axis=-1))
            variables = model.trainable_variables
            for variable, grad in zip(variables, tape.gradient(loss, variables)):
                variable.assign_sub(lr * grad)
            rows = int(xb.shape[0])
            weighted_sum += float(loss) * rows
            seen += rows
        history.append(weighted_sum / seen)
    return history
'''),
    ],
}
