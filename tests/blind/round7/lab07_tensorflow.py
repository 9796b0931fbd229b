"""Lab 07: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    'tf1_train': [
        ("the lecture's first version: weights fed through placeholders and updated with w1 -= lr * g in NumPy, which overwrites the caller's arrays in place (breaks: leave the arrays you were given as they were; weights kept as Variables)", '''def tf1_train(x, y, w1, w2, lr, steps):
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
        x_ph = tf1.placeholder(tf.float32, shape=x.shape)
        y_ph = tf1.placeholder(tf.float32, shape=y.shape)
        w1_var = tf1.placeholder(tf.float32, shape=w1.shape)
        w2_var = tf1.placeholder(tf.float32, shape=w2.shape)
        h = tf.maximum(tf.matmul(x_ph, w1_var), 0)
        y_pred = tf.matmul(h, w2_var)
        loss = tf.reduce_mean(tf.reduce_sum((y_pred - y_ph) ** 2, axis=1))
        grad_w1, grad_w2 = tf1.gradients(loss, [w1_var, w2_var])
    losses = []
    with tf1.Session(graph=graph) as sess:
        for _ in range(steps):
            feed = {x_ph: x, y_ph: y, w1_var: w1, w2_var: w2}
            loss_value, g1, g2 = sess.run([loss, grad_w1, grad_w2], feed_dict=feed)
            losses.append(loss_value)
            w1 -= lr * g1
            w2 -= lr * g2
        w1_final, w2_final = w1.copy(), w2.copy()
    return np.array(losses, dtype=np.float32), w1_final, w2_final
'''),
    ],
    'tape_train': [
        ('sums the squared errors over the rows (axis=0) and averages over the outputs: the total divided by D_out instead of by N, so loss and step are off whenever N != D_out (breaks: reduce_mean over the rows of the row sums)', '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape.

    Returns:
        (losses, w1, w2): NumPy arrays, as tf1_train returns them.
    """
    x = tf.constant(x, dtype=tf.float32)
    y = tf.constant(y, dtype=tf.float32)
    w1_var = tf.Variable(np.array(w1, dtype=np.float32))
    w2_var = tf.Variable(np.array(w2, dtype=np.float32))
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, w1_var), 0)
            y_pred = tf.matmul(h, w2_var)
            loss = tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=0))
        grad_w1, grad_w2 = tape.gradient(loss, [w1_var, w2_var])
        losses.append(loss.numpy())
        w1_var.assign_sub(lr * grad_w1)
        w2_var.assign_sub(lr * grad_w2)
    return np.array(losses, dtype=np.float32), w1_var.numpy(), w2_var.numpy()
