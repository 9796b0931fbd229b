"""One module per lab, each registering that lab's checks with :func:`coursekit.grading.check`."""
