"""Model file -> the objects xlacli runs, with precise hints when nothing fits.

The model file contract (docs/model-file.md): ``get_model()`` (or a module-level
``model``), ``get_inputs(step)`` (or ``get_inputs()``, or a module-level
``example_inputs``), optionally ``step(model, batch, step)``,
``loss_fn(output, batch)`` and ``forward_inputs(batch)``; or ``PATH.py:NAME``
where ``NAME()`` returns ``(model, inputs)``.

Two halves: ``check_model_file`` runs in the parent without importing torch
(path, suffix, syntax, and what the file defines, from its syntax tree), so
most mistakes fail in milliseconds; ``load_model`` runs in the child, imports
the file and checks the objects themselves.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import sys
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from xlacli.errors import ModelError, UsageError
from xlacli.paths import near_path

MODEL_NAMES = ("get_model", "model")
INPUT_NAMES = ("get_inputs", "example_inputs")
# The contract's other names: a file defining one of them means to be a model file.
CONTRACT_HELPERS = frozenset({*INPUT_NAMES, "loss_fn", "step", "forward_inputs"})
CONTRACT_HINT = (
    "define get_model() returning a torch.nn.Module and get_inputs(step) returning its "
    "inputs, or pass PATH.py:FACTORY where FACTORY() returns (model, inputs)"
)


@dataclass(frozen=True)
class ModelTarget:
    """What the user named: a file, and optionally a factory in it."""

    path: Path
    entry: str | None = None
    kind: str = "model"  # "model" (the contract), "script" (a file), "module" (-m)
    module: str | None = None  # the -m module's dotted name
    args: tuple[str, ...] = ()  # the program's arguments, after ``--``

    def __str__(self) -> str:
        if self.module:
            return f"-m {self.module}"
        return f"{self.path}:{self.entry}" if self.entry else str(self.path)

    @property
    def is_script(self) -> bool:
        """Run as ``__main__``, its own syncs being the steps."""
        return self.kind != "model"


def parse_target(text: str) -> ModelTarget:
    """Split ``PATH.py`` or ``PATH.py:NAME``."""
    path_text, _, entry = text.rpartition(":")
    if path_text and entry.isidentifier():
        return ModelTarget(Path(path_text), entry)
    return ModelTarget(Path(text))


def check_model_file(target: ModelTarget) -> ModelTarget:
    """Check a model file without running it: it exists, is Python, parses, and
    defines what the contract needs. Returns the target with an absolute path.

    Raises:
        UsageError: with the precise reason and a hint.
    """
    path = target.path
    if not path.exists():
        near = near_path(path, (".py",))
        raise UsageError(
            f"model file not found: {path}" + (f" (did you mean {near}?)" if near else "")
        )
    if path.is_dir():
        raise UsageError(f"{path} is a folder; expected a model file such as {path}/model.py")
    if path.suffix != ".py":
        raise UsageError(
            f"{path} is not a Python file (expected a .py model file)",
            hint=f"export the notebook as a script: jupyter nbconvert --to script {path}"
            if path.suffix == ".ipynb"
            else None,
        )
    source = read_python_source(path)
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as error:
        if error.lineno is None:  # null bytes: a binary file, not Python at all
            raise UsageError(
                f"{path} is not Python source: {error.msg}",
                hint="give the model file or script itself (a text file of Python code)",
            ) from None
        where = f"{path}:{error.lineno}" + (f":{error.offset}" if error.offset else "")
        line = (error.text or "").rstrip()
        raise UsageError(
            f"syntax error in {where}: {error.msg}", details=f"    {line}" if line else None
        ) from None
    if not _has_code(tree):
        raise UsageError(f"{path} is empty: no model and no statement to run", hint=CONTRACT_HINT)
    names = _top_level_names(tree)
    if target.entry is None and _is_script(tree, names):
        _refuse_model_file_without_model(path, tree, names)
        return ModelTarget(path.resolve(), kind="script", args=target.args)
    _check_defined_names(target, names)
    return ModelTarget(path.resolve(), target.entry, args=target.args)


def read_python_source(path: Path) -> str:
    """A Python file's text as Python reads it: UTF-8 unless a coding
    declaration on line 1 or 2 says otherwise.

    Raises:
        UsageError: unreadable, or not in its encoding (with the line and the fix).
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if b"coding" in b"\n".join(data.splitlines()[:2]):  # an unknown coding declaration
            raise UsageError(f"{path}: {error.msg}") from None
        encoding = "utf-8"  # its first lines are not UTF-8: say where below
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex()
        raise UsageError(
            f"{path}:{line}: byte 0x{byte} is not {encoding} text",
            hint="save the file as UTF-8, or declare its encoding on its first line, "
            "e.g. # -*- coding: latin-1 -*- (see PEP 263)",
        ) from None


