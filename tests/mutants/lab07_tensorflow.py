"""Realistic wrong answers for lab07_tensorflow: each must lose points in its checks cell."""


def _edit(base: str, old: str, new: str) -> str:
    assert base.count(old) == 1, old
    return base.replace(old, new)


_TF1 = '''def tf1_train(x, y, w1, w2, lr, steps):
    graph = tf.Graph()
    with graph.as_default():
        x_in = tf1.placeholder(tf.float32, shape=(None, x.shape[1]))
        y_in = tf1.placeholder(tf.float32, shape=(None, y.shape[1]))
        w1_var = tf1.Variable(w1)
        w2_var = tf1.Variable(w2)
        h = tf.maximum(tf.matmul(x_in, w1_var), 0)
        y_pred = tf.matmul(h, w2_var)
        loss = tf.reduce_mean(tf.reduce_sum((y_pred - y_in) ** 2, axis=1))
        grad_w1, grad_w2 = tf1.gradients(loss, [w1_var, w2_var])
        update = tf.group(w1_var.assign(w1_var - lr * grad_w1),
                          w2_var.assign(w2_var - lr * grad_w2))
        init = tf1.global_variables_initializer()
    losses = []
    with tf1.Session(graph=graph) as sess:
        sess.run(init)
        feed = {x_in: x, y_in: y}
        for _ in range(steps):
            loss_value, _ = sess.run([loss, update], feed_dict=feed)
            losses.append(loss_value)
        w1_final, w2_final = sess.run([w1_var, w2_var])
    return np.array(losses), w1_final, w2_final
'''

_TAPE = '''def tape_train(x, y, w1, w2, lr, steps):
    x, y = tf.constant(x), tf.constant(y)
    w1, w2 = tf.Variable(w1), tf.Variable(w2)
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, w1), 0)
            y_pred = tf.matmul(h, w2)
            loss = tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=1))
        grad_w1, grad_w2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(lr * grad_w1)
        w2.assign_sub(lr * grad_w2)
        losses.append(loss.numpy())
    return np.array(losses), w1.numpy(), w2.numpy()
'''

_DERIVATIVES = '''def tape_derivatives(f, x):
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
'''

_PREDICT = '''def predict_traces(calls):
    seen = set()
    counts = []
    for argument in calls:
        if isinstance(argument, (tf.Tensor, np.ndarray)):
            key = ("tensor", tf.as_dtype(argument.dtype).name, tuple(argument.shape))
        else:
            key = ("python", argument)
        seen.add(key)
        counts.append(len(seen))
    return counts
'''

_SIGNATURE = '''def signature_function(fn):
    return tf.function(fn, input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)])
'''

_FIT = '''def custom_fit(model, x, y, epochs, batch_size, lr):
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    loss_fn = keras.losses.MeanSquaredError()
    n = len(x)
    history = []
    for _ in range(epochs):
        total = 0.0
        for start in range(0, n, batch_size):
            x_batch, y_batch = x[start:start + batch_size], y[start:start + batch_size]
            with tf.GradientTape() as tape:
                loss = loss_fn(y_batch, model(x_batch, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss) * len(x_batch)
        history.append(total / n)
    return history
'''

_WRITE = '''def write_scalars(logdir, tag, values):
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step, value in enumerate(values):
            tf.summary.scalar(tag, value, step=step)
    writer.close()
'''

_READ = '''

def read_scalars(logdir, tag):
    pairs = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        for record in tf.data.TFRecordDataset(path):
            event = tf1.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.tag == tag:
                    pairs.append((event.step, float(tf.make_ndarray(value.tensor))))
    return sorted(pairs)
'''

_TENSORBOARD = _WRITE + _READ

