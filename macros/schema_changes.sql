{#-
    Helpers of the schema change marts (fct_schema_changes, dim_table_versions).
-#}

{#- A DDL statement's text, upper case, blanks collapsed: what the kind rules below read. -#}
{% macro ddl_statement_normalized(text) -%}
    regexp_replace(upper(trim({{ text }})), '\\s+', ' ')
{%- endmacro %}

{#-
    The change_kind (seed schema_change_kinds) of a DDL statement's text, by its leading words;
    `other_ddl` for a statement it does not name (GRANT, COMMENT ON, CREATE TABLESPACE …) and
    null for null text. ALTER TABLE … ADD without COLUMN adds a column unless a constraint,
    key, partition or clone follows.
-#}
{% macro ddl_statement_kind(text) -%}
    case
        when {{ text }} is null then null
        when {{ ddl_statement_normalized(text) }} rlike '^CREATE (UNIQUE )?INDEX '
            then 'create_index'
        when {{ ddl_statement_normalized(text) }} rlike '^CREATE (GLOBAL TEMPORARY |AUXILIARY )?TABLE '
            then 'create_table'
        when {{ ddl_statement_normalized(text) }} rlike '^CREATE (OR REPLACE )?VIEW '
            then 'create_view'
        when {{ ddl_statement_normalized(text) }} rlike '^CREATE (OR REPLACE )?SEQUENCE '
            then 'create_sequence'
        when {{ ddl_statement_normalized(text) }} like 'CREATE COUNTER %' then 'create_counter'
        when {{ ddl_statement_normalized(text) }} like 'DROP TABLE %' then 'drop_table'
        when {{ ddl_statement_normalized(text) }} like 'DROP INDEX %' then 'drop_index'
        when {{ ddl_statement_normalized(text) }} like 'DROP VIEW %' then 'drop_view'
        when {{ ddl_statement_normalized(text) }} like 'DROP SEQUENCE %' then 'drop_sequence'
        when {{ ddl_statement_normalized(text) }} like 'DROP COUNTER %' then 'drop_counter'
        when {{ ddl_statement_normalized(text) }} like 'TRUNCATE %' then 'truncate'
        when {{ ddl_statement_normalized(text) }} rlike '^RENAME (TABLE )?[^ ]+ TO '
            and {{ ddl_statement_normalized(text) }} not like 'RENAME INDEX %'
            then 'rename_table'
        when {{ ddl_statement_normalized(text) }} like 'ALTER TABLE %'
            then case
                when {{ ddl_statement_normalized(text) }} like '% RENAME TO %' then 'rename_table'
                when {{ ddl_statement_normalized(text) }} like '% RENAME COLUMN %'
                    then 'rename_column'
                when {{ ddl_statement_normalized(text) }} like '% ADD COLUMN %' then 'add_column'
                when {{ ddl_statement_normalized(text) }} like '% DROP COLUMN %' then 'drop_column'
                when {{ ddl_statement_normalized(text) }} rlike ' (ALTER|MODIFY) (COLUMN )?'
                    then 'alter_column'
                when
                    {{ ddl_statement_normalized(text) }}
                    rlike ' ADD (?!CONSTRAINT|PRIMARY|FOREIGN|UNIQUE|CHECK|PARTITION|MATERIALIZED|RESTRICT|PERIOD|VERSIONING|CLONE|ORGANIZATION)'
                    then 'add_column'
                else 'alter_table'
            end
        else 'other_ddl'
    end
{%- endmacro %}

{#-
    The object a DDL statement creates or drops besides a table (index, view, sequence,
    counter), as the statement names it; null for other statements.
-#}
{% macro ddl_statement_object(text) -%}
    nullif(
        regexp_extract(
            {{ ddl_statement_normalized(text) }},
            '^(CREATE|DROP) (UNIQUE |OR REPLACE )?(INDEX|VIEW|SEQUENCE|COUNTER) ([^ (]+)',
            4
        ),
        ''
    )
{%- endmacro %}

{#-
    A table version's columns as an array of structs (name, SQL type, place in the key), in
    column order, from the arrays of names and of types (same order) and the key's names.
-#}
{% macro table_version_columns(names, types, keys) -%}
    transform(
        {{ names }},
        (column_name, i) -> named_struct(
            'column_name', column_name,
            'column_type', {{ types }}[i],
            'key_seq', nullif(array_position(coalesce({{ keys }}, array()), column_name), 0)
        )
    )
{%- endmacro %}

{#- The columns of table_version_columns as readable text: `ID INTEGER, NAME VARCHAR(40)`. -#}
{% macro table_version_layout(columns) -%}
    array_join(
        transform(
            {{ columns }},
            c -> concat_ws(' ', c.column_name, coalesce(c.column_type, '(type unknown)'))
        ),
        ', '
    )
{%- endmacro %}
