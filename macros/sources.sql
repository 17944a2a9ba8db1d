{#-
    The log sources whose models feed the shared marts. Each source <s> provides
    int_<s>_changes_standardized (the change contract of fct_changes),
    int_<s>_records_quarantined (quarantine rows) and int_<s>_records_accounted (where each
    record read ended up) plus int_<s>_records_read (every record read, for reconciliation).
-#}
{% macro logmart_sources() %}
    {{ return(['logmaster', 'db2luw', 'soliddb']) }}
{% endmacro %}
