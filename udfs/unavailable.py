"""What is not in the log is not NULL (issue 14 item 9): why a column's value is unavailable.

A row image (``before_image`` / ``after_image``, map<string,string>) holds every column of the
table version it was decoded with. A null value there is either a real SQL NULL (the log said
NULL) or a value the log does not carry. The second kind is told apart, as
python-mysql-replication's ``none_sources`` does, by a second map beside each image:
``before_unavailable`` / ``after_unavailable`` (column -> reason).

**The rule**: an unavailable column stays in its image, with a null value, and its image's
``*_unavailable`` map names it with one of :data:`REASONS`. A null value whose column is not in
that map is a real SQL NULL. The map is empty when every value is there, and null when the
image is null. Consumers that write values (UNDO/REDO SQL, the Debezium export) must leave an
unavailable column out or write :data:`DEBEZIUM_PLACEHOLDER`, never NULL.

Downstream: ``fct_row_history.unavailable`` carries the map of the image that opened each row
version (never an earlier version's value: the log cannot show a change left a value alone),
``table_as_of`` returns it, ``logmart asof`` prints :func:`as_of_placeholder`, and a truncate's
UNDO leaves those columns out of its INSERTs with a comment.

The reasons (a small vocabulary; ``fct_changes.yml`` tests it, ``docs/architecture.md`` lists
it):

* ``not_logged_lob``: a LOB value the log does not carry: Log Master with DTBI LOBSINCLUDED N;
  a Db2 LUW BLOB/CLOB/DBCLOB that is not inline in the row (a LOB descriptor, or a 0x8000
  out-of-row descriptor).
* ``not_logged_long``: a Db2 LUW LONG VARCHAR / LONG VARGRAPHIC value: a long field object,
  outside the row.
* ``not_logged_xml``: a Db2 LUW XML value: stored in the XML storage object, not in the row;
  Log Master: a DLCI column of type XML with DTBI XMLINCLUDED N.
* ``not_logged_out_of_row``: a Db2 LUW VARCHAR/VARBINARY/VARGRAPHIC value stored out of row
  (the 0x8000 bit of its offset: a 24-byte varying-length data descriptor in the row).
* ``added_after_row``: the column was added (ALTER TABLE ADD COLUMN) after the row was written:
  the row image ends before it (Db2 LUW: beyond the fixed section or the VALUE COMPRESSION
  column count; solidDB: fewer fields than columns; Log Master: a row image ending at a column
  boundary before its table version's last columns). Its value is the column's default, which
  the row image does not hold.
* ``default_not_logged``: a Db2 LUW COMPRESSED SYSTEM DEFAULT of a DATE/TIME/TIMESTAMP column:
  the insert's current date/time, which the log does not hold.
* ``undecodable``: the log holds bytes logmart could not render (an unsupported type, bytes
  that are not a valid value): ``decode_warnings`` says which and why.
"""

from __future__ import annotations

NOT_LOGGED_LOB = "not_logged_lob"
NOT_LOGGED_LONG = "not_logged_long"
NOT_LOGGED_XML = "not_logged_xml"
NOT_LOGGED_OUT_OF_ROW = "not_logged_out_of_row"
ADDED_AFTER_ROW = "added_after_row"
DEFAULT_NOT_LOGGED = "default_not_logged"
UNDECODABLE = "undecodable"

REASONS: tuple[str, ...] = (
    NOT_LOGGED_LOB,
    NOT_LOGGED_LONG,
    NOT_LOGGED_XML,
    NOT_LOGGED_OUT_OF_ROW,
    ADDED_AFTER_ROW,
    DEFAULT_NOT_LOGGED,
    UNDECODABLE,
)

# Debezium's default ``unavailable.value.placeholder``: what its connectors write for a value
# the log does not carry (Oracle LOBs, PostgreSQL TOASTed columns).
DEBEZIUM_PLACEHOLDER = "__debezium_unavailable_value"

# What ``logmart asof`` prints in the cell of a value the log does not carry:
# ``<unavailable: REASON>`` (a SQL NULL prints as an empty cell / JSON null).
AS_OF_PLACEHOLDER_PREFIX = "<unavailable: "
AS_OF_PLACEHOLDER_SUFFIX = ">"


def as_of_placeholder(reason: str) -> str:
    """The text ``logmart asof`` prints for a value the log does not carry, for `reason`."""
    return f"{AS_OF_PLACEHOLDER_PREFIX}{reason}{AS_OF_PLACEHOLDER_SUFFIX}"
