{#
  Whether a row's key falls in a partition's key range (a partition-level mass delete):
  above the low limit key (the previous partition's limit key, exclusive) and at or below the
  high one (the partition's own, inclusive), as Db2 for z/OS partitions by ascending limit
  keys. A limit key holds the leading partitioning key columns; the key is compared column by
  column (lexicographically) on as many columns as the limit key has. Each value compares by
  its column's type (column_types): SMALLINT/INTEGER/BIGINT/DECIMAL as decimal(38, 9),
  REAL/DOUBLE as double, every other type as its rendered text (dates, times and timestamps
  render so that text order is time order; character data in Unicode code point order, not
  EBCDIC's). An empty or null limit map is no bound on its side. A NULL value sorts low.
#}
{% macro limit_key_tuple(values_map, column_types, columns) -%}
    transform(
        {{ columns }},
        c -> named_struct(
            'd', if(
                coalesce({{ column_types }}[c] rlike '^(SMALLINT|INTEGER|BIGINT|DECIMAL)', false),
                cast({{ values_map }}[c] as decimal(38, 9)),
                null
            ),
            'f', if(
                coalesce({{ column_types }}[c] rlike '^(REAL|DOUBLE)', false),
                cast({{ values_map }}[c] as double),
                null
            ),
            't', if(
                coalesce(
                    {{ column_types }}[c] rlike '^(SMALLINT|INTEGER|BIGINT|DECIMAL|REAL|DOUBLE)',
                    false
                ),
                null,
                {{ values_map }}[c]
            )
        )
    )
{%- endmacro %}

{% macro in_partition_range(row_image, column_types, key_columns, low_key, high_key) -%}
    (
        (
            coalesce(size({{ low_key }}), 0) <= 0
            or {{ limit_key_tuple(
                row_image, column_types,
                'slice(' ~ key_columns ~ ', 1, size(' ~ low_key ~ '))'
            ) }} > {{ limit_key_tuple(
                low_key, column_types,
                'slice(' ~ key_columns ~ ', 1, size(' ~ low_key ~ '))'
            ) }}
        )
        and (
            coalesce(size({{ high_key }}), 0) <= 0
            or {{ limit_key_tuple(
                row_image, column_types,
                'slice(' ~ key_columns ~ ', 1, size(' ~ high_key ~ '))'
            ) }} <= {{ limit_key_tuple(
                high_key, column_types,
                'slice(' ~ key_columns ~ ', 1, size(' ~ high_key ~ '))'
            ) }}
        )
    )
{%- endmacro %}
