"""BMC AMI Log Master logical log record layouts, one construct ``Struct`` per record type.

Field names are the spec's (``../shared/specs/000_…`` DTBI, ``001_…`` DLCI, ``003_…`` LLDF and
the specs README for XTYP/XHDF/DLDS/DLGE), with spaces as underscores ("CHANGE TYPE" ->
``CHANGE_TYPE``); staging lower-cases them. Where the spec's decimal and hex offsets disagree,
the one that agrees with the field lengths and the record's total wins (README interpretation 2):
DTBI's reserved field after CREATERBA sits at x'34' and DROPRBA at x'36' (hex); DLCI VERSION at
decimal 190, after a whole COLUMNNAME CHAR(128) (decimal).
Hold each Struct against its spec table: nothing but fields stands between the lines.
"""

from __future__ import annotations

from construct import Optional, Struct

from udfs.fields import Bin, Char, CharNumber, Hex, Lrsn, Rba, Reserved, Timestamp17, UnicodeChar

# Control file: file information (first record): code pages of the extract.
XTYP = Struct(
    "CNTLRECORDTYPE" / Char(4),
    "FILETYPE" / Char(4),
    "VERSION" / Char(6),
    "SYSID" / Char(4),
    "SQLDELIMITER" / Char(1),
    "MIXED" / Char(1),
    "DECIMALPOINT" / Char(1),
    "EBCDICSBCSCCSID" / CharNumber(5),
    "EBCDICDBCSCCSID" / CharNumber(5),
    "EBCDICMIXEDCCSID" / CharNumber(5),
    "ASCIISBCSCCSID" / CharNumber(5),
    "ASCIIDBCSCCSID" / CharNumber(5),
    "ASCIIMIXEDCCSID" / CharNumber(5),
    "UNICODESBCSCCSID" / CharNumber(5),
    "UNICODEDBCSCCSID" / CharNumber(5),
    "UNICODEMIXEDCCSID" / CharNumber(5),
)

# Control file: data change header description, one per LLDF header field.
XHDF = Struct(
    "CNTLRECORDTYPE" / Char(4),
    "FIELDNAME" / Char(18),
    "FIELDTYPE" / Char(4),
    "UNSIGNED" / Char(1),
    "FIELDLENGTH" / CharNumber(5),
    "FIELDOFFSET" / CharNumber(5),
)

# Control file: data set information.
DLDS = Struct(
    "CNTLRECORDTYPE" / Char(4),
    "DATASETNAME" / Char(44),
    "RECFM" / Char(3),
    "DATEFORMAT" / Char(8),
    "EXPANDVAR" / Char(1),
    "SEGMENTED" / Char(1),
    "DDLOBJECTS" / Char(1),
    "LOBSINCLUDED" / Char(1),
    "XMLINCLUDED" / Char(1),
)

# Control file: log end.
DLGE = Struct(
    "CNTLRECORDTYPE" / Char(4),
    "ENDRBA" / Hex(10),
    "reserved_14" / Reserved(2),
    "ENDTIME" / Timestamp17(),
    "reserved_33" / Reserved(3),
    "DEPENDENTRBA" / Hex(10),
    "reserved_46" / Reserved(2),
)

# Control file: table information (000_…). 705 bytes; the spec's 704 lacks XMLINCLUDED
# (README interpretation 1), so XMLINCLUDED is optional: absent -> None (unknown).
DTBI = Struct(
    "CNTLRECORDTYPE" / Char(4),
    "SYSID" / Char(4),
    "DBID" / Char(4),
    "PSID" / Char(4),
    "TBOBID" / Char(4),
    "OBJECTTYPE" / Char(2),
    "DB2NUMCOL" / CharNumber(3),
    "DB2MAXROWLEN" / CharNumber(5),
    "LLNUMCOL" / CharNumber(3),
    "LLMAXROWLEN" / CharNumber(5),
    "ROWTYPE" / Char(1),
    "SEQUENCENUMBER" / CharNumber(3),
    "CREATERBA" / Hex(10),
    "reserved_52" / Reserved(2),
    "DROPRBA" / Hex(10),
    "reserved_64" / Reserved(2),
    "ENCODINGSCHEME" / Char(1),
    "EDITPROCNAMELEN" / CharNumber(3),
    "EDITPROCNAME" / Char(24),
    "DBNAMELEN" / CharNumber(3),
    "DBNAME" / Char(24),
    "TSNAMELEN" / CharNumber(3),
    "TSNAME" / Char(24),
    "TABLEOWNERLEN" / CharNumber(3),
    "TABLEOWNER" / Char(128),
    "SHORTOWNER" / Char(8),
    "TABLENAMELEN" / CharNumber(3),
    "TABLENAME" / Char(128),
    "SHORTNAME" / Char(18),
    "VERSION" / CharNumber(3),
    "UNTRANOWNERFLAG" / Char(1),
    "UNITABLEOWNERLEN" / CharNumber(3),
    "UNITABLEOWNER" / UnicodeChar(128),
    "UNTRANNAMEFLAG" / Char(1),
    "UNITABLENAMELEN" / CharNumber(3),
    "UNITABLENAME" / UnicodeChar(128),
    "LOBSINCLUDED" / Char(1),
    "XMLINCLUDED" / Optional(Char(1)),
)
DTBI_MIN_LENGTH = 704