_TF_TORCH = '''def tf_torch_grads(x, y, w1, b1, w2, b2):
    x, y = x.astype(np.float32), y.astype(np.float32)
    names = ("w1", "b1", "w2", "b2")
    dense1 = keras.layers.Dense(w1.shape[1], activation="relu")
    dense2 = keras.layers.Dense(w2.shape[1])
    model = keras.Sequential([keras.Input((w1.shape[0],)), dense1, dense2])
    model.set_weights([w1, b1, w2, b2])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.reduce_sum((model(x) - y) ** 2, axis=1))
    params = [dense1.kernel, dense1.bias, dense2.kernel, dense2.bias]
    grads = tape.gradient(loss, params)
    result = {"tf": {"loss": float(loss), **{n: g.numpy() for n, g in zip(names, grads)}}}
    linear1 = torch.nn.Linear(w1.shape[0], w1.shape[1])
    linear2 = torch.nn.Linear(w2.shape[0], w2.shape[1])
    with torch.no_grad():
        linear1.weight.copy_(torch.from_numpy(w1.T))
        linear1.bias.copy_(torch.from_numpy(b1))
        linear2.weight.copy_(torch.from_numpy(w2.T))
        linear2.bias.copy_(torch.from_numpy(b2))
    y_pred = linear2(torch.relu(linear1(torch.from_numpy(x))))
    loss = ((y_pred - torch.from_numpy(y)) ** 2).sum(dim=1).mean()
    loss.backward()
    params = [linear1.weight, linear1.bias, linear2.weight, linear2.bias]
    result["torch"] = {"loss": loss.item(), **{n: p.grad.numpy() for n, p in zip(names, params)}}
    return result
'''

