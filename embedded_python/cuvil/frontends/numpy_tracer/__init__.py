"""The NumPy tracing front end: runs a Python function on tracers and records Cuvil IR.

``cuvil.jit``, ``cuvil.trace_to_mlir`` and ``cuvil.frontend.build_ir`` use it.
:class:`NumPyFrontEnd` is its :class:`cuvil.frontends.FrontEnd` form.
"""
