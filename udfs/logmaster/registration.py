"""Log Master for Db2 z/OS (BMC): what logmart knows of this source (udfs.source_declaration)."""

from udfs.logmaster.source import LogMasterDataSource, discover
from udfs.source_declaration import DbtVar, FileKind, RawTable, Source

LOGMASTER = Source(
    system="db2zos",
    folder="logmaster",
    display_name="Log Master for Db2 z/OS",
    sql_dialect="Db2 for z/OS",
    data_source=LogMasterDataSource,
    discover=discover,
    raw_tables=(
        RawTable(
            "logmaster_control_records",
            {"records": "control"},
            frozenset({"control"}),
            "The control records of each extract's control files (LLDF, XTYP, DTBI, ...).",
        ),
        RawTable(
            "logmaster_data_records",
            # images: the row images of one-segment records, decoded while the file is read
            # (udfs/logmaster/batch_rows.py; int_logmaster_row_images_decoded takes them).
            {"records": "data", "images": "true"},
            frozenset({"data"}),
            "The log records of each extract's data files, headers decoded.",
        ),
    ),
    files=(
        FileKind("data", "data", "<extract>/<any file> whose first bytes are not a control file"),
        FileKind("control", "context", "<extract>/<any file> starting with a control record"),
        FileKind("empty", "ignored", "a file of 0 bytes"),
    ),
    sql_function_module="udfs.logmaster.sql_functions",
    sql_functions=("logmart_logmaster_row_images", "logmart_logmaster_catalog_event"),
    generator="logmaster",
    dbt_vars=(
        DbtVar(
            "logmaster_ebcdic_codepage",
            "",
            "code page of EBCDIC character data ('' = from the extract's XTYP, else cp037)",
        ),
        DbtVar("logmaster_ascii_codepage", "latin-1", "code page of ASCII tables"),
        DbtVar("logmaster_float_format", "hfp", "FLOT columns as IBM HFP (or 'ieee')"),
    ),
    data_read_with=frozenset({"control"}),
    commit_position_digits=20,  # the URID's RBA/LRSN
    # UORCOMMITTIMESTAMP "BIN(17) ... X'YYYYMMDDHHMMSS...'" (LLDF spec): a date and time with
    # no zone, the z/OS system's clock
    commit_time_zone=None,
)
