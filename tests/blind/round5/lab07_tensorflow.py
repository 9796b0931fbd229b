"""Lab 07: answers written from the released notebook's text alone (blind corpus, round 5)."""


def _sub(src, old, new):
    assert src.count(old) == 1, old
    return src.replace(old, new)


_TF1 = '''def tf1_train(x, y, w1, w2, lr, steps):
    """Gradient descent on the two-layer net, as a TF1 static graph run in a session."""
    graph = tf.Graph()
    with graph.as_default():
        xp = tf1.placeholder(tf.float32, shape=x.shape)
        yp = tf1.placeholder(tf.float32, shape=y.shape)
        v1 = tf1.Variable(np.array(w1, dtype=np.float32))
        v2 = tf1.Variable(np.array(w2, dtype=np.float32))
        h = tf.maximum(tf.matmul(xp, v1), 0)
        loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, v2) - yp) ** 2, axis=1))
        g1, g2 = tf1.gradients(loss, [v1, v2])
        update = tf.group(v1.assign(v1 - lr * g1), v2.assign(v2 - lr * g2))
        init = tf1.global_variables_initializer()
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        feed = {xp: x, yp: y}
        for _ in range(steps):
            loss_value, _ = sess.run([loss, update], feed_dict=feed)
            losses.append(loss_value)
        w1_out, w2_out = sess.run([v1, v2])
    return np.array(losses), w1_out, w2_out
'''

_TAPE = '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    x = tf.constant(x, dtype=tf.float32)
    y = tf.constant(y, dtype=tf.float32)
    v1 = tf.Variable(np.array(w1, dtype=np.float32))
    v2 = tf.Variable(np.array(w2, dtype=np.float32))
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, v1), 0)
            loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, v2) - y) ** 2, axis=1))
        g1, g2 = tape.gradient(loss, [v1, v2])
        losses.append(loss.numpy())
        v1.assign_sub(lr * g1)
        v2.assign_sub(lr * g2)
    return np.array(losses), v1.numpy(), v2.numpy()
'''

_DERIV = '''def tape_derivatives(f, x):
    """First and second derivative of y = f(x), and the gradient of z = sum(y * y)."""
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(tf.reduce_sum(y), x)
        z = tf.reduce_sum(y * y)
        s = tf.reduce_sum(dy)
    d2y = outer.gradient(s, x)
    dz = outer.gradient(z, x)
    del outer
    return dy, d2y, dz
'''

_PRED = '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    seen = set()
    out = []
    for arg in calls:
        if isinstance(arg, (bool, int, float)):
            key = ("python", arg)            # by value: 1 and 1.0 are equal keys
        else:
            key = ("tensor", np.dtype(arg.dtype.as_numpy_dtype if hasattr(arg.dtype, "as_numpy_dtype") else arg.dtype).name,
                   tuple(arg.shape))
        seen.add(key)
        out.append(len(seen))
    return out
'''

_SIG = '''def signature_function(fn):
    """`fn` as a tf.function traced once for float32 vectors of any length."""
    return tf.function(fn, input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)])
'''

_FIT = '''def custom_fit(model, x, y, epochs, batch_size, lr):
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
                loss = tf.reduce_mean(tf.square(yb - pred))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss) * len(xb)
        history.append(total / n)
    return history
'''

_TB = '''def write_scalars(logdir, tag, values):
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
    return sorted(pairs, key=lambda p: p[0])
'''

