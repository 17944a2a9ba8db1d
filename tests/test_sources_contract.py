"""Every registered source (udfs/sources.py) against the contracts the shared code relies on,
without Spark: its raw tables are dbt sources, it provides the models the marts read, its
settings have flags and variables, its generator and SQL functions exist, and the dbt
project names no source: each source's models enable themselves, and dbt gets the registry
as vars (docs/adding-a-source.md)."""

from __future__ import annotations

import ast
import re
from importlib import import_module
from pathlib import Path

import pytest
import yaml

from udfs.cli import build_parser
from udfs.source_declaration import SNAPSHOT_FOLDER_OTHER, SNAPSHOT_KINDS, Source
from udfs.sources import REGISTERED, dbt_vars

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models"
# The models each source provides, read by the shared marts through logmart_sources().
PROVIDED_MODELS = (
    "changes_standardized",  # fct_changes and every mart built on it
    "schema_changes_standardized",  # fct_schema_changes
    "table_versions_standardized",  # dim_table_versions
    "records_read",  # reconciliation: the records read
    "records_accounted",  # reconciliation: where each record read ended up
    "records_quarantined",  # quarantine
    "file_problems",  # reconciliation: the source's own rules on a capture's files
    "transaction_records",  # fct_transactions: transactions its own records list
)
SOURCES = pytest.mark.parametrize("source", REGISTERED, ids=lambda s: s.system)


def _model_files(folder: str) -> dict[str, Path]:
    return {p.stem: p for p in MODELS.glob(f"*/{folder}/*.sql")}


def test_sources_are_named_once():
    for attribute in ("system", "folder", "data_source_name"):
        values = [getattr(source, attribute) for source in REGISTERED]
        assert len(values) == len(set(values)), attribute
    tables = [table.name for source in REGISTERED for table in source.raw_tables]
    assert len(tables) == len(set(tables))


def test_the_marts_read_only_the_provided_models():
    """The per-source models the marts and tests/dbt name (`'int_' ~ source ~ '_x'`) are the
    contract's, and the contract lists none the marts do not read."""
    read = set()
    for path in [*MODELS.glob("marts/**/*.sql"), *(REPO / "tests" / "dbt").glob("*.sql")]:
        read |= set(re.findall(r"'int_' ~ source ~ '_([a-z_]+)'", path.read_text()))
    assert read == set(PROVIDED_MODELS)


@SOURCES
def test_raw_tables_are_dbt_sources(source: Source):
    sources_file = MODELS / "staging" / source.folder / f"_{source.folder}__sources.yml"
    declared = yaml.safe_load(sources_file.read_text())["sources"]
    [dbt_source] = [s for s in declared if s["name"] == source.folder]
    assert dbt_source["schema"] == "raw"
    identifiers = {t.get("identifier", t["name"]) for t in dbt_source["tables"]}
    assert {table.name for table in source.raw_tables} == identifiers


@SOURCES
def test_raw_tables_hold_the_files_that_have_records(source: Source):
    held = set().union(*(table.kinds for table in source.raw_tables))
    assert held == source.data_kinds | source.context_kinds
    assert source.data_kinds, f"{source.system} declares no file kind holding log records"
    assert source.data_read_with <= source.context_kinds
    for table in source.raw_tables:
        assert table.options.get("records"), f"{table.name} has no records option"
        for name in table.settings:
            source.setting(name)  # raises when the source has no such setting


@SOURCES
def test_it_provides_the_models_the_marts_read(source: Source):
    models = _model_files(source.folder)
    for suffix in PROVIDED_MODELS:
        name = f"int_{source.folder}_{suffix}"
        assert name in models, f"{source.system} lacks {name}"
        assert models[name].with_suffix(".yml").is_file(), f"{name} has no .yml beside it"


@SOURCES
def test_its_models_are_enabled_by_the_sources_var(source: Source):
    """Each model of the source says it is enabled when the source is in the build (macro
    logmart_source_enabled): dbt_project.yml cannot, without naming the source."""
    line = f"{{{{ config(enabled=logmart_source_enabled('{source.folder}')) }}}}"
    models = _model_files(source.folder)
    assert len(models) > 10
    for name, path in models.items():
        assert path.read_text().count(line) == 1, f"{name} lacks {line}"
    for path in MODELS.rglob("*.sql"):  # and no model of another folder says it
        if path.stem not in models:
            assert f"logmart_source_enabled('{source.folder}')" not in path.read_text(), path


@SOURCES
def test_its_settings_have_flags_and_variables(source: Source):
    """`logmart build` has a flag per setting (`demo` reads the variables only)."""
    for setting in source.settings:
        assert setting.default in setting.allowed
        assert setting.variable == f"LOGMART_{source.folder}_{setting.name}".upper()
        for value in setting.allowed:
            flag = setting.flag(source.folder)
            args = build_parser().parse_args(["build", "--raw", "r", flag, value])
            assert value in vars(args).values()
        assert any(setting.name in table.settings for table in source.raw_tables)


