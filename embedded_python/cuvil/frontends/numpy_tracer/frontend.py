"""The NumPy tracer as a registered front end (``cuvil.frontends.get("numpy")``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..base import FrontEnd, register

__all__ = ["NumPyFrontEnd"]


@register
class NumPyFrontEnd(FrontEnd):
    """Traces a Python callable written with NumPy by running it once on tracers.

    ``input_spec`` maps the callable's parameter names to ``cuvil.TensorSpec``;
    each op is located at the user's ``file:line:col``.
    """

    name = "numpy"

    @classmethod
    def accepts(cls, model) -> bool:
        return callable(model)

    def describe(self, model) -> tuple[str, str]:
        from ..._program import _python_name, unwrap_jit
        from ..._source import function_location

        fn = unwrap_jit(model)
        return _python_name(fn), str(function_location(fn))

    def import_model(self, model, input_spec: Mapping, mode: str = "inference"):
        # Imported on use: the jit plumbing imports this package.
        from ... import _symbolic
        from ..._errors import UnsupportedConstructError
        from ..._program import _python_name, trace_examples, unwrap_jit
        from ...frontend import _API, _example_call

        fn = unwrap_jit(model)
        name = _python_name(fn)
        # A symbolic spec is its own example: tracing needs shape and dtype only.
        examples = {
            key: spec
            if _symbolic.is_symbolic(spec.shape)
            else np.broadcast_to(np.zeros((), spec.dtype), spec.shape)
            for key, spec in input_spec.items()
        }
        args, kwargs = _example_call(fn, name, examples)
        try:
            return trace_examples(fn, args, kwargs, _API)
        except UnsupportedConstructError as error:
            error.add_note(
                f"{_API} traces {name} once into Cuvil IR and has no Python fallback: rewrite "
                "that code with operations Cuvil supports, or compute it outside the model."
            )
            raise