_TT = '''def tf_torch_grads(x, y, w1, b1, w2, b2):
    """The net relu(x @ w1 + b1) @ w2 + b2 built in Keras and in PyTorch from the same weights."""
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    d1 = keras.layers.Dense(w1.shape[1], activation="relu")
    d2 = keras.layers.Dense(w2.shape[1])
    d1.build((None, w1.shape[0]))
    d2.build((None, w2.shape[0]))
    d1.set_weights([w1.astype(np.float32), b1.astype(np.float32)])
    d2.set_weights([w2.astype(np.float32), b2.astype(np.float32)])
    params = [d1.kernel, d1.bias, d2.kernel, d2.bias]
    with tf.GradientTape() as tape:
        pred = d2(d1(x32))
        loss = tf.reduce_mean(tf.reduce_sum(tf.square(pred - y32), axis=1))
    grads = tape.gradient(loss, params)
    tf_out = {"loss": float(loss)}
    for name, g in zip(("w1", "b1", "w2", "b2"), grads):
        tf_out[name] = np.asarray(g)

    l1 = torch.nn.Linear(w1.shape[0], w1.shape[1])
    l2 = torch.nn.Linear(w2.shape[0], w2.shape[1])
    with torch.no_grad():
        l1.weight.copy_(torch.from_numpy(w1.T.astype(np.float32)))
        l1.bias.copy_(torch.from_numpy(b1.astype(np.float32)))
        l2.weight.copy_(torch.from_numpy(w2.T.astype(np.float32)))
        l2.bias.copy_(torch.from_numpy(b2.astype(np.float32)))
    pred_t = l2(torch.relu(l1(torch.from_numpy(x32))))
    loss_t = ((pred_t - torch.from_numpy(y32)) ** 2).sum(dim=1).mean()
    loss_t.backward()
    torch_out = {"loss": float(loss_t), "w1": l1.weight.grad.numpy(), "b1": l1.bias.grad.numpy(),
                 "w2": l2.weight.grad.numpy(), "b2": l2.bias.grad.numpy()}
    return {"tf": tf_out, "torch": torch_out}
'''

WRONG = {
    "tf1_train": [
        ("runs the update first and fetches the loss in a second sess.run: losses[t] is the loss after step t, not before it (off by one)",
         _sub(_TF1, '''            loss_value, _ = sess.run([loss, update], feed_dict=feed)''', '''            sess.run(update, feed_dict=feed)
            loss_value = sess.run(loss, feed_dict=feed)''')),
    ],
    "tape_train": [
        ("loss summed over rows as well (tf.reduce_sum of everything) instead of the mean over rows of the row sums: loss and step N times too large",
         _sub(_TAPE, "loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, v2) - y) ** 2, axis=1))", "loss = tf.reduce_sum((tf.matmul(h, v2) - y) ** 2)")),
    ],
    "tape_derivatives": [
        ("z = reduce_sum(y * y) is formed after the outer tape's block closes: the outer tape did not record it and dz comes back None",
         _sub(_DERIV, '''        z = tf.reduce_sum(y * y)
        s = tf.reduce_sum(dy)
    d2y''', '''        s = tf.reduce_sum(dy)
    z = tf.reduce_sum(y * y)
    d2y''')),
    ],
    "predict_traces": [
        ("Python numbers keyed by (type, value): an int and a float of equal value (1 and 1.0) are predicted as two traces, TensorFlow makes one",
         _sub(_PRED, '''key = ("python", arg)''', '''key = ("python", type(arg).__name__, arg)''')),
    ],
    "signature_function": [
        ("TensorSpec(shape=None, dtype=tf.float32): one dtype enforced but any rank accepted, so a float32 matrix is traced instead of refused with TypeError",
         _sub(_SIG, "tf.TensorSpec(shape=[None], dtype=tf.float32)", "tf.TensorSpec(shape=None, dtype=tf.float32)")),
    ],
    "custom_fit": [
        ("epoch loss = plain mean of the batch losses: equal to fit's per-sample mean only when every batch is full (wrong with a partial last batch)",
         _sub(_sub(_FIT, "total += float(loss) * len(xb)", "total += float(loss)"),
              "history.append(total / n)", "history.append(total / len(range(0, n, batch_size)))")),
        ("keras.optimizers.SGD() built without the lr argument: trains at the default 0.01 whatever lr is given",
         _sub(_FIT, "keras.optimizers.SGD(learning_rate=lr)", "keras.optimizers.SGD()")),
    ],
    "tensorboard_scalars": [
        ("write_scalars numbers the steps from 1 (enumerate(values, start=1), as epochs are counted): every value is logged one step late",
         _sub(_TB, "for step, value in enumerate(values):", "for step, value in enumerate(values, start=1):")),
        ("read_scalars ignores its tag argument: with two tags in the files, it returns the other tag's scalars too",
         _sub(_TB, "                if value.tag == tag:\n                    pairs.append", "                if True:\n                    pairs.append")),
    ],
    "tf_torch_grads": [
        ("returns torch's weight gradients transposed to Keras' (in, out) layout 'for easy comparison': not the shape of nn.Linear's weight",
         _sub(_TT, '''"w1": l1.weight.grad.numpy(), "b1": l1.bias.grad.numpy(),
                 "w2": l2.weight.grad.numpy()''', '''"w1": l1.weight.grad.numpy().T, "b1": l1.bias.grad.numpy(),
                 "w2": l2.weight.grad.numpy().T''')),
    ],
}

