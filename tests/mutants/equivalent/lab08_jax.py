"""Mechanical mutants of lab08_jax that behave like the solution (see tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

_Y_IS_1D = ("y has shape (N,) (the exercise text): its only axis is both 0 and -1, so the "
            "mutant maps, or reshapes, along the same axis")

EQUIVALENT = [
    ("per_example_grads",
     "return jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)",
     "return jax.vmap(jax.grad(example_loss), in_axes=(None, 0, -1))(params, x, y)", _Y_IS_1D),
    ("data_parallel_grad", "y_shards = y.reshape(n, y.shape[0] // n)",
     "y_shards = y.reshape(n, y.shape[ -1] // n)", _Y_IS_1D),
    ("predict_jit", 'elif event[0] == "clear":', 'elif event[ -1] == "clear":',
     'a "clear" event is the 1-tuple ("clear",), so its last item is its first; the last item '
     'of a "call" event is a dtype name and of a "scale" event a number, never "clear"'),
]
