{#- Every formgrader page: nbgrader's, with coursekit.js (what coursekit found on each
    submission, and a progress panel while a button's action runs). -#}
{%- extends 'nbgrader/base.tpl' -%}

{%- block script -%}
{{ super() }}
<script src="{{ base_url }}/formgrader/coursekit/coursekit.js"></script>
{%- endblock -%}
