{#-
    SQL text of the source databases (Db2 for z/OS, Db2 LUW, solidDB), written by Spark SQL
    expressions: UNDO/REDO statements of marts.fct_change_sql. The three dialects share what is
    used here: double-quoted identifiers ("" for a quote inside), string constants in single
    quotes ('' for a quote inside), X'..' binary constants, GX'..' graphic constants (Db2),
    ANSI DATE/TIME/TIMESTAMP constants, numbers as plain digits.
    Arguments are Spark SQL expressions (column names, lambda variables), not values.
-#}

{#- "name" with embedded quotes doubled. -#}
{% macro sql_identifier(name) -%}
    concat(chr(34), replace({{ name }}, chr(34), repeat(chr(34), 2)), chr(34))
{%- endmacro %}

{#- 'text' with embedded quotes doubled. -#}
{% macro sql_string_constant(text) -%}
    concat(chr(39), replace({{ text }}, chr(39), repeat(chr(39), 2)), chr(39))
{%- endmacro %}

{#- "SCHEMA"."TABLE" (just "TABLE" when the schema is unknown). -#}
{% macro sql_table_name(table_schema, table_name) -%}
    concat_ws('.', {{ sql_identifier(table_schema) }}, {{ sql_identifier(table_name) }})
{%- endmacro %}

{#-
    The constant for one value as the marts render it (specs README "Value rendering") in a
    column of SQL type `data_type` (a `column_types` entry; null = unknown):
      NULL; numbers as they are (NaN/Infinity, which have no numeric constant, and a DECIMAL or
      DECFLOAT value with an exponent, which would read as a floating-point constant, as
      strings);
      BOOLEAN as TRUE/FALSE; binary (FOR BIT DATA, BINARY, VARBINARY, BLOB, ROWID) as X'..';
      graphic shown as hex (`CCSID EBCDIC|ASCII`, see int_logmaster_table_layouts) as GX'..';
      DATE/TIME/TIMESTAMP 'text'; TIMESTAMP WITH TIME ZONE as a string constant (Db2 casts it
      on assignment and comparison; an ANSI TIMESTAMP constant with an offset is read without
      it by some engines); everything else, and every value of an unknown type, as a string
      constant, which Db2 and solidDB cast implicitly to the column's numeric or datetime type.
-#}
{% macro sql_constant(value, data_type) -%}
    case
        when {{ value }} is null then 'NULL'
        when {{ data_type }} is null then {{ sql_string_constant(value) }}
        when
            upper({{ data_type }}) rlike
            '^(SMALLINT|INTEGER|INT|BIGINT|TINYINT|DECIMAL|DEC|NUMERIC|NUM|REAL|FLOAT|DOUBLE|DECFLOAT|BIT)([ (]|$)'
            then
                if(
                    {{ value }} rlike '^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$'
                    and not (
                        upper({{ data_type }}) rlike '^(DECIMAL|DEC|NUMERIC|NUM|DECFLOAT)([ (]|$)'
                        and {{ value }} rlike '[eE]'
                    ),
                    {{ value }},
                    {{ sql_string_constant(value) }}
                )
        when upper({{ data_type }}) rlike '^BOOLEAN' and upper({{ value }}) in ('TRUE', 'FALSE')
            then upper({{ value }})
        when
            upper({{ data_type }}) rlike
            'FOR BIT DATA|^(BINARY|VARBINARY|LONG VARBINARY|BLOB|ROWID)([ (]|$)'
            and {{ value }} rlike '^([0-9A-Fa-f]{2})*$'
            then concat('X', chr(39), upper({{ value }}), chr(39))
        when
            upper({{ data_type }}) rlike
            '^(GRAPHIC|VARGRAPHIC|LONG VARGRAPHIC|DBCLOB).* CCSID (EBCDIC|ASCII)'
            and {{ value }} rlike '^([0-9A-Fa-f]{4})*$'
            then concat('GX', chr(39), upper({{ value }}), chr(39))
        when upper({{ data_type }}) rlike '^(DATE|TIME)$'
            then concat(upper({{ data_type }}), ' ', {{ sql_string_constant(value) }})
        when upper({{ data_type }}) rlike '^TIMESTAMP( ?[(][0-9]+[)])?$'
            then concat('TIMESTAMP ', {{ sql_string_constant(value) }})
        else {{ sql_string_constant(value) }}
    end
{%- endmacro %}

{#- Whether a column of this type can be compared with = in a WHERE clause (not a LOB/LONG). -#}
{% macro sql_is_comparable(data_type) -%}
    coalesce(
        not upper({{ data_type }}) rlike
        '^(BLOB|CLOB|DBCLOB|LONG VARCHAR|LONG VARGRAPHIC|LONG VARBINARY|LONG WVARCHAR|XML)',
        true
    )
{%- endmacro %}

{#-
    The constants of several row images at once: `images` an array of maps (column -> value
    text) of one change, `types` its column_types; gives the array of maps column -> SQL
    constant (sql_constant), in the same order. The statement macros below take such a map
    (`constants`), so that a change's constants are written once and sql_constant is expanded
    once per call of this macro, not at every statement: fct_change_sql stays a view whose
    text fits the 32,700 characters the embedded Derby metastore keeps.
-#}
{% macro sql_constants(images, types) -%}
    transform(
        {{ images }},
        image -> transform_values(image, (k, v) -> {{ sql_constant('v', types ~ '[k]') }})
    )
{%- endmacro %}

{#- The constant of column k in a constants map (NULL for a column the image lacks). -#}
{% macro sql_constant_of(constants, column) -%}
    coalesce({{ constants }}[{{ column }}], 'NULL')
{%- endmacro %}

{#- ("A", "B") VALUES (1, 'x') of a row image's constants (sql_constants). -#}
{% macro sql_insert_values(constants) -%}
    concat(
        '(',
        array_join(transform(map_keys({{ constants }}), k -> {{ sql_identifier('k') }}), ', '),
        ') VALUES (',
        array_join(transform(map_keys({{ constants }}), k -> {{ constants }}[k]), ', '),
        ')'
    )
{%- endmacro %}

{#- "A" = 1 AND "B" IS NULL over the given columns of a row image's constants. -#}
{% macro sql_match(constants, columns) -%}
    array_join(
        transform(
            {{ columns }},
            k -> if(
                {{ sql_constant_of(constants, 'k') }} = 'NULL',
                concat({{ sql_identifier('k') }}, ' IS NULL'),
                concat({{ sql_identifier('k') }}, ' = ', {{ constants }}[k])
            )
        ),
        ' AND '
    )
{%- endmacro %}

{#- "A" = 1, "B" = NULL over the given columns of a row image's constants. -#}
{% macro sql_assignments(constants, columns) -%}
    array_join(
        transform(
            {{ columns }},
            k -> concat({{ sql_identifier('k') }}, ' = ', {{ sql_constant_of(constants, 'k') }})
        ),
        ', '
    )
{%- endmacro %}

{#-
    The columns that find a row image's row: the key when the image has every key column,
    else every column that can be compared (LOBs and LONG types cannot).
-#}
{% macro sql_match_columns(image, types, key_columns) -%}
    if(
        size({{ key_columns }}) > 0
        and forall({{ key_columns }}, k -> map_contains_key({{ image }}, k)),
        {{ key_columns }},
        filter(map_keys({{ image }}), k -> {{ sql_is_comparable(types ~ '[k]') }})
    )
{%- endmacro %}

{#-
    One side of a partition's key range (a partition-level mass delete) as a condition on the
    limit key `bound` (its constants: a map from key column to SQL constant, sql_constants):
    the row-value comparison
    ("A", "B") op (x, y) written out column by column, which every dialect reads:
    (("A" op x) OR ("A" = x AND "B" last_op y)), op strict on every column but the last;
    a one-column limit key: "A" last_op x. The limit key holds the first columns of
    `key_columns`, as many as it has values.
-#}
{% macro sql_key_bound(bound, key_columns, operator, last_operator) -%}
    concat(
        if(size({{ bound }}) > 1, '(', ''),
        array_join(
            transform(
                slice({{ key_columns }}, 1, size({{ bound }})),
                (c, i) -> concat(
                    if(size({{ bound }}) > 1, '(', ''),
                    array_join(
                        concat(
                            transform(
                                slice({{ key_columns }}, 1, i),
                                p -> concat(
                                    {{ sql_identifier('p') }}, ' = ',
                                    {{ sql_constant_of(bound, 'p') }}
                                )
                            ),
                            array(
                                concat(
                                    {{ sql_identifier('c') }},
                                    if(
                                        i + 1 = least(size({{ bound }}), size({{ key_columns }})),
                                        ' {{ last_operator }} ',
                                        ' {{ operator }} '
                                    ),
                                    {{ sql_constant_of(bound, 'c') }}
                                )
                            )
                        ),
                        ' AND '
                    ),
                    if(size({{ bound }}) > 1, ')', '')
                )
            ),
            ' OR '
        ),
        if(size({{ bound }}) > 1, ')', '')
    )
{%- endmacro %}

{#-
    The WHERE condition of a partition-level mass delete: keys above the low limit key
    (exclusive) and at or below the high one (inclusive), as Db2 for z/OS partitions by
    ascending limit keys; e.g. "K" > 2 AND "K" <= 5. An empty or null limit key is no bound on
    its side (array_join skips the null); no bound at all gives ''.
-#}
{% macro sql_partition_range(low_key, high_key, key_columns) -%}
    array_join(
        array(
            if(
                coalesce(size({{ low_key }}), 0) > 0,
                {{ sql_key_bound(low_key, key_columns, '>', '>') }},
                null
            ),
            if(
                coalesce(size({{ high_key }}), 0) > 0,
                {{ sql_key_bound(high_key, key_columns, '<', '<=') }},
                null
            )
        ),
        ' AND '
    )
{%- endmacro %}
