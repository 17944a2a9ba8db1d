{#-
    The columns of a change's row event in fct_row_history (events), from `epochs`: what a
    base snapshot's row (docs/snapshots.md) also has, so both union into one event stream.
    Narrow on purpose: the images and column maps join back once, after the windows.
    `opens_from_start`: the version it opens was there from the start (a snapshot's row
    taken before the log's first commit); never for a change.
-#}
{% macro row_event_columns() -%}
    source_system,
    log_stream,
    capture,
    table_schema,
    table_name,
    epoch,
    change_id,
    commit_position,
    commit_ts,
    change_order,
    operation,
    false as opens_from_start
{%- endmacro %}

{#-
    Whether a row image holds every key column of its table (fct_row_history then knows the
    row by its key values; else by a hash of the whole image).
-#}
{% macro image_has_key(image, key_columns) -%}
    (size({{ key_columns }}) > 0 and forall({{ key_columns }}, k -> map_contains_key({{ image }}, k)))
{%- endmacro %}

{#-
    fct_row_history's row_key of a row image: its key values as JSON, else a hash of the whole
    image (udfs/typed.py row_key_sql says the same for one table).
-#}
{% macro image_row_key(image, key_columns) -%}
    if(
        {{ image_has_key(image, key_columns) }},
        to_json(transform({{ key_columns }}, k -> {{ image }}[k])),
        sha2(to_json(array_sort(map_entries({{ image }}))), 256)
    )
{%- endmacro %}

{#-
    A base snapshot's row image as the log would show the row: a Parquet unload's timestamps
    carry microseconds at most and are rendered without a zero fraction (udfs/snapshots.py),
    so a TIMESTAMP / TIMESTAMP(p) column's value gets the fraction digits the source logs (p;
    without p, 9 for solidDB, 6 for Db2), padded or cut. A CSV's values stay as written.
-#}
{% macro snapshot_image(image, column_types, source_system, file_format) -%}
    if(
        {{ file_format }} = 'parquet',
        transform_values(
            {{ image }},
            (k, v) -> case
                when
                    v is null
                    or not coalesce(
                        upper({{ column_types }}[k]) rlike '^TIMESTAMP([(][0-9]+[)])?$', false
                    )
                    then v
                when
                    coalesce(
                        cast(
                            nullif(
                                regexp_extract(
                                    upper({{ column_types }}[k]), '^TIMESTAMP[(]([0-9]+)[)]$', 1
                                ),
                                ''
                            ) as int
                        ),
                        if({{ source_system }} = 'soliddb', 9, 6)
                    ) = 0
                    then substr(v, 1, 19)
                else concat(
                    substr(v, 1, 19),
                    '.',
                    rpad(
                        substr(v, 21),
                        coalesce(
                            cast(
                                nullif(
                                    regexp_extract(
                                        upper({{ column_types }}[k]),
                                        '^TIMESTAMP[(]([0-9]+)[)]$',
                                        1
                                    ),
                                    ''
                                ) as int
                            ),
                            if({{ source_system }} = 'soliddb', 9, 6)
                        ),
                        '0'
                    )
                )
            end
        ),
        {{ image }}
    )
{%- endmacro %}

{#-
    fct_row_history's table order: a change's place in its table's commit order, as a value
    that sorts in that order: `step` 1 for a change (commit position, transaction, change_seq),
    0 for a base snapshot's row (its position), which comes before every change. A value, not
    a row number over the table: a window over a whole table runs in one task, and a log often
    has one table with most of the changes. Arguments are SQL expressions.
-#}
{% macro change_order(step, commit_position, transaction_id, change_seq) -%}
    named_struct(
        'step', {{ step }},
        'commit_position', {{ commit_position }},
        'transaction_id', {{ transaction_id }},
        'change_seq', {{ change_seq }}
    )
{%- endmacro %}

{#-
    fct_row_history: the rows of `relation` (changes, each with its change_order) with their
    epoch, the number of their table's table-level truncates at or before them
    (`table_truncates`: truncate_orders by table). Rows live in the epoch between two
    truncates; a truncate's epoch counts itself. A broadcast join, not a window over the whole
    table.
-#}
{% macro with_epoch(relation, table_truncates) -%}
    select /*+ broadcast({{ table_truncates }}) */
        {{ relation }}.*,
        if(
            {{ table_truncates }}.truncate_orders is null,
            0,
            size(filter(
                {{ table_truncates }}.truncate_orders, t -> t <= {{ relation }}.change_order
            ))
        ) as epoch
    from {{ relation }}
    left join {{ table_truncates }}
        on
            {{ same_table(relation, table_truncates) }}
{%- endmacro %}

{#-
    One of a change's row events in fct_row_history (events), from `epochs`: its `side`
    image ('before' or 'after') leaves the row (copy_delta -1, first) or arrives (1, after).
-#}
{% macro image_event(side, leaves) -%}
    named_struct(
        'copy_delta', {{ -1 if leaves else 1 }},
        'event_step', {{ 0 if leaves else 1 }},
        'image_side', '{{ side }}',
        'has_key', {{ side }}_has_key,
        'row_key', {{ side }}_row_key,
        'range_image', {{ side }}_range_image,
        'range_column_types', range_column_types
    )
{%- endmacro %}

{#- The same table of the same log stream on both sides of a join (a table without a schema
    matches one without a schema). -#}
{% macro same_table(left, right) -%}
    {{ left }}.source_system = {{ right }}.source_system
    and {{ left }}.log_stream = {{ right }}.log_stream
    and {{ left }}.table_schema <=> {{ right }}.table_schema
    and {{ left }}.table_name = {{ right }}.table_name
{%- endmacro %}