MUTANTS = {
    "tf1_train": [
        ("writes the final weights into the caller's w1 and w2 too (its inputs changed)",
         _edit(_TF1, "    return np.array(losses), w1_final, w2_final\n",
               "    w1[...], w2[...] = w1_final, w2_final\n"
               "    return np.array(losses), w1_final, w2_final\n")),
        ("the loss summed over rows instead of averaged (reduce_sum for reduce_mean)",
         _edit(_TF1, "loss = tf.reduce_mean(tf.reduce_sum((y_pred - y_in) ** 2, axis=1))",
               "loss = tf.reduce_sum(tf.reduce_sum((y_pred - y_in) ** 2, axis=1))")),
        ("runs the update first and the loss in a second sess.run (losses after each step)",
         _edit(_TF1, "loss_value, _ = sess.run([loss, update], feed_dict=feed)",
               "sess.run(update, feed_dict=feed)\n"
               "            loss_value = sess.run(loss, feed_dict=feed)")),
        ("forgets the ReLU", _edit(_TF1, "h = tf.maximum(tf.matmul(x_in, w1_var), 0)",
                                   "h = tf.matmul(x_in, w1_var)")),
        ("returns the initial weights (the arrays passed in)",
         _edit(_TF1, "return np.array(losses), w1_final, w2_final",
               "return np.array(losses), w1, w2")),
        ("computes the gradients with a GradientTape instead of tf.gradients", '''def tf1_train(x, y, w1, w2, lr, steps):
    x, y = tf.constant(x), tf.constant(y)
    w1, w2 = tf.Variable(w1), tf.Variable(w2)
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, w1), 0)
            loss = tf.reduce_mean(tf.reduce_sum((tf.matmul(h, w2) - y) ** 2, axis=1))
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(lr * g1)
        w2.assign_sub(lr * g2)
        losses.append(loss.numpy())
    return np.array(losses), w1.numpy(), w2.numpy()
'''),
        ("builds the graph in the eager default context (no tf.Graph().as_default())",
         _edit(_TF1, "    with graph.as_default():\n", "    if True:\n")),
    ],
    "tape_train": [
        ("returns the tf.Variables themselves as the final weights, not NumPy arrays",
         _edit(_TAPE, "    return np.array(losses), w1.numpy(), w2.numpy()\n",
               "    return np.array(losses), w1, w2\n")),
        ("writes the final weights into the caller's w1 and w2 too (its inputs changed)",
         _edit(_edit(_TAPE, "    w1, w2 = tf.Variable(w1), tf.Variable(w2)\n",
                     "    given_w1, given_w2 = w1, w2\n    w1, w2 = tf.Variable(w1), tf.Variable(w2)\n"),
               "    return np.array(losses), w1.numpy(), w2.numpy()\n",
               "    given_w1[...], given_w2[...] = w1.numpy(), w2.numpy()\n"
               "    return np.array(losses), w1.numpy(), w2.numpy()\n")),
        ("rebinds w1 = w1 - lr * g: a plain tensor the next tape does not watch",
         _edit(_edit(_TAPE, "w1.assign_sub(lr * grad_w1)", "w1 = w1 - lr * grad_w1"),
               "w2.assign_sub(lr * grad_w2)", "w2 = w2 - lr * grad_w2")),
        ("the forward pass outside the tape (no gradients recorded)",
         _edit(_TAPE, '''        with tf.GradientTape() as tape:
            h = tf.maximum(tf.matmul(x, w1), 0)
            y_pred = tf.matmul(h, w2)
            loss = tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=1))
''', '''        h = tf.maximum(tf.matmul(x, w1), 0)
        y_pred = tf.matmul(h, w2)
        loss = tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=1))
        with tf.GradientTape() as tape:
            pass
''')),
        ("the mean over every element (tf.reduce_mean of the squares)",
         _edit(_TAPE, "loss = tf.reduce_mean(tf.reduce_sum((y_pred - y) ** 2, axis=1))",
               "loss = tf.reduce_mean((y_pred - y) ** 2)")),
        ("assign instead of assign_sub (the weights become the step)",
         _edit(_edit(_TAPE, "w1.assign_sub(lr * grad_w1)", "w1.assign(lr * grad_w1)"),
               "w2.assign_sub(lr * grad_w2)", "w2.assign(lr * grad_w2)")),
        ("reuses the TF1 session answer", '''def tape_train(x, y, w1, w2, lr, steps):
    return tf1_train(x, y, w1, w2, lr, steps)
'''),
    ],
    "tape_derivatives": [
        ("returns NumPy arrays (.numpy()) instead of tensors",
         _edit(_DERIVATIVES, "    return dy, d2y, dz", "    return dy.numpy(), d2y.numpy(), dz.numpy()")),
        ("the outer tape is not persistent: the second gradient raises",
         _edit(_DERIVATIVES, "tf.GradientTape(persistent=True) as outer",
               "tf.GradientTape() as outer")),
        ("never watches x (a constant is not watched by itself)",
         _edit(_edit(_DERIVATIVES, "        outer.watch(x)\n", ""),
               "            inner.watch(x)\n", "")),
        ("the inner gradient taken after the outer tape stopped recording",
         _edit(_edit(_DERIVATIVES, "        dy = inner.gradient(y, x)\n", ""),
               "    d2y = outer.gradient(dy, x)",
               "    dy = inner.gradient(y, x)\n    d2y = outer.gradient(dy, x)")),
        ("d2y asks the outer tape for the gradient of y again (a first derivative)",
         _edit(_DERIVATIVES, "d2y = outer.gradient(dy, x)", "d2y = outer.gradient(y, x)")),
        ("dz as 2 * y (forgets the chain rule through f)",
         _edit(_DERIVATIVES, "dz = outer.gradient(z, x)", "dz = 2 * y")),
    ],
    "predict_traces": [
        ("reduce_retracing's rule: after a second shape, one relaxed trace serves every shape", '''def predict_traces(calls):
    numbers, shapes, counts = set(), {}, []
    for argument in calls:
        if isinstance(argument, (tf.Tensor, np.ndarray)):
            group = (tf.as_dtype(argument.dtype).name, len(argument.shape))
            shapes.setdefault(group, set()).add(tuple(argument.shape))
        else:
            numbers.add(argument)
        counts.append(len(numbers) + sum(min(len(seen), 2) for seen in shapes.values()))
    return counts
'''),
        ("keys a Python number by its type and value: 1 and 1.0 trace twice",
         _edit(_PREDICT, 'key = ("python", argument)', 'key = ("python", type(argument).__name__, argument)')),
        ("every call traces", '''def predict_traces(calls):
    return list(range(1, len(calls) + 1))
'''),
        ("tensors keyed by dtype only: a new length never retraces",
         _edit(_PREDICT, 'key = ("tensor", tf.as_dtype(argument.dtype).name, tuple(argument.shape))',
               'key = ("tensor", tf.as_dtype(argument.dtype).name)')),
        ("Python numbers keyed by type only: a new value never retraces",
         _edit(_PREDICT, 'key = ("python", argument)', 'key = ("python", type(argument).__name__)')),
        ("NumPy arrays and tf tensors never share a trace",
         _edit(_PREDICT, '("tensor", tf.as_dtype', '(type(argument).__name__, tf.as_dtype')),
        ("counts only a change from the previous call, not every key seen before", '''def predict_traces(calls):
    counts, previous, traces = [], None, 0
    for argument in calls:
        if isinstance(argument, (tf.Tensor, np.ndarray)):
            key = ("tensor", tf.as_dtype(argument.dtype).name, tuple(argument.shape))
        else:
            key = ("python", argument)
        if key != previous:
            traces += 1
        previous = key
        counts.append(traces)
    return counts
'''),
        ("asks TensorFlow instead of predicting", '''def predict_traces(calls):
    traces = [0]

    def body(x):
        traces[0] += 1
        return x

    function = tf.function(body)
    counts = []
    for argument in calls:
        function(argument)
        counts.append(traces[0])
    return counts
'''),
    ],
    "signature_function": [
        ("no signature: every new length traces again", '''def signature_function(fn):
    return tf.function(fn)
'''),
        ("reduce_retracing=True instead of a signature (two traces)", '''def signature_function(fn):
    return tf.function(fn, reduce_retracing=True)
'''),
        ("a signature of unknown rank: a matrix is accepted",
         _edit(_SIGNATURE, "shape=[None]", "shape=None")),
        ("a float64 signature: float32 vectors are refused",
         _edit(_SIGNATURE, "dtype=tf.float32", "dtype=tf.float64")),
        ("a fixed length of 3", _edit(_SIGNATURE, "shape=[None]", "shape=[3]")),
    ],
    "custom_fit": [
        ("the epoch loss as the plain mean of the batch losses",
         _edit(_edit(_FIT, "total += float(loss) * len(x_batch)", "total += float(loss)"),
               "history.append(total / n)",
               "history.append(total / -(-n // batch_size))")),
        ("drops the last partial batch",
         _edit(_edit(_FIT, "for start in range(0, n, batch_size):",
                     "for start in range(0, n - batch_size + 1, batch_size):"),
               "history.append(total / n)",
               "history.append(total / (n // batch_size * batch_size))")),
        ("the epoch loss measured after the epoch, on all the data", _edit(
            _FIT, "        history.append(total / n)",
            "        history.append(float(loss_fn(y, model(x))))")),
        ("calls model.fit inside the loop (what the exercise writes out)", '''def custom_fit(model, x, y, epochs, batch_size, lr):
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), loss="mse")
    history = model.fit(x, y, epochs=epochs, batch_size=batch_size, shuffle=False, verbose=0)
    return history.history["loss"]
'''),
        ("sums the squared errors instead of averaging them",
         _edit(_FIT, "loss = loss_fn(y_batch, model(x_batch, training=True))",
               "loss = tf.reduce_sum((model(x_batch, training=True) - y_batch) ** 2)")),
        ("train_on_batch per batch", '''def custom_fit(model, x, y, epochs, batch_size, lr):
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), loss="mse")
    history = []
    for _ in range(epochs):
        total = 0.0
        for start in range(0, len(x), batch_size):
            x_batch, y_batch = x[start:start + batch_size], y[start:start + batch_size]
            total += float(model.train_on_batch(x_batch, y_batch)) * len(x_batch)
        history.append(total / len(x))
    return history
'''),
    ],
    "tensorboard_scalars": [
        ("scalars logged outside `with writer.as_default()`: nothing is written",
         _edit(_TENSORBOARD, '''    with writer.as_default():
        for step, value in enumerate(values):
            tf.summary.scalar(tag, value, step=step)
''', '''    for step, value in enumerate(values):
        tf.summary.scalar(tag, value, step=step)
''')),
        ("steps counted from 1",
         _edit(_TENSORBOARD, "tf.summary.scalar(tag, value, step=step)",
               "tf.summary.scalar(tag, value, step=step + 1)")),
        ("reads value.simple_value (0 for TF2's tensor scalars)",
         _edit(_TENSORBOARD, "float(tf.make_ndarray(value.tensor))",
               "float(value.simple_value)")),
        ("keeps every tag", _edit(_TENSORBOARD, "                if value.tag == tag:\n"
                                                "                    pairs.append(",
                                  "                if True:\n                    pairs.append(")),
        ("reads only the first event file",
         _edit(_TENSORBOARD, 'sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))',
               'sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))[:1]')),
        ("reads every entry of logdir (glob '*'), not only the event files",
         _edit(_TENSORBOARD, 'sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))',
               'sorted(glob.glob(os.path.join(logdir, "*")))')),
        ("pairs in the order of the files sorted by name, not sorted by step",
         _edit(_TENSORBOARD, "    return sorted(pairs)\n", "    return pairs\n")),
    ],
    "tf_torch_grads": [
        ("copies w1 and w2 into nn.Linear without the transpose",
         _edit(_edit(_TF_TORCH, "torch.from_numpy(w1.T)", "torch.from_numpy(w1)"),
               "torch.from_numpy(w2.T)", "torch.from_numpy(w2)")),
        ("reshapes the weights to torch's (out, in) shape instead of transposing them",
         _edit(_edit(_TF_TORCH, "torch.from_numpy(w1.T)",
                     "torch.from_numpy(w1.reshape(w1.shape[1], w1.shape[0]))"),
               "torch.from_numpy(w2.T)",
               "torch.from_numpy(w2.reshape(w2.shape[1], w2.shape[0]))")),
        ("transposes torch's weight gradients back to the (in, out) layout",
         _edit(_TF_TORCH, "{n: p.grad.numpy() for n, p in zip(names, params)}",
               "{n: p.grad.numpy().T for n, p in zip(names, params)}")),
        ("Keras' MeanSquaredError in TensorFlow: a mean over the outputs too",
         _edit(_TF_TORCH, "loss = tf.reduce_mean(tf.reduce_sum((model(x) - y) ** 2, axis=1))",
               "loss = keras.losses.MeanSquaredError()(y, model(x))")),
        ("torch's loss summed over the rows instead of averaged",
         _edit(_TF_TORCH, "loss = ((y_pred - torch.from_numpy(y)) ** 2).sum(dim=1).mean()",
               "loss = ((y_pred - torch.from_numpy(y)) ** 2).sum()")),
        ("copies only the weights into torch: nn.Linear keeps its random biases",
         _edit(_edit(_TF_TORCH, "        linear1.bias.copy_(torch.from_numpy(b1))\n", ""),
               "        linear2.bias.copy_(torch.from_numpy(b2))\n", "")),
        ("Keras layers without biases",
         _edit(_edit(_edit(_edit(_TF_TORCH,
               'keras.layers.Dense(w1.shape[1], activation="relu")',
               'keras.layers.Dense(w1.shape[1], activation="relu", use_bias=False)'),
               "keras.layers.Dense(w2.shape[1])", "keras.layers.Dense(w2.shape[1], use_bias=False)"),
               "model.set_weights([w1, b1, w2, b2])", "model.set_weights([w1, w2])"),
               "tape.gradient(loss, params)",
               "tape.gradient(loss, [dense1.kernel, dense1.kernel, dense2.kernel, dense2.kernel])")),
        ("reuses Keras' gradients as torch's",
         _edit(_TF_TORCH, 'result["torch"] = {"loss": loss.item(), **{n: p.grad.numpy() for n, p in zip(names, params)}}',
               'result["torch"] = dict(result["tf"], loss=loss.item())')),
    ],
}


