"""Cuvil: an MLIR-based compiler for NumPy inference code and imported models (ONNX)."""

from . import _builders, frontend, nd, runtime
from ._builders import (
    avg_pool2d,
    batch_norm,
    conv2d,
    dropout,
    erf,
    gelu,
    layer_norm,
    max_pool2d,
    relu,
    rsqrt,
    sigmoid,
    softmax,
)
from ._errors import CompileError, TraceError, UnsupportedConstructError
from ._jit import (
    Compilation,
    JitFunction,
    compilations,
    device_copies,
    inspect_ir,
    jit,
    last_fallback_reason,
    set_snapshot_capture,
    snapshot_capture_enabled,
)
from ._logging import LogLevel, set_log_level
from ._packages import PackageError, load_irpkg
from ._passes import LEVELS, Pass, PassError, PassInfo, PipelineBuilder
from ._profile import OpStats, Profile, profile
from ._program import trace_to_mlir
from ._targets import (
    available_targets,
    default_target,
    load_target_plugin,
    parse_device,
    phases,
    set_default_target,
)
from .frontend import InputSpecError, IRModule, ShapeSpecError, TensorSpec
from .frontends.jax.frontend import compile_to_ir
from .frontends.numpy_tracer.tracer import Tracer
from .frontends.onnx import OnnxModelError, load_onnx

__all__ = [
    "jit",
    "JitFunction",
    "inspect_ir",
    "last_fallback_reason",
    "device_copies",
    "compilations",
    "Compilation",
    "IR_STAGES",
    "available_targets",
    "default_target",
    "set_default_target",
    "parse_device",
    "load_target_plugin",
    "phases",
    "trace_to_mlir",
    "compile_to_ir",
    "set_snapshot_capture",
    "snapshot_capture_enabled",
    "set_log_level",
    "LogLevel",
    "Tracer",
    "frontend",
    "load_onnx",
    "load_irpkg",
    "PackageError",
    "nd",
    "runtime",
    "OnnxModelError",
    "IRModule",
    "TensorSpec",
    "InputSpecError",
    "ShapeSpecError",
    "TraceError",
    "CompileError",
    "UnsupportedConstructError",
    "profile",
    "Profile",
    "OpStats",
    "Pass",
    "PassInfo",
    "PassError",
    "PipelineBuilder",
    "LEVELS",
    "Operation",
    "Value",
    "IRError",
    *_builders.__all__,
]

_EXTENSION_TYPES = ("Operation", "Value", "IRError")


def __getattr__(name):
    # IR handle types and the compiler's name tables live in the compiled
    # extension, loaded on first use.
    if name in _EXTENSION_TYPES:
        from ._jit import _extension

        return getattr(_extension(), name)
    if name == "IR_STAGES":
        from ._jit import ir_stage_names

        return ir_stage_names()
    raise AttributeError(f"module 'cuvil' has no attribute {name!r}")