RIGHT = {
    "predict_traces": [
        ("rule as a dict of trace keys, numbers normalised with float() so 1 and 1.0 coincide, arrays via np.asarray(...).dtype",
         '''def predict_traces(calls):
    """The number of traces a fresh tf.function has made after each call in `calls`."""
    traces = {}
    counts = []
    for arg in calls:
        if isinstance(arg, (int, float)):
            key = ("number", float(arg))
        else:
            arr = np.asarray(arg)
            key = ("tensor", str(arr.dtype), arr.shape)
        traces.setdefault(key, len(traces) + 1)
        counts.append(len(traces))
    return counts
'''),
    ],
    "custom_fit": [
        ("keras.losses.MeanSquaredError object and a running sample-weighted sum accumulated in a tf.Variable-free Python float, batches from np.array_split-like index slices",
         '''def custom_fit(model, x, y, epochs, batch_size, lr):
    """Train `model` with SGD on the mean squared error, as model.fit(shuffle=False) does."""
    mse = keras.losses.MeanSquaredError()
    opt = keras.optimizers.SGD(learning_rate=lr)
    bounds = list(range(0, len(x), batch_size)) + [len(x)]
    losses = []
    for _ in range(epochs):
        seen, weighted = 0, 0.0
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            xb, yb = tf.constant(x[lo:hi]), tf.constant(y[lo:hi])
            with tf.GradientTape() as tape:
                batch_loss = mse(yb, model(xb, training=True))
            variables = model.trainable_variables
            opt.apply_gradients(zip(tape.gradient(batch_loss, variables), variables))
            weighted += batch_loss.numpy() * (hi - lo)
            seen += hi - lo
        losses.append(float(weighted / seen))
    return losses
'''),
    ],
    "tape_train": [
        ("tf.nn.relu and tf.square, one tape.gradient call over a list of Variables and a zip loop of assign_sub",
         '''def tape_train(x, y, w1, w2, lr, steps):
    """Exercise 1's gradient descent, eagerly, with tf.Variable and tf.GradientTape."""
    xt = tf.convert_to_tensor(x, dtype=tf.float32)
    yt = tf.convert_to_tensor(y, dtype=tf.float32)
    weights = [tf.Variable(tf.constant(w, dtype=tf.float32)) for w in (w1, w2)]
    losses = np.zeros(steps, dtype=np.float32)
    for t in range(steps):
        with tf.GradientTape() as tape:
            pred = tf.nn.relu(xt @ weights[0]) @ weights[1]
            loss = tf.reduce_mean(tf.reduce_sum(tf.square(pred - yt), axis=1))
        losses[t] = loss.numpy()
        for w, g in zip(weights, tape.gradient(loss, weights)):
            w.assign_sub(lr * g)
    return losses, weights[0].numpy(), weights[1].numpy()
'''),
    ],
}
