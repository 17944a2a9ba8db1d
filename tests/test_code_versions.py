"""raw_version() and code_version(): only what decodes (and, for code_version, the SQL functions
and the dbt project) is in them, so editing the CLI, the report or a generator does not make
the next build decode every file again (docs/architecture.md, "Versions")."""

import shutil
from pathlib import Path

import pytest

import logmart_generators
import udfs
from udfs.code_versions import imported_files
from udfs.pipeline import code_version, decoding_files, raw_version, sql_function_files

PACKAGE = Path(udfs.__file__).resolve().parent
GENERATORS = Path(logmart_generators.__file__).resolve().parent


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of the udfs package (and of the generators beside it) to edit."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(PACKAGE, tmp_path / "udfs", ignore=ignore)
    shutil.copytree(GENERATORS, tmp_path / "logmart_generators", ignore=ignore)
    return tmp_path / "udfs"


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# an edit\n")


def _names(paths: list[Path]) -> set[str]:
    return {path.relative_to(PACKAGE).as_posix() for path in paths}


def test_the_decoders_of_every_source_are_hashed_and_the_rest_is_not():
    decoding = _names(decoding_files())
    assert {
        "logmaster/source.py", "logmaster/control.py", "logmaster/rows.py",
        "db2luw/source.py", "db2luw/records.py", "db2luw/layouts.py",
        "soliddb/source.py", "soliddb/readers.py",
        "values.py", "framing.py", "batch.py", "raw_files.py", "raw_writer.py",
    } <= decoding  # fmt: skip
    assert not {
        "cli.py", "report.py", "serve.py", "debezium.py", "change_sql.py", "asof.py",
        "pipeline.py", "dbt_runner.py", "session.py", "last_build.py", "spark_udfs.py",
    } & decoding  # fmt: skip
    # the SQL functions the models call are in code_version, not raw_version
    assert {"spark_udfs.py", "db2luw/functions.py", "soliddb/functions.py"} <= _names(
        sql_function_files()
    )


def test_no_decoder_uses_a_generator():
    for path in decoding_files() + sql_function_files():
        assert "logmart_generators" not in path.read_text(), path


def test_a_copy_of_the_package_has_the_same_versions(package: Path):
    assert raw_version(package) == raw_version()
    assert code_version(package) == code_version()


@pytest.mark.parametrize(
    "edited",
    ["udfs/report.py", "udfs/cli.py", "udfs/debezium.py", "udfs/serve.py", "udfs/pipeline.py",
     "logmart_generators/db2luw.py", "logmart_generators/logmaster.py"],
)  # fmt: skip
def test_editing_the_report_cli_or_a_generator_keeps_both_versions(package: Path, edited: str):
    raw, code = raw_version(package), code_version(package)
    _edit(package.parent / edited)
    assert (raw_version(package), code_version(package)) == (raw, code)


@pytest.mark.parametrize(
    "edited", ["db2luw/records.py", "logmaster/control.py", "soliddb/readers.py", "values.py"]
)
def test_editing_a_decoder_changes_raw_version(package: Path, edited: str):
    raw, code = raw_version(package), code_version(package)
    _edit(package / edited)
    assert raw_version(package) != raw
    assert code_version(package) != code  # (it holds raw_version)


def test_editing_a_sql_function_changes_only_code_version(package: Path):
    raw, code = raw_version(package), code_version(package)
    _edit(package / "db2luw" / "functions.py")
    assert raw_version(package) == raw
    assert code_version(package) != code


def test_imports_are_followed_in_functions_and_relative_ones_too(tmp_path: Path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "root.py").write_text("def f():\n    from pkg.sub import lazy\n")
    (pkg / "sub" / "lazy.py").write_text("from . import sibling\nfrom ..leaf import NAME\n")
    (pkg / "sub" / "sibling.py").write_text("import os\n")
    (pkg / "leaf.py").write_text("NAME = 1\n")
    (pkg / "unused.py").write_text("")
    found = {p.relative_to(pkg).as_posix() for p in imported_files(pkg, ["pkg.root"])}
    assert found == {
        "__init__.py",
        "root.py",
        "sub/__init__.py",
        "sub/lazy.py",
        "sub/sibling.py",
        "leaf.py",
    }


def test_a_file_edited_after_it_was_read_is_read_again(tmp_path: Path):
    """Imports are remembered per file while its size and modification time stay the same."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "root.py").write_text("")
    (pkg / "later.py").write_text("")
    assert [p.name for p in imported_files(pkg, ["pkg.root"])] == ["__init__.py", "root.py"]
    (pkg / "root.py").write_text("import pkg.later\n")
    found = [p.name for p in imported_files(pkg, ["pkg.root"])]
    assert found == ["__init__.py", "later.py", "root.py"]
