"""logmart's own exceptions: one for users (a one-line message), one for undecodable bytes."""

from __future__ import annotations


class LogmartError(Exception):
    """A problem the user can fix (a path, a setting, a lock); printed as one line, no trace."""


class DecodeError(ValueError):
    """Bytes that cannot be decoded: the message says what was wrong.

    Decoders raise it with *what*; framing/readers add *where* (file, offset, record type) with
    :meth:`at` so the quarantine reason reads as one sentence a person understands.
    """

    def __init__(self, reason: str, *, record_type: str | None = None, offset: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.record_type = record_type
        self.offset = offset

    def at(self, *, record_type: str | None = None, offset: int | None = None) -> DecodeError:
        """Return the same error with its place filled in (inner places win)."""
        return DecodeError(
            self.reason,
            record_type=self.record_type or record_type,
            offset=self.offset if self.offset is not None else offset,
        )

    def __str__(self) -> str:
        where = []
        if self.record_type:
            where.append(f"record type {self.record_type}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        return f"{self.reason} ({', '.join(where)})" if where else self.reason