def _has_code(tree: ast.Module) -> bool:
    """Whether the file holds any statement besides a docstring."""
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return bool(body)


def _refuse_model_file_without_model(path: Path, tree: ast.Module, names: set[str] | None) -> None:
    """A file that reads as a model file (the contract's other functions, or a
    name one typo away from ``get_model``) but has no model is a mistake, not a
    script: running it would sync nothing and look like success.

    Raises:
        UsageError: naming the near miss.
    """
    if names is None or _runs_code(tree):
        return
    helpers = sorted(n for n in names if n in CONTRACT_HELPERS)
    guess = _near_miss("get_model", names)
    if not helpers and not guess:
        return
    what = f" (it defines {', '.join(helpers)})" if helpers else ""
    raise UsageError(
        f"{path} looks like a model file{what} but defines no get_model() or model{guess}",
        hint=CONTRACT_HINT + '; or, for a script, put its code under if __name__ == "__main__":',
    )


def _near_miss(wanted: str, names: set[str]) -> str:
    """ ": did you mean get_model? found get_modle", or "" with no name that close."""
    import difflib  # a hint's: the parent checks model files before its child starts

    close = difflib.get_close_matches(wanted, [n for n in names if n != wanted], 1, 0.75)
    return f": did you mean {wanted}? found {close[0]}" if close else ""


def _runs_code(tree: ast.Module) -> bool:
    """Whether the file does something when run (a loop, a call, a ``with``, an
    ``if __name__ == "__main__":``): a script, whatever functions it defines."""
    for node in tree.body:
        if isinstance(node, (ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith)):
            return True
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant):
            return True
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return True
    return False


def _is_script(tree: ast.Module, names: set[str] | None) -> bool:
    """A file that defines neither ``get_model`` nor ``model`` is a script; so
    is one whose only ``model`` is a variable of its own, with no inputs for
    xlacli. An ``import *`` may bring the contract's names: the child decides."""
    if any(
        isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        for node in ast.walk(tree)
    ):
        return False
    if names is None:  # globals() or setattr() somewhere: judge by what is visible
        names = set()
        _collect_names(tree.body, names)
    if "get_model" in names:
        return False
    return "model" not in names or not any(name in names for name in INPUT_NAMES)


def find_module_file(name: str, search_path: Sequence[str]) -> Path:
    """The file ``python -m NAME`` would run, found without importing anything
    (a package's ``__init__`` may import torch): ``a/b.py`` or ``a/b/__main__.py``
    under the first folder of ``search_path`` that has it.

    Raises:
        UsageError: no such module.
    """
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        raise UsageError(f"-m {name}: not a module name (expected package.module)")
    for folder in search_path:
        base = Path(folder or ".").joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__main__.py"):
            if candidate.is_file():
                return candidate.resolve()
    raise UsageError(
        f"no module named {name!r} (searched the working folder and sys.path)",
        hint="run xlacli from the folder python -m would run it from, or set PYTHONPATH",
    )


