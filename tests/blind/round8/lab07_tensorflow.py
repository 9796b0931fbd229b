"""Lab 07: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    'tf1_train': [
        ("runs each training step as two sess.run calls (first fetch the loss, then run the update group): same numbers, but every step computes the forward pass twice and breaks 'each one sess.run with a feed_dict'", '''def tf1_train(x, y, w1, w2, lr, steps):
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
        w1_var = tf1.Variable(np.array(w1, dtype=np.float32))
        w2_var = tf1.Variable(np.array(w2, dtype=np.float32))
        h = tf.maximum(tf.matmul(x_in, w1_var), 0)
        y_pred = tf.matmul(h, w2_var)
        loss = tf.reduce_mean(tf.reduce_sum((y_pred - y_in) ** 2, axis=1))
        grad_w1, grad_w2 = tf1.gradients(loss, [w1_var, w2_var])
        updates = tf.group(w1_var.assign(w1_var - lr * grad_w1), w2_var.assign(w2_var - lr * grad_w2))
        init = tf1.global_variables_initializer()
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        feed = {x_in: x, y_in: y}
        for _ in range(steps):
            loss_value = sess.run(loss, feed_dict=feed)
            sess.run(updates, feed_dict=feed)
            losses.append(loss_value)
        w1_final, w2_final = sess.run([w1_var, w2_var])
    return np.array(losses, dtype=np.float32), w1_final, w2_final
'''),
    ],
    'tape_train': [
        ("opens one persistent GradientTape around the whole loop instead of one tape per step: the numbers match, but the tape keeps every step's forward (and assign) ops alive, so memory grows with steps", '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape.

    Returns:
        (losses, w1, w2): NumPy arrays, as tf1_train returns them.
    """
    x, y = tf.constant(x), tf.constant(y)
    w1_var, w2_var = tf.Variable(np.array(w1)), tf.Variable(np.array(w2))
    losses = []
    with tf.GradientTape(persistent=True) as tape:
        for _ in range(steps):
            h = tf.maximum(tf.matmul(x, w1_var), 0)
            loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2_var) - y) ** 2, axis=1))
            g1, g2 = tape.gradient(loss, [w1_var, w2_var])
            losses.append(loss.numpy())
            w1_var.assign_sub(lr * g1)
            w2_var.assign_sub(lr * g2)
    return np.array(losses, dtype=np.float32), w1_var.numpy(), w2_var.numpy()
