{#- nbgrader's page for a submission without a graded notebook, with coursekit's reasons
    (a missing or corrupt hand-in is a graded outcome: score 0, and why). nbgrader's template
    environment does not autoescape: every text from a submission goes through |e. -#}
{% from 'formgrade/formgrade_macros.html.j2' import nav, header %}
{% from 'coursekit_outcome.html.j2' import outcome_panel %}

<!DOCTYPE html>
<html>
<head>
{{ header(resources) }}
<link rel="stylesheet" href="{{ resources.base_url }}/formgrader/static/css/formgrade.css" />
</head>

<body>
  {{ nav(resources) }}
  <div class="container">
    <div class="panel panel-default">
      <div class="panel-heading">
        <h4 class="panel-title">
          <span>{{ resources.notebook_id|e }}</span>
          <span class="pull-right">Submission {{ resources.index + 1 }} / {{ resources.total }}</span>
        </h4>
      </div>
      <div class="panel-body" id="coursekit-no-notebook">
        {% if outcome %}
        <p><b>{{ resources.student|e }}</b>: no graded notebook to show.</p>
        {{ outcome_panel(outcome, late) }}
        <p>Once the student hands in a readable notebook, grade it again with
          <code>coursekit autograde --student {{ resources.student|e }} --lab {{ resources.assignment_id|e }}</code>
          or the ⚡ Autograde button of Manage Submissions.</p>
        {% else %}
        <p>No graded notebook at {{ resources.filename|e }}, and coursekit has no outcome for
          this submission yet: autograde it first.</p>
        {% endif %}
      </div>
    </div>
  </div>
</body>

</html>