def _top_level_names(tree: ast.Module) -> set[str] | None:
    """Names the module defines at module level, in ``if``/``try``/``with``
    blocks too; None when it may define others we cannot see (``import *``,
    ``globals()`` or ``setattr`` calls)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        if isinstance(node, ast.Name) and node.id in ("globals", "setattr"):
            return None
    names: set[str] = set()
    _collect_names(tree.body, names)
    return names


def _collect_names(statements: list[ast.stmt], names: set[str]) -> None:
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or (
            sys.version_info >= (3, 11) and isinstance(node, ast.TryStar)
        ):
            for field in ("body", "orelse", "finalbody"):
                _collect_names(getattr(node, field, []), names)
            for handler in getattr(node, "handlers", []):
                _collect_names(handler.body, names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)


def _check_defined_names(target: ModelTarget, names: set[str] | None) -> None:
    if names is None:
        return
    shown = ", ".join(sorted(n for n in names if not n.startswith("_"))) or "nothing"
    if target.entry is not None:
        if target.entry not in names:
            import difflib

            close = difflib.get_close_matches(target.entry, sorted(names), 1, 0.75)
            raise UsageError(
                f"{target.path} defines no {target.entry!r} "
                + (f"(did you mean {close[0]}?)" if close else f"(it defines: {shown})"),
                hint="PATH.py:NAME selects a function NAME() returning (model, inputs)",
            )
        return
    if not any(name in names for name in MODEL_NAMES):
        raise UsageError(
            f"no get_model() or model found in {target.path} (it defines: {shown})",
            hint=CONTRACT_HINT,
        )
    if not any(name in names for name in INPUT_NAMES):
        raise UsageError(
            f"no get_inputs() or example_inputs found in {target.path}"
            + (_near_miss("get_inputs", names) or f" (it defines: {shown})"),
            hint=CONTRACT_HINT,
        )


# ---------------------------------------------------------------------------
# The child's half: import the file and check the objects.


@dataclass(frozen=True)
class LoadedModel:
    """The objects found in a model file."""

    model: Any  # torch.nn.Module
    inputs_for_step: Callable[[int], Any]
    step_fn: Callable[[Any, Any, int], Any] | None
    loss_fn: Callable[[Any, Any], Any] | None
    entry_site: str  # the user's file:line a step's graph is attributed to
    inputs_site: str  # where the inputs come from (get_inputs, the factory...)
    # forward_inputs(batch): the part of the batch forward() takes (the rest,
    # labels, only reaches loss_fn); None: the whole batch goes to forward().
    forward_inputs: Callable[[Any], Any] | None = None


def import_model_file(path: Path, argv: Sequence[str] = ()) -> ModuleType:
    """Import a model file as a module, its folder first on ``sys.path``.

    Raises:
        ModelError: importing the file raised.
    """
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = f"xlacli_model_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # The model file sees itself as the program: a script that parses its
    # arguments at import must not read xlacli's.
    sys.argv = [str(path), *argv]
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:
        raise _user_code_error(f"importing {path.name} raised", error) from None
    return module


def load_model(target: ModelTarget, argv: Sequence[str] = ()) -> LoadedModel:
    """Import the model file and find the model, its inputs and optional hooks."""
    import torch

    module = import_model_file(target.path, argv)
    if target.entry is not None:
        return _load_factory(target, module)
    model = _call_or_get(module, "get_model", "model", target)
    if not isinstance(model, torch.nn.Module):
        raise UsageError(
            f"get_model() returned {_type_name(model)}; expected a torch.nn.Module",
            hint=CONTRACT_HINT,
        )
    step_fn = _optional_callable(module, "step")
    loss_fn = _optional_callable(module, "loss_fn")
    return LoadedModel(
        model=model,
        inputs_for_step=_inputs_provider(module, target),
        step_fn=step_fn,
        loss_fn=loss_fn,
        entry_site=_entry_site(target.path, step_fn, type(model).forward, module),
        inputs_site=_definition_site(
            getattr(module, "get_inputs", None) or getattr(module, "get_model", None),
            fallback=target.path,
        ),
        forward_inputs=_optional_callable(module, "forward_inputs"),
    )


def _load_factory(target: ModelTarget, module: ModuleType) -> LoadedModel:
    import torch

    factory = getattr(module, target.entry or "", None)
    if not callable(factory):
        raise UsageError(f"{target.entry} in {target.path.name} is not callable")
    result = _call_user(f"{target.entry}()", factory)
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise UsageError(
            f"{target.entry}() returned {_type_name(result)}; expected a (model, inputs) pair"
        )
    model, inputs = result
    if not isinstance(model, torch.nn.Module):
        raise UsageError(
            f"{target.entry}() returned {_type_name(model)} as its model; "
            "expected a torch.nn.Module"
        )
    return LoadedModel(
        model=model,
        inputs_for_step=lambda step: inputs,
        step_fn=None,
        loss_fn=None,
        entry_site=_definition_site(factory, fallback=target.path),
        inputs_site=_definition_site(factory, fallback=target.path),
    )


def _call_or_get(module: ModuleType, fn_name: str, attr_name: str, target: ModelTarget) -> Any:
    fn = getattr(module, fn_name, None)
    if callable(fn):
        return _call_user(f"{fn_name}()", fn)
    if hasattr(module, attr_name):
        return getattr(module, attr_name)
    found = ", ".join(n for n in sorted(vars(module)) if not n.startswith("_")) or "nothing"
    raise UsageError(
        f"no {fn_name}() or {attr_name} found in {target.path} (it defines: {found})",
        hint=CONTRACT_HINT,
    )


def _inputs_provider(module: ModuleType, target: ModelTarget) -> Callable[[int], Any]:
    get_inputs = getattr(module, "get_inputs", None)
    if callable(get_inputs):
        takes_step = _accepts_one_argument(get_inputs)
        return lambda step: _call_user("get_inputs()", get_inputs, *((step,) if takes_step else ()))
    if hasattr(module, "example_inputs"):
        inputs = module.example_inputs
        return lambda step: inputs
    raise UsageError(
        f"no get_inputs() or example_inputs found in {target.path}", hint=CONTRACT_HINT
    )


def _accepts_one_argument(fn: Callable[..., Any]) -> bool:
    try:
        import inspect  # in the child, where torch has imported it already

        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(0)
    except TypeError:
        return False
    return True


def _optional_callable(module: ModuleType, name: str) -> Callable[..., Any] | None:
    value = getattr(module, name, None)
    if value is not None and not callable(value):
        raise UsageError(f"{name} in the model file is {_type_name(value)}; expected a function")
    return value


def _call_user(what: str, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except (Exception, SystemExit) as error:
        raise _user_code_error(f"{what} raised", error) from None


def _user_code_error(what: str, error: BaseException) -> ModelError:
    from xlacli.capture.failures import describe_exception, format_user_traceback

    return ModelError(f"{what} {describe_exception(error)}", details=format_user_traceback(error))


def _entry_site(path: Path, *candidates: Any) -> str:
    """The user's line a step's graph is attributed to: their ``step``, else
    their model's ``forward``, else ``get_model``, whichever is defined in the
    model's folder (a library's ``forward`` is not the user's line), else the
    line that assigns the module-level ``model``."""
    for fn in (*candidates[:2], getattr(candidates[2], "get_model", None)):
        if fn is None:
            continue
        site = _definition_site(fn, fallback=path)
        if Path(site.rpartition(":")[0]).resolve().is_relative_to(path.parent):
            return site
    return f"{path}:{_assignment_line(path, 'model')}"


def _assignment_line(path: Path, name: str) -> int:
    """The line of the first module-level assignment to ``name`` (1 if none)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return 1
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node.lineno
    return 1


def _definition_site(fn: Any, *, fallback: Path) -> str:
    """``file:line`` where a function is defined, or the model file itself."""
    try:
        import inspect

        source = inspect.getsourcefile(fn)
        _, line = inspect.getsourcelines(fn)
    except (TypeError, OSError):
        return f"{fallback}:1"
    return f"{source}:{line}" if source else f"{fallback}:1"


def _type_name(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"
