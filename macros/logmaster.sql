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
