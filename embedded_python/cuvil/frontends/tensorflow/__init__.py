"""The TensorFlow front end: a concrete function's graph walked node by node into Cuvil IR."""