# Right answers written differently from the solution: each must keep full marks, so the
# checks do not reward one way of writing the answer (tests/labs/test_check_programs.py).
ALTERNATIVES = {
    "tf1_train": [
        ("TF1's GradientDescentOptimizer.minimize, fixed-size placeholders", '''def tf1_train(x, y, w1, w2, lr, steps):
    with tf.Graph().as_default():
        xs = tf1.placeholder(tf.float32, shape=x.shape)
        ys = tf1.placeholder(tf.float32, shape=y.shape)
        v1 = tf1.get_variable("w1", initializer=tf.constant(w1))
        v2 = tf1.get_variable("w2", initializer=tf.constant(w2))
        diff = tf.matmul(tf.nn.relu(tf.matmul(xs, v1)), v2) - ys
        loss = tf.reduce_mean(tf.reduce_sum(tf.square(diff), axis=1))
        train = tf1.train.GradientDescentOptimizer(lr).minimize(loss, var_list=[v1, v2])
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            losses = [sess.run([loss, train], {xs: x, ys: y})[0] for _ in range(steps)]
            return losses, v1.eval(sess), v2.eval(sess)
'''),
    ],
    "tape_train": [
        ("a Keras SGD optimizer and tf.nn.relu", '''def tape_train(x, y, w1, w2, lr, steps):
    weights = [tf.Variable(w1), tf.Variable(w2)]
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            out = tf.nn.relu(x @ weights[0]) @ weights[1]
            loss = tf.reduce_sum(tf.square(out - y)) / x.shape[0]
        optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
        losses.append(float(loss))
    return losses, weights[0].numpy(), weights[1].numpy()
'''),
    ],
    "tape_derivatives": [
        ("two tapes for dy and d2y, and dz by the chain rule", '''def tape_derivatives(f, x):
    x = tf.convert_to_tensor(x)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    return dy, d2y, 2 * y * dy
'''),
    ],
    "predict_traces": [
        ("a dict of trace keys, NumPy dtypes compared as strings", '''def predict_traces(calls):
    keys = {}
    result = []
    for value in calls:
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            key = (str(np.dtype(value.dtype.name if hasattr(value.dtype, "as_numpy_dtype") else value.dtype)), tuple(value.shape))
        else:
            key = ("number", value)
        keys.setdefault(key, len(keys) + 1)
        result.append(len(keys))
    return result
'''),
    ],
    "signature_function": [
        ("the decorator form with a keyword signature", '''def signature_function(fn):
    @tf.function(input_signature=(tf.TensorSpec((None,), tf.float32, name="x"),))
    def wrapped(x):
        return fn(x)
    return wrapped
'''),
    ],
    "custom_fit": [
        ("tf.data batches, an explicit mean loss, Keras' Mean metric", '''def custom_fit(model, x, y, epochs, batch_size, lr):
    optimizer = keras.optimizers.SGD(learning_rate=lr)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size)
    history = []
    for _ in range(epochs):
        mean = keras.metrics.Mean()
        for xb, yb in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(yb - model(xb)))
            variables = model.trainable_weights
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            mean.update_state(loss, sample_weight=tf.shape(xb)[0])
        history.append(float(mean.result()))
    return history
'''),
    ],
    "tensorboard_scalars": [
        ("flush instead of close, and summary_iterator's records via a TFRecordDataset of "
         "the whole folder", '''def write_scalars(logdir, tag, values):
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default(step=0):
        for i, v in enumerate(values):
            tf.summary.scalar(tag, tf.constant(v), step=i)
    writer.flush()


def read_scalars(logdir, tag):
    files = tf.io.gfile.glob(logdir + "/events.out.tfevents*")
    found = {}
    for raw in tf.data.TFRecordDataset(files):
        event = tf1.Event()
        event.ParseFromString(raw.numpy())
        for v in event.summary.value:
            if v.tag == tag:
                found[int(event.step)] = tf.make_ndarray(v.tensor).item()
    return [(step, found[step]) for step in sorted(found)]
'''),
    ],
    "tf_torch_grads": [
        ("Dense layers with constant initializers called without a model; torch's "
         "nn.Sequential loaded from a state_dict, torch.autograd.grad, mse_loss(reduction='sum')",
         '''def tf_torch_grads(x, y, w1, b1, w2, b2):
    d_in, h = w1.shape
    d_out = w2.shape[1]
    const = tf.keras.initializers.Constant
    layers = [tf.keras.layers.Dense(h, kernel_initializer=const(w1), bias_initializer=const(b1)),
              tf.keras.layers.Dense(d_out, kernel_initializer=const(w2), bias_initializer=const(b2))]
    xt = tf.convert_to_tensor(x, dtype=tf.float32)
    yt = tf.convert_to_tensor(y, dtype=tf.float32)
    layers[0].build((None, d_in))
    layers[1].build((None, h))
    variables = [v for layer in layers for v in (layer.kernel, layer.bias)]
    with tf.GradientTape() as tape:
        out = layers[1](tf.nn.relu(layers[0](xt)))
        tf_loss = tf.reduce_sum(tf.square(out - yt)) / x.shape[0]
    tf_grads = [np.array(g) for g in tape.gradient(tf_loss, variables)]

    net = torch.nn.Sequential(torch.nn.Linear(d_in, h), torch.nn.ReLU(), torch.nn.Linear(h, d_out))
    net.load_state_dict({"0.weight": torch.tensor(w1.T.copy()), "0.bias": torch.tensor(b1),
                         "2.weight": torch.tensor(np.ascontiguousarray(w2.T)), "2.bias": torch.tensor(b2)})
    out = net(torch.tensor(x, dtype=torch.float32))
    torch_loss = torch.nn.functional.mse_loss(out, torch.tensor(y, dtype=torch.float32),
                                              reduction="sum") / len(x)
    torch_grads = torch.autograd.grad(torch_loss, list(net.parameters()))
    keys = ["w1", "b1", "w2", "b2"]
    return {"tf": dict(zip(keys, tf_grads), loss=tf_loss.numpy().item()),
            "torch": dict(zip(keys, [g.numpy() for g in torch_grads]), loss=torch_loss.item())}
'''),
    ],
}
