{#-
    The columns of a change's row event in fct_row_history (events), from `epochs`: what a
    base snapshot's row (docs/snapshots.md) also has, so both union into one event stream.
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
    key_columns,
    column_types,
    change_id,
    commit_position,
    commit_ts,
    change_order,
    operation,
    false as opens_from_start
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
