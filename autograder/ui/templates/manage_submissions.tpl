{#- nbgrader's Manage Submissions, with coursekit's command in its instructions. -#}
{%- extends 'nbgrader/manage_submissions.tpl' -%}

{%- block messages -%}
<div class="panel-group" id="accordion" role="tablist" aria-multiselectable="true">
  <div class="panel panel-default">
    <div class="panel-heading" role="tab" id="headingOne">
      <h4 class="panel-title">
        <a class="collapsed" role="button" data-toggle="collapse" data-parent="#accordion" href="#collapseOne" aria-expanded="false" aria-controls="collapseOne">
          Instructions (click to expand)
        </a>
      </h4>
    </div>
    <div id="collapseOne" class="panel-collapse collapse" role="tabpanel" aria-labelledby="headingOne">
      <div class="panel-body">
        <p>
          The ⚡ icon of a row grades that student's hand-in with coursekit (the notebook runs
          in the grading sandbox: 15–40 s). To grade every hand-in at once, run in a
          <a target="_blank" href="{{ base_url }}/terminals/1">terminal</a>:
        </p>
        <pre>coursekit autograde --root "{{ course_dir }}/.." --lab "{{ assignment_id }}"</pre>
        <p>
          A <span class="label label-danger">flagged</span> hand-in is one grading found
          something about for a TA to look at: its graded page says what.
          <span class="label label-default">missing</span> and
          <span class="label label-default">corrupt</span> hand-ins are graded 0 points, and
          their page says why.
        </p>
      </div>
    </div>
  </div>
</div>
{%- endblock -%}