@SOURCES
def test_its_generator_exists(source: Source):
    module = import_module(f"logmart_generators.{source.generator}")
    assert callable(module.generate)


@SOURCES
def test_its_modules_have_the_shared_names(source: Source):
    # docs/adding-a-source.md, step 1: the same concern has the same module name in every
    # source; a module of another name is the source's own and is named there
    folder = REPO / "udfs" / source.folder
    modules = {p.name for p in folder.glob("*.py")} - {"__init__.py"}
    assert {"layouts.py", "source.py", "sql_functions.py", "registration.py"} <= modules
    assert "batch_rows.py" in modules  # row images decoded column-at-a-time in the raw load
    guide = (REPO / "docs" / "adding-a-source.md").read_text()
    shared = set(re.findall(r"^\| `(\w+\.py)` \|", guide, re.M))
    own = set(re.findall(rf"`{source.folder}/(\w+\.py)`", guide))
    assert modules <= shared | own, modules - shared - own


def _functions_provided(module: str) -> set[str]:
    """The keys of ``module``'s FUNCTIONS dict, read from its text (importing it needs a Spark
    session: the Arrow UDFs parse their return types)."""
    path = REPO / Path(*module.split(".")).with_suffix(".py")
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "FUNCTIONS" for t in node.targets
        ):
            return {key.value for key in node.value.keys}
    raise AssertionError(f"{module} has no FUNCTIONS")


@SOURCES
def test_its_sql_functions_are_provided(source: Source):
    assert source.sql_functions, f"{source.system} declares no SQL function"
    assert set(source.sql_functions) == _functions_provided(source.sql_function_module)
    for name in source.sql_functions:
        assert name.startswith(f"logmart_{source.folder}_")


def test_every_sql_function_the_models_call_is_declared():
    from udfs.spark_udfs import SHARED_FUNCTION_NAMES

    declared = {name for source in REGISTERED for name in source.sql_functions}
    declared |= set(SHARED_FUNCTION_NAMES)  # logmart's own, shared by every source
    called, macros = set(), set()
    for path in [*MODELS.rglob("*.sql"), *(REPO / "macros").glob("*.sql")]:
        called |= set(re.findall(r"\b(logmart_[a-z0-9]+_[a-z0-9_]+)\(", path.read_text()))
        macros |= set(re.findall(r"{%-? macro (\w+)\(", path.read_text()))
    assert {"logmart_string_literal", "logmart_source_enabled"} <= macros  # dbt's, not Spark's
    assert called - macros <= declared, called - macros - declared


def test_the_registry_vars_hold_every_sources_declaration():
    """What dbt gets of the registry (udfs.sources.dbt_vars, passed on every dbt command)."""
    passed = dbt_vars()
    assert passed["logmart_source_folders"] == [s.folder for s in REGISTERED]
    for source in REGISTERED:
        assert passed["logmart_file_kinds"][source.system] == source.file_kind_names
        assert passed["logmart_sql_dialects"][source.system] == source.sql_dialect
        for var in source.dbt_vars:
            assert passed[var.name] == var.default, var.name
            assert (var.name in passed["logmart_decode_vars"][source.folder]) == var.decodes


def test_the_models_read_the_registry_vars():
    """The shared SQL takes the source list, accepted values and dialects from the vars."""
    macros = (REPO / "macros" / "sources.sql").read_text()
    assert "logmart_registry('logmart_source_folders')" in macros
    incremental = (REPO / "macros" / "incremental.sql").read_text()
    assert "logmart_registry('logmart_decode_vars')" in incremental
    change_sql = (MODELS / "marts" / "fct_change_sql.sql").read_text()
    assert "logmart_registry('logmart_sql_dialects')" in change_sql
    files_yml = (MODELS / "staging" / "logmart" / "stg_logmart__files.yml").read_text()
    assert "var('logmart_file_kinds')" in files_yml
    systems = [source.system for source in REGISTERED]
    for path in MODELS.rglob("*.yml"):
        text = path.read_text()
        assert str(systems) not in text, f"{path}: a list of the sources; use the var"


@pytest.mark.parametrize("source", REGISTERED, ids=lambda s: s.system)
def test_it_declares_what_the_shared_code_asks_of_each_source(source):
    # the exports check a user's commit position against the digits; the hex of a log address
    assert source.commit_position_digits > 0 and source.commit_position_digits % 2 == 0
    assert source.commit_time_zone in (None, "UTC")
    assert source.raw_offset_unit in ("offset", "row")
    kinds = source.file_kind_names
    assert len(kinds) == len(set(kinds)), kinds
    assert SNAPSHOT_KINDS <= set(kinds)


def test_a_snapshots_folder_holds_only_the_shared_kinds():
    from udfs.snapshots import file_kind

    found = {file_kind(f"S/snapshots/{name}") for name in ("t.csv", "t.parquet", "t.json", "x.txt")}
    assert found == SNAPSHOT_KINDS | {SNAPSHOT_FOLDER_OTHER}
    assert file_kind("S/capture01/t.csv") is None
