// coursekit's additions to nbgrader's formgrader pages (served by autograder/ui/formgrader.py,
// loaded last on every page by nbgrader_templates/base.tpl):
//
// 1. A progress panel while a button's action runs. Each action is one POST that takes
//    seconds (⚡ Autograde runs a notebook in the sandbox: 15-40 s), and nbgrader only writes
//    "Please wait..." into the row, which may be scrolled out of view. The panel stays at
//    the top of the window, says what runs and counts the seconds.
// 2. Manage Submissions (and a student's page of Manage Students) shows what coursekit found
//    on each graded hand-in (the server adds it to each submission as `coursekit`): a flag
//    for a TA, a missing or corrupt hand-in, a written answer still to grade.
// 3. A failure's details are headed "Why", not "Traceback": coursekit's errors are messages.
(function () {
    "use strict";

    // ------------------------------------------------------------------ 1. progress
    var ACTIONS = [
        [/\/api\/submission\/([^/]+)\/([^/]+)\/autograde$/, function (m) {
            return ["⚡ Autograding " + m[2] + "'s " + m[1] + " with coursekit",
                    "the notebook runs in the grading sandbox; this usually takes 15-40 s"];
        }],
        [/\/api\/assignment\/([^/]+)\/([^/]+)\/generate_feedback$/, function (m) {
            return ["Writing " + m[2] + "'s feedback page for " + m[1], "coursekit feedback"];
        }],
        [/\/api\/assignment\/([^/]+)\/([^/]+)\/release_feedback$/, function (m) {
            return ["Releasing " + m[2] + "'s feedback on " + m[1],
                    "through the exchange, to the student's Assignment List"];
        }],
        [/\/api\/assignment\/([^/]+)\/assign$/, function (m) {
            return ["Generating " + m[1], "coursekit release, then release --check"];
        }],
        [/\/api\/assignment\/([^/]+)\/unrelease$/, function (m) {
            return ["Taking " + m[1] + " back from the exchange", ""];
        }],
        [/\/api\/assignment\/([^/]+)\/release$/, function (m) {
            return ["Releasing " + m[1] + " to the exchange", "students then fetch it"];
        }],
        [/\/api\/assignment\/([^/]+)\/collect$/, function (m) {
            return ["Collecting the hand-ins of " + m[1], "from the exchange into submitted/"];
        }],
        [/\/api\/assignment\/([^/]+)\/generate_feedback$/, function (m) {
            return ["Writing the feedback pages for " + m[1], "coursekit feedback"];
        }],
        [/\/api\/assignment\/([^/]+)\/release_feedback$/, function (m) {
            return ["Releasing the feedback on " + m[1], "through the exchange"];
        }]
    ];
    var running = [];   // [{url, what, why, started}], oldest first
    var ticker = null;

    function describe(url) {
        var path = url.split("?")[0];
        for (var i = 0; i < ACTIONS.length; i++) {
            var m = path.match(ACTIONS[i][0]);
            if (m) {
                return ACTIONS[i][1](m.map(function (part) {
                    return part === undefined ? part : decodeURIComponent(part);
                }));
            }
        }
        return null;
    }

    function panel() {
        var found = $("#coursekit-progress");
        if (found.length) return found;
        return $("<div/>").attr({id: "coursekit-progress", role: "status", "aria-live": "polite"})
            .css({position: "fixed", top: "8px", left: "50%", transform: "translateX(-50%)",
                  "z-index": 2000, "min-width": "420px", "max-width": "90%",
                  "box-shadow": "0 2px 8px rgba(0,0,0,.3)"})
            .addClass("alert alert-info").hide().appendTo("body");
    }

    function show() {
        var box = panel();
        if (!running.length) {
            box.hide().empty();
            clearInterval(ticker);
            ticker = null;
            return;
        }
        box.empty();
        running.forEach(function (job) {
            var seconds = Math.floor((Date.now() - job.started) / 1000);
            var line = $("<div/>").addClass("coursekit-job");
            line.append($("<span/>").addClass("glyphicon glyphicon-refresh"), " ",
                        $("<b/>").text(job.what + "… "),
                        $("<span/>").addClass("coursekit-elapsed").text(seconds + " s"));
            if (job.why) line.append($("<div/>").addClass("small").text(job.why));
            box.append(line);
        });
        box.show();
    }

    $(document).ajaxSend(function (event, xhr, settings) {
        if ((settings.type || "").toUpperCase() !== "POST") return;
        var said = describe(settings.url);
        if (!said) return;
        running.push({url: settings.url, what: said[0], why: said[1], started: Date.now()});
        show();
        if (!ticker) ticker = setInterval(show, 1000);
    });
    $(document).ajaxComplete(function (event, xhr, settings) {
        for (var i = 0; i < running.length; i++) {
            if (running[i].url === settings.url) {
                running.splice(i, 1);
                break;
            }
        }
        show();
    });

    // ------------------------------------------------------------------ 2. what coursekit found
    function label(kind, text, title) {
        return $("<span/>").addClass("label label-" + kind + " coursekit-status")
            .attr("title", title || "").text(text);
    }

    // What coursekit found, as labels: the flag, a missing or corrupt hand-in (a grader
    // error too), a written answer still to grade by hand.
    function labels(found) {
        var reasons = (found.reasons || []).join("\n");
        var shown = [];
        if (found.flagged) shown.push(label("danger", "flagged for a TA", reasons));
        if (["missing", "corrupt", "error"].indexOf(found.status) >= 0) {
            shown.push(label(found.status === "error" ? "danger" : "default", found.status,
                             reasons));
        }
        if (found.written_to_grade) shown.push(label("info", "needs manual grading"));
        return shown;
    }

    // Lateness, beside the other labels: how late and the policy in its tooltip.
    function lateLabel(found) {
        var late = found.late || {};
        if (late.status === "late") {
            return label("warning", late.penalty ? "late −" + late.penalty.toFixed(2) : "late",
                         late.said);
        }
        if (late.status === "not known") return label("default", "lateness not known", late.said);
        if (late.status === "error") return label("danger", "lateness: see why", late.said);
        return null;
    }

    // ------------------------------------------------------------------ 3. download grades
    // In every page's menu: the file `coursekit export --format canvas|moodle` writes.
    $(function () {
        var menu = $(".nav-stacked").first();
        [["canvas", "Canvas"], ["moodle", "Moodle"]].forEach(function (lms) {
            var link = $("<a/>").attr("id", "coursekit-download-" + lms[0])
                .attr("href", base_url + "/formgrader/coursekit-grades/" + lms[0] + ".csv")
                .attr("download", lms[0] + ".csv")
                .attr("title", "each student's final score per lab (after any late " +
                               "penalty), by LMS login from the roster")
                .text("Download grades (" + lms[1] + " CSV)");
            menu.append($("<li/>").attr("role", "presentation").append(link));
        });
    });

    // Manage Assignments: the due date is course/course.toml's (the server fills it in), and
    // it is changed there, not here: nbgrader's pencil would write a due date coursekit never
    // reads, so the pencil becomes a note that says where.
    if (typeof AssignmentUI !== "undefined") {
        var renderAssignment = AssignmentUI.prototype.render;
        AssignmentUI.prototype.render = function () {
            renderAssignment.apply(this, arguments);
            var due = this.model.get("coursekit_due");
            if (!due) return;
            this.$duedate.attr("title", due.late);
            this.$edit.empty().append($("<span/>")
                .addClass("glyphicon glyphicon-info-sign coursekit-due-note")
                .attr("title", "Due dates and late policies are set in course/course.toml " +
                      "(due = ..., late = ...); extensions in course/extensions.toml."));
        };
    }

    // Manage Submissions: the Status column.
    if (typeof SubmissionUI !== "undefined") {
        var render = SubmissionUI.prototype.render;
        SubmissionUI.prototype.render = function () {
            render.apply(this, arguments);
            var found = this.model.get("coursekit");
            if (!this.model.get("autograded") || !found) return;
            var shown = labels(found);
            if (!shown.length) shown.push(label("success", "graded"));
            if (lateLabel(found)) shown.push(lateLabel(found));
            // sorted as nbgrader sorts: what needs a TA first
            var order = found.flagged ? 0.5 : (found.written_to_grade ? 1 : 2);
            this.$status.empty().attr("data-order", order);
            for (var i = 0; i < shown.length; i++) {
                this.$status.append(shown[i], " ");
            }
        };
    }

    // Manage Students → a student: beside each lab's name.
    if (typeof StudentSubmissionUI !== "undefined") {
        var renderStudent = StudentSubmissionUI.prototype.render;
        StudentSubmissionUI.prototype.render = function () {
            renderStudent.apply(this, arguments);
            var found = this.model.get("coursekit");
            if (!this.model.get("autograded") || !found) return;
            var shown = labels(found);
            if (lateLabel(found)) shown.push(lateLabel(found));
            for (var i = 0; i < shown.length; i++) {
                this.$name.append(" ", shown[i]);
            }
        };
    }

    // ------------------------------------------------------------------ 4. failures say why
    if (typeof createLogModal !== "undefined") {
        var createLog = createLogModal;
        window.createLogModal = function (id, title, message, log, error) {
            var modal = createLog.apply(this, arguments);
            $("#" + id).find(".panel-danger .panel-heading").text("Why");
            return modal;
        };
    }
}());
