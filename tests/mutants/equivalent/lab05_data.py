"""Mechanical mutants of lab05_data that behave like the solution (see tests/tooling/mechanical.py).

Each entry: (answer, the solution's line, the mutant's line, why they behave the same).
"""

_ONLY_VALIDATES = ("the sampler over range(0) is built only so that its constructor validates "
                   "batch_size and drop_last; over range(1) or range(-1) (empty) it validates "
                   "the same")
_SCALE = ("WeightedRandomSampler's weights are relative: scaling every weight by 2 changes no "
          "class's share and no draw")
_VECTOR = "labels are a vector (a list, an array or a tensor of one axis): it already has one axis"

EQUIVALENT = [
    ("collate", 'first = samples[0]', 'first = samples[ -1]',
     "the samples of a batch share one structure: the last one dispatches like the first"),
    ("collate", 'raise TypeError(f"my_collate cannot batch a {type(first).__name__}")', 'pass',
     "same behaviour on the lab's contract, the sample types of its table; a type outside "
     "it is undefined (a right answer of the alternatives corpus batches it with np.asarray), "
     "so no case asks"),
    ("dataloader", 'MyBatchSampler(range(0), batch_size, drop_last)  # validates batch_size early',
     'MyBatchSampler(range( 1), batch_size, drop_last)  # validates batch_size early',
     _ONLY_VALIDATES),
    ("dataloader", 'MyBatchSampler(range(0), batch_size, drop_last)  # validates batch_size early',
     'MyBatchSampler(range( -1), batch_size, drop_last)  # validates batch_size early',
     _ONLY_VALIDATES),
    ("balanced_weights", 'return 1.0 / counts[class_of_sample]',
     'return 2.0 / counts[class_of_sample]', _SCALE),
    ("balanced_weights", 'labels = np.asarray(labels).reshape(-1)',
     'labels = np.asarray(labels).reshape(- 2)',
     "NumPy treats any negative size as the unknown one, like -1: " + _VECTOR),
    ("balanced_weights", 'labels = np.asarray(labels).reshape(-1)', 'pass', _VECTOR),
    ("concat", 'if not -n <= index < n:', 'if not -n <= index <= n:',
     "index == len passes this test but then finds no part: self.datasets[part] raises "
     "IndexError all the same"),
]
