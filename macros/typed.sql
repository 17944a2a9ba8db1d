{#-
    Net changes of a typed change feed (schema `changes`, docs/typed-tables.md) between two
    commit positions, both included, as Iceberg's changelog view with net_changes computes
    them. Rows are told apart by `_row_key` (the key values, else a hash of the whole image):
    - a row inserted and deleted in the window is not there;
    - a row that existed before the window and exists after it (several updates, or a delete
      then an insert of the same key) is one update_preimage (the first before image) and one
      update_postimage (the last after image);
    - a row inserted in the window (and updated after) is one insert with its last values;
    - a row deleted in the window (after updates) is one delete with its first before image.
    A truncate in the window is kept as its `truncate` row; the rows around it are netted as
    if it were not there.
    `relation` is the view ('changes.<name>'); `columns` its columns in order (none: read
    from the catalog). Plain Jinja apart from that lookup: `logmart changes --net` renders
    this same macro (udfs/typed.py, net_changes_sql).
        select * from ({{ net_changes('changes.db2zos__prod__sales__orders',
                                      '00DECFC4922F6A000000', '00DECFC4922F6AFFFFFF') }})
-#}
{% macro net_changes(relation, from_position, to_position, columns=none) -%}
    {%- if columns is none -%}
        {%- set schema, identifier = relation.split('.', 1) -%}
        {%- set found = adapter.get_columns_in_relation(
            api.Relation.create(schema=schema, identifier=identifier)
        ) -%}
        {%- set columns = found | map(attribute='name') | list -%}
    {%- endif -%}
    {%- set order = "_commit_position, _change_seq, _change_type = 'update_postimage'" -%}
    {%- set order_desc = "_commit_position desc, _change_seq desc, "
        ~ "_change_type = 'update_postimage' desc" -%}
    with window_changes as (
        select *
        from {{ relation }}
        where
            _commit_position >= '{{ from_position | replace("'", "\\'") }}'
            and _commit_position <= '{{ to_position | replace("'", "\\'") }}'
    ),

    ends as (
        select
            *,
            row_number() over (partition by _row_key order by {{ order }}) as _n_first,
            row_number() over (partition by _row_key order by {{ order_desc }}) as _n_last,
            first_value(_change_type) over (
                partition by _row_key order by {{ order }}
                rows between unbounded preceding and unbounded following
            ) in ('update_preimage', 'delete') as _existed_before,
            last_value(_change_type) over (
                partition by _row_key order by {{ order }}
                rows between unbounded preceding and unbounded following
            ) in ('insert', 'update_postimage') as _exists_after
        from window_changes
        where _change_type != 'truncate'
    ),

    net as (
        select
            *,
            case
                when _n_first = 1 and _existed_before
                    then if(_exists_after, 'update_preimage', 'delete')
                else if(_existed_before, 'update_postimage', 'insert')
            end as _net_change_type
        from ends
        where (_n_first = 1 and _existed_before) or (_n_last = 1 and _exists_after)
        union all
        select
            *,
            1 as _n_first,
            1 as _n_last,
            false as _existed_before,
            false as _exists_after,
            'truncate' as _net_change_type
        from window_changes
        where _change_type = 'truncate'
    )

    select
        {% for column in columns -%}
        {%- if column == '_change_type' -%}
                _net_change_type as _change_type
            {%- else -%}
            `{{ column | replace('`', '``') }}`
        {%- endif -%}
        {{- ',' if not loop.last }}
    {% endfor -%}
    from net
{%- endmacro %}