'''),
    ],
    'tape_derivatives': [
        ("casts x to float32 first (TensorFlow's default float) so that the tapes watch a fresh tensor: the derivatives come back float32 and lose float64 precision (breaks: x is a float64 tensor and the results are checked in float64)", '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y).

    Args:
        f: an elementwise function of a tensor.
        x: a 1-D float64 tensor (tf.constant or tf.Variable).

    Returns:
        (dy, d2y, dz): three tensors of x's shape.
    """
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
    'predict_traces': [
        ("keys a Python number by (type, value), so 1 and 1.0 count as two traces although TensorFlow's cache finds them equal (breaks: a Python number counts by its value)", '''def predict_traces(calls):
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
        ("counts a new trace whenever the argument's key differs from the previous call's, as if the cache held one graph: returning to an earlier shape or value counts again (breaks: every traced graph stays cached)", '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`.

    Args:
        calls: a list of arguments: Python ints and floats, tf.constant tensors, NumPy arrays.

    Returns:
        A list of ints, one per call: the traces made so far.
    """
    previous = None
    traces = 0
    counts = []
    for arg in calls:
        if isinstance(arg, (bool, int, float)):
            key = ("python", arg)
        else:
            key = ("tensor", tf.as_dtype(arg.dtype).name, tuple(arg.shape))
        if key != previous:
            traces += 1
            previous = key
        counts.append(traces)
    return counts
'''),
    ],
    'signature_function': [
        ('uses tf.TensorSpec(shape=None, dtype=tf.float32): one trace for every length, but also for any rank, so a float32 matrix is accepted instead of refused (breaks: refuses other ranks with TypeError)', '''def signature_function(fn):
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
        ('loops over range(0, N - batch_size + 1, batch_size), which silently drops the partial last batch (no step on it, not in the epoch loss) (breaks: batches in order, the last one possibly smaller)', '''def custom_fit(model, x, y, epochs, batch_size, lr):
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
        seen = 0
        for start in range(0, n - batch_size + 1, batch_size):
            xb = x[start:start + batch_size]
            yb = y[start:start + batch_size]
            with tf.GradientTape() as tape:
                pred = model(xb, training=True)
                loss = tf.reduce_mean(tf.square(yb - pred))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss) * len(xb)
            seen += len(xb)
        history.append(total / seen)
    return history
'''),
        ('reports the epoch loss as the plain mean of the batch losses, so a smaller last batch weighs as much as a full one (breaks: the mean of the per-sample losses over the epoch)', '''def custom_fit(model, x, y, epochs, batch_size, lr):
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
        batch_losses = []
        for start in range(0, n, batch_size):
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
    ],
    'tensorboard_scalars': [
        ('write_scalars puts its file in a sub-folder named after the tag (one run per folder, misapplied) and read_scalars searches logdir recursively, so it reads its own files back but the event file is not in logdir (breaks: a new event file in logdir)', '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(os.path.join(logdir, tag))
    with writer.as_default():
        for step, value in enumerate(values):
            tf.summary.scalar(tag, value, step=step)
    writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    pairs = []
    for path in glob.glob(os.path.join(logdir, "**", "events*"), recursive=True):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(pairs, key=lambda pair: pair[0])
'''),
    ],
    'tf_torch_grads': [
        ("the Keras side takes its loss from keras.losses.MeanSquaredError, which averages over the outputs too: Keras loss and gradients are 1/D_out of the lecture's (breaks: the mean over the rows of the row sums, in both frameworks)", '''def tf_torch_grads(x, y, w1, b1, w2, b2):
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
    model = keras.Sequential([keras.Input(shape=(d_in,)), dense1, dense2])
    dense1.set_weights([w1.astype(np.float32), b1.astype(np.float32)])
    dense2.set_weights([w2.astype(np.float32), b2.astype(np.float32)])
    params = [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias]
    with tf.GradientTape() as tape:
        pred = model(x32)
        loss = keras.losses.MeanSquaredError()(y32, pred)
    grads = tape.gradient(loss, params)
    tf_result = {"loss": float(loss)}
    tf_result.update({name: g.numpy() for name, g in zip(("w1", "b1", "w2", "b2"), grads)})

    linear1 = torch.nn.Linear(d_in, h)
    linear2 = torch.nn.Linear(h, d_out)
    with torch.no_grad():
        linear1.weight.copy_(torch.from_numpy(w1.T.astype(np.float32)))
        linear1.bias.copy_(torch.from_numpy(b1.astype(np.float32)))
        linear2.weight.copy_(torch.from_numpy(w2.T.astype(np.float32)))
        linear2.bias.copy_(torch.from_numpy(b2.astype(np.float32)))
    pred_t = linear2(torch.relu(linear1(torch.from_numpy(x32))))
    loss_t = ((pred_t - torch.from_numpy(y32)) ** 2).sum(dim=1).mean()
    loss_t.backward()
    torch_result = {"loss": loss_t.item(), "w1": linear1.weight.grad.numpy(), "b1": linear1.bias.grad.numpy(),
                    "w2": linear2.weight.grad.numpy(), "b2": linear2.bias.grad.numpy()}
    return {"tf": tf_result, "torch": torch_result}
'''),
    ],
}

RIGHT = {
    'tape_derivatives': [
        ("reads the argument into one plain tensor with tf.convert_to_tensor (a Variable's value too) and watches that tensor in both tapes, so constants and Variables take the same path", '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y).

    Args:
        f: an elementwise function of a tensor.
        x: a 1-D float64 tensor (tf.constant or tf.Variable).

    Returns:
        (dy, d2y, dz): three tensors of x's shape.
    """
    point = tf.convert_to_tensor(x)
    outer = tf.GradientTape(persistent=True)
    with outer:
        outer.watch(point)
        inner = tf.GradientTape()
        with inner:
            inner.watch(point)
            y = f(point)
            sum_y = tf.reduce_sum(y)
        dy = inner.gradient(sum_y, point)
        sum_dy = tf.reduce_sum(dy)
        z = tf.reduce_sum(y * y)
    d2y = outer.gradient(sum_dy, point)
    dz = outer.gradient(z, point)
    del outer
    return dy, d2y, dz
'''),
    ],
    'predict_traces': [
        ('a dict from trace key to trace number (a model of the cache), with dtypes normalised through NumPy (tf.float32 and np.float32 agree) and Python numbers keyed by value, so 1 and 1.0 hit the same entry', '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`.

    Args:
        calls: a list of arguments: Python ints and floats, tf.constant tensors, NumPy arrays.

    Returns:
        A list of ints, one per call: the traces made so far.
    """
    cache = {}
    result = []

    def trace_key(arg):
        if isinstance(arg, (int, float)):          # Python numbers: by value (1 == 1.0)
            return ("literal", arg)
        dtype = getattr(arg.dtype, "as_numpy_dtype", arg.dtype)
        return ("tensor", np.dtype(dtype).str, tuple(int(d) for d in arg.shape))

    for arg in calls:
        cache.setdefault(trace_key(arg), len(cache) + 1)
        result.append(len(cache))
    return result
'''),
    ],
    'signature_function': [
        ('tf.function used as a decorator factory on a wrapper, with a positional TensorSpec([None], tf.float32) in a tuple and reduce_retracing spelled out as False', '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length.

    Args:
        fn: a Python function of one float32 vector.

    Returns:
        The tf.function.
    """
    vector = tf.TensorSpec([None], tf.float32, name="vector")

    @tf.function(input_signature=(vector,), reduce_retracing=False)
    def wrapped(v):
        return fn(v)

    return wrapped
'''),
    ],
}
