"""Which of logmart's own files a build depends on: the modules that decode, found by following
their imports, so that editing anything else (the CLI, the report, the exports, the server, the
generators) does not make a build decode every file again (docs/architecture.md: versions).

The imports are read from the source text (``ast``), not from what an interpreter happened to
import: every ``import`` and ``from … import`` of the package, in functions too, counts. A
module loaded by name at run time (``importlib``) would be missed, so decoders do not do that.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from pathlib import Path


def module_file(package_dir: Path, module: str) -> Path | None:
    """The file of ``module`` (dotted, starting with the package's name), or None if the
    package has no such module (e.g. ``from udfs.values import text``: ``text`` is a name)."""
    parts = module.split(".")
    if parts[0] != package_dir.name:
        return None
    base = package_dir.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _module_name(package_dir: Path, path: Path) -> str:
    relative = path.relative_to(package_dir.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


# A build asks for the imports of the same files several times (the raw version, the code
# version, the SQL functions' files): each file is parsed once per process while its size and
# modification time stay the same (parsing the package's ~120 modules took 1.3 s a build).
_PARSED: dict[tuple[Path, str, int, int], frozenset[str]] = {}


def _imported_names(path: Path, module: str) -> frozenset[str]:
    """Every module name ``path`` (module ``module``) imports, and each ``from M import n``'s
    ``M.n`` too (``n`` may be a submodule)."""
    stat = path.stat()
    key = (path, module, stat.st_mtime_ns, stat.st_size)
    if key not in _PARSED:
        _PARSED[key] = frozenset(_parse_imports(path, module))
    return _PARSED[key]


def _parse_imports(path: Path, module: str) -> set[str]:
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package upwards
                package = module.split(".")[: len(module.split(".")) - (not is_package)]
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def imported_files(package_dir: Path, modules: Iterable[str]) -> list[Path]:
    """The files of ``modules`` and of every module of the package they import, transitively,
    with the ``__init__.py`` of each package on the way (importing a module runs them)."""
    package_dir = Path(package_dir)
    pending = list(modules)
    seen: set[Path] = set()
    while pending:
        name = pending.pop()
        parts = name.split(".")
        for depth in range(1, len(parts) + 1):
            path = module_file(package_dir, ".".join(parts[:depth]))
            if path is None or path in seen:
                continue
            seen.add(path)
            pending.extend(_imported_names(path, _module_name(package_dir, path)))
    return sorted(seen)


def files_version(root: Path, paths: Iterable[Path]) -> str:
    """A hash of ``paths`` (their names under ``root`` and their bytes)."""
    digest = hashlib.sha256()
    for path in sorted(set(paths)):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
