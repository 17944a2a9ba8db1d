{#-
    The log stream of a capture (udfs/raw_files.py log_stream): its first folder under the
    source's raw folder. Captures of one stream are pieces of one database's log: transaction
    ids are unique within a stream and transactions are resolved across its captures.
-#}
{% macro log_stream(capture) -%}
    split_part({{ capture }}, '/', 1)
{%- endmacro %}
