"""``input_spec`` for PyTorch models: forward-parameter names, or a list of specs in their order."""

from __future__ import annotations

import inspect
from collections.abc import Mapping

__all__ = ["normalize_torch_spec", "forward_parameters", "plain_dims", "export_dims"]

_API = "cuvil.frontend.build_ir"
_Parameter = inspect.Parameter


def forward_parameters(model) -> list[inspect.Parameter]:
    """The parameters of ``model.forward`` (without ``self``) that can take a tensor."""
    signature = inspect.signature(model.forward)
    return [
        p
        for p in signature.parameters.values()
        if p.kind not in (_Parameter.VAR_POSITIONAL, _Parameter.VAR_KEYWORD)
    ]


def _entry(name: str, value, default_dtype: str):
    """One spec (TensorSpec, torch.Tensor, shape, ``(shape, dtype)``) as a cuvil.TensorSpec."""
    import torch

    from ...frontend import _normalize_spec
    from .aten import dtype_name

    if isinstance(value, torch.Tensor):
        value = (tuple(value.shape), dtype_name(value.dtype))
    elif isinstance(getattr(value, "dtype", None), torch.dtype):
        value = (tuple(value.shape), dtype_name(value.dtype))
    elif isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], torch.dtype):
        value = (value[0], dtype_name(value[1]))
    return _normalize_spec(name, value, default_dtype)


def plain_dims(input_spec) -> tuple[object, dict]:
    """``input_spec`` with each ``torch.export.Dim`` replaced by its name, and name -> Dim.

    Entries may be shapes, ``(shape, dtype)`` pairs, specs with ``shape`` and
    ``dtype`` (a ``torch.dtype`` too) or tensors; torch dtypes become names.
    """
    import torch

    from ...frontend import TensorSpec
    from .aten import dtype_name

    dims: dict = {}

    def plain(shape):
        out = []
        for d in shape:
            if isinstance(d, torch.export.Dim):
                dims.setdefault(d.__name__, d)
                d = d.__name__
            out.append(d)
        return tuple(out)

    def spec(shape, dtype):
        name = dtype_name(dtype) if isinstance(dtype, torch.dtype) else dtype
        return TensorSpec(plain(shape), name)

    def entry(value):
        if hasattr(value, "shape") and hasattr(value, "dtype"):  # tensors and specs
            return spec(value.shape, value.dtype)
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], (tuple, list)):
            return spec(*value)
        return plain(value) if isinstance(value, (tuple, list)) else value

    if isinstance(input_spec, Mapping):
        return {k: entry(v) for k, v in input_spec.items()}, dims
    return [entry(v) for v in input_spec], dims


# Example sizes for symbolic dims while exporting: distinct, above 1 (export
# specializes 0 and 1), and unlikely to equal a model's static sizes.
_HINTS = (3, 5, 7, 11, 13, 17, 19, 23)


def export_dims(
    input_spec: Mapping, dims: Mapping, infer_ranges: bool = False
) -> tuple[dict, dict]:
    """For specs with symbol names: example size per symbol, and ``dynamic_shapes`` for export.

    ``dims`` holds the user's ``torch.export.Dim`` per name (its range bounds the
    example size); other names get a ``Dim`` of their own (equal names share one)
    or, with ``infer_ranges``, ``Dim.DYNAMIC``: export then finds the range the
    model allows (a causal mask of 16 rows bounds a sequence by 16) instead of
    refusing a range the name did not state. The IR keeps the names either way.
    """
    import torch

    hints, shared, dynamic = {}, dict(dims), {}
    for name, spec in input_spec.items():
        axes = {}
        for axis, d in enumerate(spec.shape):
            if not isinstance(d, str):
                continue
            if infer_ranges and d not in dims:
                dim = torch.export.Dim.DYNAMIC
            else:
                dim = shared.setdefault(d, torch.export.Dim(d))
            if d not in hints:
                hint = _HINTS[len(hints) % len(_HINTS)]
                bounds = dims.get(d, dim)
                lower = max(getattr(bounds, "min", None) or 2, 2)
                upper = getattr(bounds, "max", None) or hint
                hints[d] = min(max(hint, lower), upper)
            axes[axis] = dim
        dynamic[name] = axes or None
    return hints, dynamic


def normalize_torch_spec(model, input_spec, default_dtype: str) -> dict:
    """``input_spec`` as forward-parameter name -> ``cuvil.TensorSpec``, in ``forward``'s order.

    Accepts a mapping of parameter names, or a list/tuple of specs given to the
    leading parameters in order. Every parameter without a default must get one.
    """
    from ...frontend import InputSpecError

    params = forward_parameters(model)
    names = [p.name for p in params]
    where = f"{type(model).__name__}.forward({', '.join(names)})"
    if isinstance(input_spec, Mapping):
        unknown = [k for k in input_spec if k not in names]
        if unknown:
            raise InputSpecError(
                f"{_API}: input_spec names {unknown} that are not parameters of {where}"
            )
        given = dict(input_spec)
    elif isinstance(input_spec, (list, tuple)):
        if input_spec and all(isinstance(d, int) for d in input_spec):
            raise InputSpecError(
                f"{_API}: input_spec {tuple(input_spec)} is one shape; give a list of specs, "
                f"one per input of {where}, e.g. [{tuple(input_spec)}]"
            )
        if len(input_spec) > len(names):
            raise InputSpecError(
                f"{_API}: input_spec has {len(input_spec)} specs but {where} takes "
                f"{len(names)} inputs"
            )
        given = dict(zip(names, input_spec))
    else:
        raise InputSpecError(
            f"{_API}: input_spec for {type(model).__name__} must map forward's parameter "
            "names to shapes/specs or list one spec per input, e.g. [(1, 3, 224, 224)]; "
            f"got a {type(input_spec).__name__}"
        )
    missing = [p.name for p in params if p.default is _Parameter.empty and p.name not in given]
    if missing:
        raise InputSpecError(f"{_API}: input_spec has no spec for {missing}, inputs of {where}")
    return {n: _entry(n, given[n], default_dtype) for n in names if n in given}
