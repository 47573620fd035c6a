"""Pass pipelines from Python: ``cuvil.PipelineBuilder``, ``cuvil.Pass`` and ``cuvil.Operation``.

The pass order itself comes from the compiler (``default_pipeline`` in the
extension, built in ``compiler_core/lib/Pipelines``); a builder only edits a
copy of it: insert Python or plugin passes before/after a named pass,
configure a pass's options, turn optional passes off. Python passes run inside
the compiler's pipeline on the live IR through :class:`Operation` handles.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field, replace

from ._errors import CompileError

__all__ = ["Pass", "PassInfo", "PassError", "PipelineBuilder", "LEVELS"]

#: Where a Python pass runs: once on the module, once per function, or once
#: per operation (optionally only ops named ``op_name``) inside functions.
LEVELS = ("module", "func", "op")

_RESERVED = ("name", "level", "op_name")


class PassError(CompileError):
    """A pass written in Python raised, returned a non-bool, or left invalid IR.

    The message names the pass, the exception and the ``file:line`` in the
    pass's source where it was raised.
    """


def _check_level(level: str, who: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"{who}: level must be one of {LEVELS}, not {level!r}")


class Pass:
    """Base class of passes written in Python.

    Subclasses call ``super().__init__("pass-name")`` and define
    ``run_on_operation(op) -> bool`` (True when the IR changed). ``level``
    (class attribute or keyword) says what ``op`` is: the module, each
    ``func.func``, or each operation inside functions (filtered by ``op_name``).
    Public attributes set in ``__init__`` are the pass's options; a
    :class:`PipelineBuilder` can change them with ``configure``.
    """

    level: str = "func"
    op_name: str | None = None

    def __init__(self, name: str, *, level: str | None = None, op_name: str | None = None):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
            raise ValueError(
                f"cuvil.Pass: name {name!r} must be a non-empty flag-like name, e.g. 'fold-scales'"
            )
        self.name = name
        if level is not None:
            self.level = level
        if op_name is not None:
            self.op_name = op_name
        _check_level(self.level, f"cuvil.Pass {name!r}")

    def run_on_operation(self, op) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError(
            f"{type(self).__name__} must define run_on_operation(self, op) -> bool"
        )

    @property
    def options(self) -> dict:
        """The pass's public attributes other than name/level/op_name."""
        return {
            key: value
            for key, value in vars(self).items()
            if not key.startswith("_") and key not in _RESERVED
        }

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"<cuvil.Pass {self.name} level={self.level}{' ' + opts if opts else ''}>"


@dataclass
class PassInfo:
    """One entry of a pipeline, as listed by :attr:`PipelineBuilder.passes`.

    ``kind`` is ``"builtin"`` (Cuvil or upstream MLIR), ``"plugin"`` (a pass
    named by the user, e.g. from a loaded plugin) or ``"python"``.
    ``pipeline`` is the textual form that reproduces the step with
    ``cuvil-opt --pass-pipeline='builtin.module(...)'`` (None for Python).
    """

    name: str
    stage: str
    kind: str
    pipeline: str | None
    optional: bool
    enabled: bool = True
    level: str | None = None
    python_pass: Pass | None = field(default=None, repr=False)

    @property
    def qualified_name(self) -> str:
        return f"{self.stage}:{self.name}"


class _PythonPassRunner:
    """Called by the compiler with the module; runs a Pass at its level."""

    def __init__(self, python_pass: Pass):
        self.python_pass = python_pass
        self.failure: PassError | None = None

    def __call__(self, module) -> bool:
        p = self.python_pass
        try:
            if p.level == "module":
                targets = [module]
            elif p.level == "func":
                targets = module.walk("func.func")
            else:
                targets = [op for f in module.walk("func.func") for op in f.walk(p.op_name or "")]
            changed = False
            for target in targets:
                if not target.valid:  # erased by an earlier call of this pass
                    continue
                result = p.run_on_operation(target)
                if not isinstance(result, bool):
                    raise TypeError(
                        f"run_on_operation must return True (changed) or False, "
                        f"not {type(result).__name__}"
                    )
                changed |= result
            return changed
        except Exception as exc:  # reported by the compiler, re-raised by compile
            self.failure = _pass_failure(p, exc)
            raise

    def take_failure(self) -> PassError | None:
        failure, self.failure = self.failure, None
        return failure


def _pass_failure(p: Pass, exc: Exception) -> PassError:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    error = PassError(
        f"cuvil: Python pass '{p.name}' ({type(p).__name__}) raised "
        f"{type(exc).__name__}: {exc}{where}. Fix the pass, or remove it from the pipeline."
    )
    error.__cause__ = exc
    return error


def _option_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_option_text(v) for v in value)
    return str(value)


