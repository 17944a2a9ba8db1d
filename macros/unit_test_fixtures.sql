-- noqa: disable=all
-- (get_fixture_sql is dbt's own macro, kept as dbt writes it so that it compares line by line)
{#-
    Unit-test inputs dbt cannot type by a table.

    dbt types a unit test's dict fixture by the input's table in the warehouse ("Not able to
    get columns for unit test ... because the relation doesn't exist" without one). An
    ephemeral model has none, and an incremental model's own rows (`input: this`) have none in
    a build of a new warehouse, where the unit test runs before the model. This is dbt's
    get_fixture_sql (dbt-core 1.11, include/global_project/macros/unit_test_sql) with one
    change: for the models `fixture_columns` lists, the columns and types come from there.
    Re-check it against dbt's when the pinned dbt-core changes.
-#}
{% macro get_fixture_sql(rows, column_name_to_data_types) %}
-- Fixture for {{ model.name }}
{% set default_row = {} %}
{%- set column_name_to_quoted = {} -%}
{%- if not column_name_to_data_types and model.name in fixture_columns() -%}
{%-   set column_name_to_data_types = fixture_columns()[model.name] -%}
{%-   for column_name in column_name_to_data_types -%}
{%-     do column_name_to_quoted.update({column_name: adapter.quote(column_name)}) -%}
{%-   endfor -%}
{%- endif -%}

{%- if not column_name_to_data_types -%}
{#-- Use defer_relation IFF it is available in the manifest and 'this' is missing from the database --#}
{%-   set this_or_defer_relation = defer_relation if (defer_relation and not load_relation(this)) else this -%}
{%-   set columns_in_relation = adapter.get_columns_in_relation(this_or_defer_relation) -%}

{%-   set column_name_to_data_types = {} -%}
{%-   for column in columns_in_relation -%}

{#-- This needs to be a case-insensitive comparison --#}
{%-     do column_name_to_data_types.update({column.name|lower: column.data_type}) -%}
{%-     do column_name_to_quoted.update({column.name|lower: column.quoted}) -%}
{%-   endfor -%}
{%- endif -%}

{%- if not column_name_to_data_types -%}
    {{ exceptions.raise_compiler_error("Not able to get columns for unit test '" ~ model.name ~ "' from relation " ~ this ~ " because the relation doesn't exist") }}
{%- endif -%}

{%- for column_name, column_type in column_name_to_data_types.items() -%}
    {%- do default_row.update({column_name: (safe_cast("null", column_type) | trim )}) -%}
{%- endfor -%}

{{ validate_fixture_rows(rows, row_number) }}

{%- for row in rows -%}
{%-   set formatted_row = format_row(row, column_name_to_data_types) -%}
{%-   set default_row_copy = default_row.copy() -%}
{%-   do default_row_copy.update(formatted_row) -%}
select
{%-   for column_name, column_value in default_row_copy.items() %} {{ column_value }} as {{ column_name_to_quoted[column_name] }}{% if not loop.last -%}, {%- endif %}
{%-   endfor %}
{%-   if not loop.last %}
union all
{%    endif %}
{%- endfor -%}

{%- if (rows | length) == 0 -%}
    select
    {%- for column_name, column_value in default_row.items() %} {{ column_value }} as {{ column_name_to_quoted[column_name] }}{% if not loop.last -%},{%- endif %}
    {%- endfor %}
    limit 0
{%- endif -%}
{% endmacro %}

{#- The columns (name: Spark SQL type) of the models above, in order: the model's output.
    tests/logmaster/test_pipeline.py checks them against the model's query and table. -#}
{% macro fixture_columns() %}
    {{ return({
        'int_logmaster_row_images_decoded': {
            'source_system': 'string', 'capture': 'string', 'header_length': 'int',
            'systemid': 'string', 'dbid': 'int', 'psid': 'int', 'tbobid': 'int',
            'tbownerlen': 'int', 'tbnamelen': 'int', 'dbname': 'string', 'tsname': 'string',
            'tableowner': 'string', 'tablename': 'string', 'partnum': 'int', 'memberid': 'int',
            'rid': 'string', 'pagenumfmt': 'string', 'change_type': 'string',
            'sqltype': 'string', 'logrecdisp': 'string', 'sqlsrctype': 'string',
            'logbytes': 'bigint', 'logdelta': 'int', 'anomalyrowid': 'int',
            'anomalytype': 'string', 'anomalyrba': 'string', 'sqlrirba': 'string',
            'loglrsn': 'string', 'logrba': 'string', 'uorid': 'string', 'uoridlrsn': 'string',
            'uordisp': 'string', 'uorcommitlrsn': 'string', 'uorcommitpoint': 'string',
            'incompletetrans': 'string', 'incompletedep': 'string', 'uorhascomp': 'string',
            'connectiontype': 'string', 'connectid': 'string', 'correlationid': 'string',
            'authid': 'string', 'plan': 'string', 'luwnetworkid': 'string',
            'luwname': 'string', 'luwinstanceno': 'string', 'luwsequenceno': 'int',
            'log_timestamp_text': 'string', 'log_timestamp': 'timestamp',
            'uortimestamp_text': 'string', 'uortimestamp': 'timestamp',
            'uorcommittimestamp_text': 'string', 'uorcommittimestamp': 'timestamp',
            'totalsegs': 'int', 'raw_file': 'string', 'raw_offset': 'bigint', 'data': 'binary',
            'raw_records': 'array<struct<source_file:string,raw_offset:bigint,record_length:bigint>>',
            'reassembly_error': 'string', 'capture_fingerprint': 'string',
            'table_schema': 'string', 'table_name': 'string', 'column_names': 'array<string>',
            'key_columns': 'array<string>', 'layout_text': 'string',
            'images_decoded_by': 'string', 'column_types': 'map<string,string>',
            'before_image': 'map<string,string>', 'after_image': 'map<string,string>',
            'decode_warnings': 'array<string>', 'decode_error': 'string',
            'before_unavailable': 'map<string,string>',
            'after_unavailable': 'map<string,string>'
        },
        'int_logmaster_changes_standardized': {
            'change_id': 'string', 'source_system': 'string', 'capture': 'string',
            'raw_file': 'string', 'raw_offset': 'bigint',
            'raw_records': 'array<struct<source_file:string,raw_offset:bigint,record_length:bigint>>',
            'table_schema': 'string', 'table_name': 'string', 'operation': 'string',
            'change_kind': 'string', 'source_change_type': 'string', 'generated_by': 'string',
            'before_image': 'map<string,string>', 'after_image': 'map<string,string>',
            'key_columns': 'array<string>', 'truncate_scope': 'string',
            'partition_number': 'int', 'partition_key_columns': 'array<string>',
            'partition_low_key': 'map<string,string>',
            'partition_high_key': 'map<string,string>', 'column_types': 'map<string,string>',
            'decode_warnings': 'array<string>', 'log_stream': 'string',
            'transaction_id': 'string', 'disposition': 'string',
            'transaction_disposition': 'string', 'commit_position': 'string',
            'log_position': 'string', 'change_ts': 'timestamp', 'begin_ts': 'timestamp',
            'commit_ts': 'timestamp', 'authid': 'string', 'plan_name': 'string',
            'correlation_id': 'string', 'connection_id': 'string', 'connection_type': 'string',
            'change_seq': 'int', 'incomplete_transaction': 'boolean',
            'incomplete_dependency': 'boolean', 'has_compensation': 'boolean',
            'before_unavailable': 'map<string,string>',
            'after_unavailable': 'map<string,string>', 'logrecdisp': 'string',
            'uordisp': 'string', 'uorcommitlrsn': 'string', 'uortimestamp': 'timestamp',
            'uorcommittimestamp': 'timestamp', 'capture_fingerprint': 'string'
        }
    }) }}
{% endmacro %}