# Control file: logical log column information (001_…), 193 bytes. The spec's VERSION row reads
# "190 | B4": decimal 190 wins (README interpretation 2, corrected), because COLUMNNAME CHAR(128)
# from 62 ends at 190 and VERSION CHAR(3) then ends at the stated total 193 (x'C1'); hex B4
# (180) would cut COLUMNNAME to 118 bytes. VERSION is a number (blank -> None).
DLCI = Struct(
    "CNTLRECORDTYPE" / Char(4),
    "SYSID" / Char(4),
    "DBID" / Char(4),
    "TBOBID" / Char(4),
    "LLCOLUMNNUM" / CharNumber(3),
    "LLCOLUMNTYPE" / Char(4),
    "LLCOLUMNLEN" / CharNumber(5),
    "LLSCALE" / CharNumber(2),
    "LLNULLS" / Char(1),
    "LLCOLUMNPOS" / CharNumber(5),
    "LLCOLUMNSUBTYPE" / Char(1),
    "KEYSEQ" / CharNumber(3),
    "KEYORDERING" / Char(1),
    "DB2ROWBYTES" / CharNumber(5),
    "FLDPROCBYTES" / CharNumber(5),
    "LOGLOGBYTES" / CharNumber(5),
    "SEQUENCENUMBER" / CharNumber(3),
    "COLUMNNAMELEN" / CharNumber(3),
    "COLUMNNAME" / Char(128),
    "VERSION" / CharNumber(3),
)

# Data file: data change record header (003_…), 288 bytes in Log Master 11.1+. Readers take the
# header's real length from LENGTH (it grows between versions); DATA follows the header.
LLDF_HEADER = Struct(
    "LENGTH" / Bin(2),
    "SYSTEMID" / Char(4),
    "DBID" / Bin(2),
    "PSID" / Bin(2),
    "TBOBID" / Bin(2),
    "TBOWNERLEN" / Bin(2),
    "TBNAMELEN" / Bin(2),
    "DBNAME" / Char(8),
    "TSNAME" / Char(8),
    "TABLEOWNER" / Char(8),
    "TABLENAME" / Char(18),
    "PARTNUM" / Bin(2),
    "TIMESTAMP" / Timestamp17(),
    "LOGLRSN" / Lrsn(10),
    "LOGRBA" / Rba(10),
    "MEMBERID" / Bin(2),
    "RID" / Hex(5),
    "CHANGE_TYPE" / Char(2),
    "SQLTYPE" / Char(1),
    "LOGRECDISP" / Char(1),
    "SQLSRCTYPE" / Char(1),
    "LOGBYTES" / Bin(4),
    "LOGDELTA" / Bin(2),
    "ANOMALYROWID" / Bin(1),
    "ANOMALYTYPE" / Char(1),
    "ANOMALYRBA" / Hex(10),
    "UORTIMESTAMP" / Timestamp17(),
    "UORCOMMITTIMESTAMP" / Timestamp17(),
    "UORDISP" / Char(1),
    "UORIDLRSN" / Lrsn(10),
    "UORID" / Rba(10),
    "SEGLEN" / Bin(2),
    "TOTALSEGS" / Bin(2),
    "SEGNUM" / Bin(2),
    "reserved_188" / Reserved(4),
    "UORCOMMITLRSN" / Lrsn(10),
    "UORCOMMITPOINT" / Rba(10),
    "CONNECTIONTYPE" / Char(2),
    "CONNECTID" / Char(8),
    "CORRELATIONID" / Char(12),
    "AUTHID" / Char(8),
    "PLAN" / Char(8),
    "LUWNETWORKID" / Char(8),
    "LUWNAME" / Char(8),
    "LUWINSTANCENO" / Hex(6),
    "LUWSEQUENCENO" / Bin(2),
    "INCOMPLETETRANS" / Char(1),
    "INCOMPLETEDEP" / Char(1),
    "UORHASCOMP" / Char(1),
    "SQLRIRBA" / Hex(10),
    "PAGENUMFMT" / Char(1),
)

# Control record types logmart decodes; any other type is kept raw and counted, not an error.
CONTROL_LAYOUTS = {
    "XTYP": XTYP,
    "XHDF": XHDF,
    "DLDS": DLDS,
    "DLGE": DLGE,
    "DTBI": DTBI,
    "DLCI": DLCI,
}
