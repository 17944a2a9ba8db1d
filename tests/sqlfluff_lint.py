"""`python -m tests.sqlfluff_lint ARGS`: `sqlfluff ARGS` with Jinja's compiled templates kept
between the files it lints (the suite's style job, tests/test_style.py).

sqlfluff's jinja templater makes a new Jinja environment for every file it renders, and
extracts every macro file of `load_macros_from_path` into it twice (to bind the macros that
call each other): 3,628 compiles of the same few sources for logmart's SQL, 28 % of the lint
(docs/performance.md, "2026-11-28, night"). sqlfluff 4.4 has no setting that keeps them. A
compiled template is Python code that depends only on its source and on the settings Jinja
parses with, not on the environment that runs it, so it is kept here by both. What sqlfluff
finds is unchanged: the same templates run, only compiled once.
"""

from __future__ import annotations

import sys
from typing import Any

import jinja2


def _parse_settings(env: jinja2.Environment) -> tuple:
    """What of an environment its compiled code depends on: the syntax it parses, its
    extensions' tags, and the generator's options."""
    return (
        type(env),
        env.block_start_string,
        env.block_end_string,
        env.variable_start_string,
        env.variable_end_string,
        env.comment_start_string,
        env.comment_end_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        env.trim_blocks,
        env.lstrip_blocks,
        env.newline_sequence,
        env.keep_trailing_newline,
        tuple(
            sorted(f"{type(e).__module__}.{type(e).__qualname__}" for e in env.extensions.values())
        ),
        env.optimized,
        env.is_async,
        env.autoescape,
        env.finalize,
        env.code_generator_class,
    )


def keep_compiled_templates() -> None:
    """Jinja's `Environment.compile` answered from a cache keyed by source and settings."""
    compile_once = jinja2.Environment.compile
    kept: dict[tuple, Any] = {}

    def compile_kept(
        self: jinja2.Environment,
        source: Any,
        name: str | None = None,
        filename: str | None = None,
        raw: bool = False,
        defer_init: bool = False,
    ) -> Any:
        if not isinstance(source, str):  # a parsed template (jinja2.nodes.Template): as is
            return compile_once(self, source, name, filename, raw, defer_init)
        key = (source, name, filename, raw, defer_init, _parse_settings(self))
        if key not in kept:
            kept[key] = compile_once(self, source, name, filename, raw, defer_init)
        return kept[key]

    jinja2.Environment.compile = compile_kept


if __name__ == "__main__":
    keep_compiled_templates()
    from sqlfluff.cli.commands import cli

    cli(args=sys.argv[1:], prog_name="sqlfluff")  # exits with sqlfluff's status
