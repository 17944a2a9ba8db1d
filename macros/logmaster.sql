{#- Columns of an LLDF change that every segment of it repeats (all but the segment's own). -#}
{% macro logmaster_change_columns() %}
    {{ return([
        'source_system', 'capture', 'header_length', 'systemid', 'dbid', 'psid', 'tbobid',
        'tbownerlen', 'tbnamelen', 'dbname', 'tsname', 'tableowner', 'tablename', 'partnum',
        'memberid', 'rid', 'pagenumfmt', 'change_type', 'sqltype', 'logrecdisp', 'sqlsrctype',
        'logbytes', 'logdelta', 'anomalyrowid', 'anomalytype', 'anomalyrba', 'sqlrirba',
        'loglrsn', 'logrba', 'uorid', 'uoridlrsn', 'uordisp', 'uorcommitlrsn', 'uorcommitpoint',
        'incompletetrans', 'incompletedep', 'uorhascomp', 'connectiontype', 'connectid',
        'correlationid', 'authid', 'plan', 'luwnetworkid', 'luwname', 'luwinstanceno',
        'luwsequenceno', 'log_timestamp_text', 'log_timestamp', 'uortimestamp_text',
        'uortimestamp', 'uorcommittimestamp_text', 'uorcommittimestamp', 'totalsegs'
    ]) }}
{% endmacro %}

{#- A 20-hex-digit RBA/LRSN that is all zeros means "not recorded". -#}
{% macro is_zero_position(column) -%}
    coalesce({{ column }} = '00000000000000000000', true)
{%- endmacro %}

{#- A Log Master change's transaction: the URID (the RBA of the UR's first record), qualified
    by the data sharing member when there is one (the same URID on two members is two URs). -#}
{% macro logmaster_transaction_id(uorid, memberid) -%}
    case
        when {{ memberid }} > 0 then concat({{ uorid }}, '-M', {{ memberid }})
        else {{ uorid }}
    end
{%- endmacro %}

{#- An LLDF record's word on its UR's commit point: UORCOMMITLRSN when the UR committed
    (UORDISP C) and the position is recorded. -#}
{% macro logmaster_commit_position(uordisp, uorcommitlrsn) -%}
    case
        when {{ uordisp }} = 'C' and not {{ is_zero_position(uorcommitlrsn) }}
            then {{ uorcommitlrsn }}
    end
{%- endmacro %}

{#- A UR's disposition from the counts of its records that say it committed (UORDISP C) and
    that say it aborted (A): one of either settles it; none leaves it in flight. -#}
{% macro logmaster_settled_disposition(committed_records, aborted_records) -%}
    case
        when {{ committed_records }} > 0 then 'committed'
        when {{ aborted_records }} > 0 then 'aborted'
        else 'in_flight'
    end
{%- endmacro %}

{#- A record's own disposition: what LOGRECDISP says of the record itself (its UR aborted, a
    savepoint rolled it back, a later record reversed it), else its UR's settled disposition. -#}
{% macro logmaster_record_disposition(logrecdisp, transaction_disposition) -%}
    case {{ logrecdisp }}
        when 'A' then 'aborted'
        when 'S' then 'savepoint_rollback'
        when 'O' then 'reversed'
        else {{ transaction_disposition }}
    end
{%- endmacro %}