def _with_options(pipeline: str, options: dict) -> str:
    """Merges ``options`` into the ``{...}`` of the innermost pass of ``pipeline``."""
    m = re.fullmatch(
        r"(?P<pre>(?:[\w.]+\()?)(?P<name>[\w.\-]+)(?:\{(?P<opts>.*)\})?(?P<post>\)?)", pipeline
    )
    if m is None:
        raise ValueError(f"cannot set options on pipeline {pipeline!r}")
    current: dict[str, str] = {}
    if m.group("opts"):
        for item in re.findall(r"[\w\-]+=(?:\{[^}]*\}|\S+)", m.group("opts")):
            key, _, value = item.partition("=")
            current[key] = value
    for key, value in options.items():
        current[key.replace("_", "-")] = _option_text(value)
    opts = " ".join(f"{k}={v}" for k, v in current.items())
    return f"{m.group('pre')}{m.group('name')}{{{opts}}}{m.group('post')}"


class PipelineBuilder:
    """An editable copy of a target's pipeline (``target="cpu"`` by default).

    Example::

        pb = cuvil.PipelineBuilder()
        pb.insert_after("cuvil-fold-constants", MyPass(scale=2.0))
        pb.configure("cuvil-cpu-schedule", vector_lanes=8)
        pb.disable("cuvil-fuse-elementwise")
        f = cuvil.jit(fn, pipeline=pb)

    Names may be qualified by phase (``"fusion:canonicalize"``) where a pass
    runs more than once; phases are listed by ``cuvil.phases()``.
    """

    def __init__(
        self, target: str | None = None, enable_fusion: bool = True, parallel: bool = True
    ):
        from ._jit import _extension
        from ._targets import resolve_target

        self._ext = _extension()
        self.target, self.device = resolve_target(target, "cuvil.PipelineBuilder")
        self.enable_fusion = bool(enable_fusion)
        self.parallel = bool(parallel)
        self._steps = [
            PassInfo(name, stage, "builtin", text, optional)
            for name, stage, text, optional in self._ext.default_pipeline(
                enable_fusion=self.enable_fusion,
                parallel=self.parallel,
                target=self.target,
                device=self.device,
            )
        ]
        self._runners: dict[int, _PythonPassRunner] = {}

    # ----- inspection ----------------------------------------------------------
    @property
    def passes(self) -> list[PassInfo]:
        """The pipeline in run order (copies; edit through the builder)."""
        return [replace(s) for s in self._steps]

    def describe(self) -> str:
        """One line per pass: stage, name, kind, options, on/off."""
        lines = []
        for s in self._steps:
            what = s.pipeline if s.pipeline is not None else repr(s.python_pass)
            state = "" if s.enabled else "  [disabled]"
            lines.append(f"{s.stage:>9}  {s.name:<32} {s.kind:<7} {what}{state}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<cuvil.PipelineBuilder {len(self._steps)} passes target={self.target!r}>"

    def _find(self, name: str, api: str) -> list[int]:
        stage, _, pass_name = name.rpartition(":")
        found = [
            i
            for i, s in enumerate(self._steps)
            if s.name == pass_name and (not stage or s.stage == stage)
        ]
        if not found:
            known = sorted({s.name for s in self._steps})
            raise KeyError(
                f"cuvil.PipelineBuilder.{api}: no pass named {name!r} in the pipeline; "
                f"passes: {', '.join(known)}"
            )
        return found

    def _find_one(self, name: str, api: str) -> int:
        found = self._find(name, api)
        if len(found) > 1:
            names = ", ".join(self._steps[i].qualified_name for i in found)
            raise KeyError(
                f"cuvil.PipelineBuilder.{api}: {name!r} runs {len(found)} times ({names}); "
                "name one as 'stage:pass'"
            )
        return found[0]

    # ----- editing -------------------------------------------------------------
    def insert_before(self, anchor: str, p, *, level: str | None = None, **options) -> PassInfo:
        """Insert a :class:`Pass` or a registered pass (by name) before ``anchor``."""
        i = self._find_one(anchor, "insert_before")
        return self._insert(i, self._steps[i].stage, p, level, options)

    def insert_after(self, anchor: str, p, *, level: str | None = None, **options) -> PassInfo:
        """Insert a :class:`Pass` or a registered pass (by name) after ``anchor``."""
        i = self._find_one(anchor, "insert_after")
        return self._insert(i + 1, self._steps[i].stage, p, level, options)

    def _insert(self, index: int, stage: str, p, level, options) -> PassInfo:
        if isinstance(p, Pass):
            if level is not None:
                _check_level(level, f"pass {p.name!r}")
                p.level = level
            for key, value in options.items():
                self._set_python_option(p, key, value)
            info = PassInfo(p.name, stage, "python", None, True, level=p.level, python_pass=p)
        elif isinstance(p, str):
            info = PassInfo(
                re.split(r"[{(]", p, maxsplit=1)[0],
                stage,
                "plugin",
                self._anchored(p, level, options),
                True,
                level=level or ("func" if p.startswith("func.func(") else None),
            )
        else:
            raise TypeError(
                "cuvil.PipelineBuilder: insert a cuvil.Pass instance or the name of a "
                f"registered pass (str), not {type(p).__name__}"
            )
        self._steps.insert(index, info)
        return replace(info)

    def _anchored(self, text: str, level: str | None, options: dict) -> str:
        if options:
            text = _with_options(text, options)
        if level is not None:
            _check_level(level, f"pass {text!r}")
            if level == "op":
                raise ValueError(f"pass {text!r}: registered passes run at module or func level")
            candidates = [f"func.func({text})" if level == "func" else text]
        else:  # module-anchored or op-agnostic passes as is, others per function
            candidates = [text, f"func.func({text})"]
        error = None
        for candidate in candidates:
            try:
                self._ext.check_pass_pipeline(candidate)
                return candidate
            except self._ext.IRError as exc:
                error = error or exc
        raise ValueError(
            f"cuvil.PipelineBuilder: {text!r} is not a usable pass: {error}. Check the name "
            "(load its plugin first with load_plugin) and its options."
        )

    @staticmethod
    def _set_python_option(p: Pass, key: str, value) -> None:
        if key in _RESERVED or key.startswith("_") or key not in p.options:
            raise KeyError(
                f"pass {p.name!r} has no option {key!r}; options: {', '.join(p.options) or 'none'}"
            )
        setattr(p, key, value)

    def configure(self, name: str, **options) -> None:
        """Set options of every pass called ``name`` (``vector_lanes=8`` -> ``vector-lanes=8``)."""
        for i in self._find(name, "configure"):
            step = self._steps[i]
            if step.python_pass is not None:
                for key, value in options.items():
                    self._set_python_option(step.python_pass, key, value)
                continue
            text = _with_options(step.pipeline, options)
            try:
                self._ext.check_pass_pipeline(text)
            except self._ext.IRError as exc:
                raise ValueError(f"cuvil.PipelineBuilder.configure({name!r}): {exc}") from None
            step.pipeline = text

    def disable(self, name: str) -> None:
        """Turn off every pass called ``name``; only optional passes may be turned off."""
        indices = self._find(name, "disable")
        for i in indices:
            if not self._steps[i].optional:
                optional = sorted({s.name for s in self._steps if s.optional})
                raise ValueError(
                    f"cuvil.PipelineBuilder.disable: {self._steps[i].qualified_name} is "
                    f"required to generate code and cannot be turned off; optional passes: "
                    f"{', '.join(optional)}"
                )
        for i in indices:
            self._steps[i].enabled = False

    def enable(self, name: str) -> None:
        for i in self._find(name, "enable"):
            self._steps[i].enabled = True

    def remove(self, name: str) -> None:
        """Remove passes called ``name`` that were inserted (Python or plugin)."""
        indices = self._find(name, "remove")
        if any(self._steps[i].kind == "builtin" for i in indices):
            raise ValueError(
                f"cuvil.PipelineBuilder.remove: {name!r} is built in; use disable() instead"
            )
        for i in reversed(indices):
            del self._steps[i]

    def load_plugin(self, path: str) -> None:
        """Load an MLIR pass plugin (.so); its passes can then be inserted by name."""
        import os

        if not os.path.exists(path):
            raise FileNotFoundError(
                f"cuvil.PipelineBuilder.load_plugin: {path} does not exist; build the plugin "
                "(see plugins/README.md) and pass the path of its .so"
            )
        try:
            self._ext.load_pass_plugin(os.path.abspath(path))
        except self._ext.IRError as exc:
            raise ValueError(str(exc)) from None

    # ----- use by the compiler ---------------------------------------------------
    def extension_steps(self) -> list[tuple]:
        """The enabled steps as the extension's ``compile(steps=...)`` wants them."""
        steps = []
        self._runners = {}
        for s in self._steps:
            if not s.enabled:
                continue
            runner = None
            if s.python_pass is not None:
                runner = self._runners[id(s.python_pass)] = _PythonPassRunner(s.python_pass)
            steps.append((s.name, s.stage, s.pipeline or "", s.optional, runner))
        return steps

    def take_pass_failure(self) -> PassError | None:
        """The error of the Python pass that stopped the last compilation, if any."""
        for runner in self._runners.values():
            failure = runner.take_failure()
            if failure is not None:
                return failure
        return None

    def cache_key(self) -> tuple:
        """Identifies what the pipeline does (for in-memory compile caches)."""
        return tuple(
            (
                s.qualified_name,
                s.pipeline,
                id(s.python_pass),
                tuple(
                    sorted(
                        (k, repr(v))
                        for k, v in (s.python_pass.options.items() if s.python_pass else ())
                    )
                ),
                s.enabled,
            )
            for s in self._steps
        )