'''),
    ],
    'tape_derivatives': [
        ('returns dy, d2y, dz as NumPy arrays (.numpy()) although the docstring promises three tensors; values, dtype and shape are right', '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y).

    Args:
        f: an elementwise function of a tensor.
        x: a 1-D float64 tensor (tf.constant or tf.Variable).

    Returns:
        (dy, d2y, dz): three tensors of x's shape.
    """
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
        ('keys Python numbers by float(value) so that 1 and 1.0 share a trace: right for small numbers, but distinct ints above 2**53 (e.g. 2**53 and 2**53 + 1) collapse to one float and are predicted to share a trace, while tf.function keys them by their (different) values', '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`.

    Args:
        calls: a list of arguments: Python ints and floats, tf.constant tensors, NumPy arrays.

    Returns:
        A list of ints, one per call: the traces made so far.
    """
    seen = set()
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("python", float(arg))
        else:
            key = ("tensor", tf.as_dtype(arg.dtype).name, tuple(arg.shape))
        seen.add(key)
        counts.append(len(seen))
    return counts
'''),
    ],
    'signature_function': [
        ('builds the tf.function with autograph=False: one trace for every length and the dtype/rank refusals work, but a fn with a Python `if`/`while` on a tensor is no longer converted to graph control flow and fails when traced', '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length.

    Args:
        fn: a Python function of one float32 vector.

    Returns:
        The tf.function.
    """
    return tf.function(fn, input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)],
                       autograph=False)
'''),
    ],
    'custom_fit': [
        ('calls the model with training=False in the loop (it only has Dense layers here): identical for this net, but fit runs model(x, training=True), so a model with Dropout or BatchNorm would be trained differently', '''def custom_fit(model, x, y, epochs, batch_size, lr):
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
            xb, yb = x[start:start + batch_size], y[start:start + batch_size]
            with tf.GradientTape() as tape:
                pred = model(xb, training=False)
                loss = tf.reduce_mean(tf.square(pred - yb))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss) * len(xb)
        history.append(total / n)
    return history
'''),
        ('reports the epoch loss as the plain mean of the batch losses: equal when batches divide N, but a smaller last batch is over-weighted instead of averaging the per-sample losses over the epoch', '''def custom_fit(model, x, y, epochs, batch_size, lr):
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
            xb, yb = x[start:start + batch_size], y[start:start + batch_size]
            with tf.GradientTape() as tape:
                pred = model(xb, training=True)
                loss = tf.reduce_mean(tf.square(pred - yb))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            batch_losses.append(float(loss))
        history.append(sum(batch_losses) / len(batch_losses))
    return history
'''),
    ],
    'tensorboard_scalars': [
        ("read_scalars matches tags with `tag in value.tag`: fine when the tags are unrelated, but reading 'loss' also returns 'val_loss' or 'loss/eval' scalars", '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step, value in enumerate(values):
            tf.summary.scalar(tag, value, step=step)
    writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    pairs = []
    for path in glob.glob(os.path.join(logdir, "events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if tag in value.tag:
                    pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(pairs, key=lambda pair: pair[0])
'''),
        ("read_scalars opens every file in logdir (glob '*'), not only event files: a logdir that also holds another file or a run subfolder (as TensorBoard layouts often do) makes TFRecordDataset fail or read garbage", '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step, value in enumerate(values):
            tf.summary.scalar(tag, value, step=step)
    writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    pairs = []
    for path in glob.glob(os.path.join(logdir, "*")):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((int(event.step), float(tf.make_ndarray(value.tensor))))
    return sorted(pairs, key=lambda pair: pair[0])
'''),
    ],
    'tf_torch_grads': [
        ("sets keras.backend.set_floatx('float64') to avoid the float32 casts and never restores it: the gradients are right (even more precise), but every Keras layer built afterwards in the session is float64", '''def tf_torch_grads(x, y, w1, b1, w2, b2):
    """The net relu(x @ w1 + b1) @ w2 + b2 built in Keras and in PyTorch from the same weights.

    Args:
        x, y: float64 arrays (N, D_in) and (N, D_out).
        w1, b1, w2, b2: float64 arrays (D_in, H), (H,), (H, D_out), (D_out,).

    Returns:
        {"tf": {...}, "torch": {...}}, each with "loss" (a float) and the gradients of that
        loss "w1", "b1", "w2", "b2" (NumPy arrays, each shaped like the framework's own
        parameter: a Dense kernel is (in, out), an nn.Linear weight (out, in)).
    """
    keras.backend.set_floatx("float64")
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    d_in, h = w1.shape
    d_out = w2.shape[1]
    dense1 = keras.layers.Dense(h, activation="relu")
    dense2 = keras.layers.Dense(d_out)
    dense1.build((None, d_in))
    dense2.build((None, h))
    dense1.set_weights([w1, b1])
    dense2.set_weights([w2, b2])
    with tf.GradientTape() as tape:
        pred = dense2(dense1(x))
        loss = tf.reduce_mean(tf.reduce_sum((pred - y) ** 2, axis=1))
    variables = [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias]
    grads = tape.gradient(loss, variables)
    tf_result = {"loss": float(loss)}
    for name, g in zip(["w1", "b1", "w2", "b2"], grads):
        tf_result[name] = np.asarray(g)

    lin1, lin2 = torch.nn.Linear(d_in, h), torch.nn.Linear(h, d_out)
    with torch.no_grad():
        lin1.weight.copy_(torch.from_numpy(w1.T.astype(np.float32)))
        lin1.bias.copy_(torch.from_numpy(b1.astype(np.float32)))
        lin2.weight.copy_(torch.from_numpy(w2.T.astype(np.float32)))
        lin2.bias.copy_(torch.from_numpy(b2.astype(np.float32)))
    xt, yt = torch.from_numpy(x32), torch.from_numpy(y32)
    loss_t = ((lin2(torch.relu(lin1(xt))) - yt) ** 2).sum(dim=1).mean()
    loss_t.backward()
    torch_result = {"loss": float(loss_t), "w1": lin1.weight.grad.numpy(), "b1": lin1.bias.grad.numpy(),
                    "w2": lin2.weight.grad.numpy(), "b2": lin2.bias.grad.numpy()}
    return {"tf": tf_result, "torch": torch_result}
'''),
    ],
}

RIGHT = {
    'tape_train': [
        ('lets keras.optimizers.SGD(learning_rate=lr).apply_gradients do the update instead of assign_sub, and reads the loss with float()', '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape.

    Returns:
        (losses, w1, w2): NumPy arrays, as tf1_train returns them.
    """
    x = tf.convert_to_tensor(x, dtype=tf.float32)
    y = tf.convert_to_tensor(y, dtype=tf.float32)
    weights = [tf.Variable(tf.constant(w1, dtype=tf.float32)), tf.Variable(tf.constant(w2, dtype=tf.float32))]
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    losses = np.zeros(steps, dtype=np.float32)
    for t in range(steps):
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(x @ weights[0])
            loss = tf.reduce_mean(tf.reduce_sum(tf.square(hidden @ weights[1] - y), axis=1))
        losses[t] = float(loss)
        optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
    return losses, weights[0].numpy(), weights[1].numpy()
'''),
    ],
    'predict_traces': [
        ('keeps a list of the trace types seen and searches it linearly, describing tensors by tf.TensorSpec (shape and dtype) and numbers by value', '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`.

    Args:
        calls: a list of arguments: Python ints and floats, tf.constant tensors, NumPy arrays.

    Returns:
        A list of ints, one per call: the traces made so far.
    """
    traced = []
    result = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            signature = ("number", arg)          # a Python number: its value (1 == 1.0)
        else:
            signature = ("tensor", tf.TensorSpec(shape=tuple(arg.shape), dtype=tf.as_dtype(arg.dtype)))
        if not any(kind == signature[0] and spec == signature[1] for kind, spec in traced):
            traced.append(signature)
        result.append(len(traced))
    return result
'''),
    ],
    'tensorboard_scalars': [
        ('writes under a context-managed writer with explicit flush, and reads with tf.compat.v1.train.summary_iterator (the TF1 event reader) instead of TFRecordDataset', '''def write_scalars(logdir, tag, values):
    """Log values[i] under `tag` at step i, in an event file in `logdir`."""
    writer = tf.summary.create_file_writer(logdir)
    try:
        with writer.as_default(step=0):
            for step, value in enumerate(values):
                tf.summary.scalar(tag, float(value), step=step)
        writer.flush()
    finally:
        writer.close()


def read_scalars(logdir, tag):
    """The (step, value) pairs logged under `tag` in the event files in `logdir`, by step."""
    found = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        for event in tf1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag != tag:
                    continue
                if value.HasField("tensor"):
                    number = tf.make_ndarray(value.tensor).item()
                else:
                    number = value.simple_value
                found.append((event.step, float(number)))
    found.sort(key=lambda item: item[0])
    return found
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
    ('custom_fit', 0): (
        "not a mistake the checks may take points for: the accepted alternative 'tf.data "
        "batches, an explicit mean loss, Keras' Mean metric' calls model(xb) without "
        "training=True, which Keras runs in inference mode just as training=False; only a "
        "Dropout or BatchNorm model tells either from fit, and it would take the alternative's "
        "points as well"
    ),
    ('predict_traces', 0): (
        "not a mistake the checks may take points for: round 5's right answer keys numbers by "
        "float(value) too, and the two differ from tf.function only for distinct ints above "
        "2**53, which the text's examples never reach"
    ),
    ('signature_function', 0): _METHOD,
    ('tape_train', 0): _METHOD,
    ('tf1_train', 0): _METHOD,
    ('tf_torch_grads', 0): _METHOD,
}
