"""Shared settings of the fuzz tests: how many examples, and the one allowed exception.

``LOGMART_FUZZ_EXAMPLES=5000 pytest tests/fuzz`` runs every property with that many examples
(the defaults keep ``tests/fuzz`` under a minute); see docs/operations.md "Fuzzing".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings

from udfs.errors import DecodeError

EXAMPLES_ENV = "LOGMART_FUZZ_EXAMPLES"


def examples(default: int) -> int:
    """``default`` unless LOGMART_FUZZ_EXAMPLES asks for another number."""
    return int(os.environ.get(EXAMPLES_ENV) or default)


def fuzz(default: int = 200) -> settings:
    """Hypothesis settings of a fuzz property: ``default`` examples, no deadline (the machine
    is shared; a slow example is not a failure, a hang still is: pytest's timeout or the
    mutation runner's watchdog catch those)."""
    return settings(
        max_examples=examples(default),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def decodes_or_rejects(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a decoder: its value, or None when it raised logmart's DecodeError (anything else
    propagates and fails the property)."""
    try:
        return function(*args, **kwargs)
    except DecodeError as exc:
        assert str(exc), "a DecodeError must say what is wrong"
        return None
