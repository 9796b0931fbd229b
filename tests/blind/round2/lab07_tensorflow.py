"""Lab 07: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "tf1_train": [
        ("runs the update first and fetches the loss in a second sess.run: losses[t] is the loss "
         "after step t, not before",
         '''def tf1_train(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer net, as a TF1 static graph run in a session."""
    graph = tf.Graph()
    with graph.as_default():
        x_in = tf1.placeholder(tf.float32, shape=x.shape)
        y_in = tf1.placeholder(tf.float32, shape=y.shape)
        w1_var = tf1.Variable(w1, dtype=tf.float32)
        w2_var = tf1.Variable(w2, dtype=tf.float32)
        h = tf.maximum(tf.matmul(x_in, w1_var), 0)
        y_pred = tf.matmul(h, w2_var)
        loss = tf.reduce_mean(tf.reduce_sum((y_pred - y_in) ** 2, axis=1))
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
        w1_final, w2_final = sess.run([w1_var, w2_var])
    return np.array(losses), w1_final, w2_final
'''),
        ("loss written as tf.reduce_mean of the squared errors (the mean over every element), not "
         "the mean over rows of the row sums: loss and steps are D_out times too small",
         '''def tf1_train(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer net, as a TF1 static graph run in a session."""
    graph = tf.Graph()
    with graph.as_default():
        x_in = tf1.placeholder(tf.float32, shape=x.shape)
        y_in = tf1.placeholder(tf.float32, shape=y.shape)
        w1_var = tf1.Variable(w1, dtype=tf.float32)
        w2_var = tf1.Variable(w2, dtype=tf.float32)
        h = tf.maximum(tf.matmul(x_in, w1_var), 0)
        y_pred = tf.matmul(h, w2_var)
        loss = tf.reduce_mean((y_pred - y_in) ** 2)
        grad_w1, grad_w2 = tf1.gradients(loss, [w1_var, w2_var])
        train_op = tf.group(w1_var.assign(w1_var - lr * grad_w1),
                            w2_var.assign(w2_var - lr * grad_w2))
        init = tf1.global_variables_initializer()
    feed = {x_in: x, y_in: y}
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            loss_value, _ = sess.run([loss, train_op], feed_dict=feed)
            losses.append(loss_value)
        w1_final, w2_final = sess.run([w1_var, w2_var])
    return np.array(losses), w1_final, w2_final
'''),
    ],
    "tape_derivatives": [
        ("casts x to float32 first (tf.cast, then watch): right shapes and nearly the right "
         "values, but float32 where the exercise works in float64",
         '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y)."""
    x = tf.cast(x, tf.float32)
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
    return dy, d2y, dz
'''),
    ],
    "predict_traces": [
        ("Python numbers keyed by (type, value): an int and a float of equal value are counted "
         "as two traces",
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("python", type(arg).__name__, arg)
        else:
            key = ("tensor", arg.dtype.name, tuple(arg.shape))
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
        ("NumPy arrays counted apart from tf.constant tensors of the same dtype and shape",
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, np.ndarray):
            key = ("numpy", arg.dtype.name, arg.shape)
        elif tf.is_tensor(arg):
            key = ("tensor", arg.dtype.name, tuple(arg.shape))
        else:
            key = ("python", arg)
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
    ],
    "signature_function": [
        ("TensorSpec(shape=None, dtype=tf.float32): one trace for every float32 vector, but a "
         "float32 matrix is accepted instead of refused",
         '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length."""
    return tf.function(fn, input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32)])
'''),
    ],
    "custom_fit": [
        ("epoch loss = plain mean of the batch losses: a smaller last batch counts as much as a "
         "full one",
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
        ("len(x) // batch_size batches per epoch: the partial last batch is never trained on "
         "nor counted",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    loss_fn = keras.losses.MeanSquaredError()
    steps = len(x) // batch_size
    history = []
    for _ in range(epochs):
        total, seen = 0.0, 0
        for step in range(steps):
            xb = x[step * batch_size:(step + 1) * batch_size]
            yb = y[step * batch_size:(step + 1) * batch_size]
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss) * len(xb)
            seen += len(xb)
        history.append(total / seen)
    return history
'''),
    ],
    "tensorboard_scalars": [
        ("read_scalars reads the files in sorted-name order and returns the events in file "
         "order, trusting that this is step order (no sort by step)",
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
    for path in sorted(glob.glob(os.path.join(logdir, "*tfevents*"))):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return pairs   # file names start with a timestamp, so this is already step order
'''),
    ],
    "tf_torch_grads": [
        ("torch weights built with reshape to (out, in) instead of a transpose: right shapes, "
         "another network",
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
    variables = [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias]
    with tf.GradientTape() as tape:
        pred = dense2(dense1(x32))
        loss_tf = tf.reduce_mean(tf.reduce_sum((pred - y32) ** 2, axis=1))
    grads_tf = tape.gradient(loss_tf, variables)

    linear1 = torch.nn.Linear(d_in, hidden)
    linear2 = torch.nn.Linear(hidden, d_out)
    with torch.no_grad():
        linear1.weight.copy_(torch.from_numpy(w1.reshape(hidden, d_in)))
        linear1.bias.copy_(torch.from_numpy(b1))
        linear2.weight.copy_(torch.from_numpy(w2.reshape(d_out, hidden)))
        linear2.bias.copy_(torch.from_numpy(b2))
    pred_t = linear2(torch.relu(linear1(torch.from_numpy(x32))))
    loss_t = ((pred_t - torch.from_numpy(y32)) ** 2).sum(dim=1).mean()
    loss_t.backward()

    names = ("w1", "b1", "w2", "b2")
    result_tf = {"loss": float(loss_tf)}
    result_tf.update({name: g.numpy() for name, g in zip(names, grads_tf)})
    params = (linear1.weight, linear1.bias, linear2.weight, linear2.bias)
    result_torch = {"loss": loss_t.item()}
    result_torch.update({name: p.grad.numpy() for name, p in zip(names, params)})
    return {"tf": result_tf, "torch": result_torch}
'''),
    ],
}

RIGHT = {
    "tape_train": [
        ("tf.nn.relu and tf.square, `w.assign(w - lr * g)` instead of assign_sub, losses "
         "preallocated in a NumPy array",
         '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    x_t = tf.convert_to_tensor(x)
    y_t = tf.convert_to_tensor(y)
    weights = [tf.Variable(np.array(w1, copy=True)), tf.Variable(np.array(w2, copy=True))]
    losses = np.zeros(steps, dtype=np.float32)
    for t in range(steps):
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(x_t @ weights[0])
            errors = tf.square(hidden @ weights[1] - y_t)
            loss = tf.reduce_mean(tf.reduce_sum(errors, axis=1))
        grads = tape.gradient(loss, weights)
        for w, g in zip(weights, grads):
            w.assign(w - lr * g)
        losses[t] = loss.numpy()
    return losses, weights[0].numpy(), weights[1].numpy()
'''),
    ],
    "predict_traces": [
        ("trace types built as tf.TensorSpec objects (NumPy and tf alike) and Python values; the "
         "cache is a list searched with ==",
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    specs, numbers, result = [], [], []
    for arg in calls:
        if isinstance(arg, np.ndarray) or tf.is_tensor(arg):
            spec = tf.TensorSpec(shape=arg.shape, dtype=arg.dtype)
            if spec not in specs:
                specs.append(spec)
        elif arg not in numbers:       # a Python number: by value, so 2 == 2.0
            numbers.append(arg)
        result.append(len(specs) + len(numbers))
    return result
'''),
    ],
    "custom_fit": [
        ("no Keras optimizer or loss object: the loss written as reduce_mean(square(...)) and "
         "the SGD step as assign_sub on each trainable variable; sample-weighted epoch mean",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    n = x.shape[0]
    history = []
    for epoch in range(epochs):
        weighted_sum = 0.0
        for start in range(0, n, batch_size):
            stop = min(start + batch_size, n)
            xb = tf.constant(x[start:stop])
            yb = tf.constant(y[start:stop])
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(yb - model(xb, training=True)))
            variables = model.trainable_variables
            for variable, grad in zip(variables, tape.gradient(loss, variables)):
                variable.assign_sub(lr * grad)
            weighted_sum += loss.numpy().item() * (stop - start)
        history.append(weighted_sum / n)
    return history
'''),
    ],
}
