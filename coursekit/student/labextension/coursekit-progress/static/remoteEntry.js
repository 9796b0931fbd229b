// coursekit-progress: a JupyterLab extension, written by hand rather than built (it imports
// nothing of JupyterLab's, so a module federation container of a few lines is all JupyterLab
// needs to load it). Served from coursekit/student/labextension/ (course/jupyter_server_config.py
// and course/student/jupyter_server_config.py add the folder).
//
// nbgrader's Validate (toolbar and Assignment List) and the Assignment List's Fetch, Submit
// and Fetch Feedback are one request each; Validate runs the notebook (about 20 s), and all
// the button says meanwhile is "Validating...", in a row that may be scrolled away. While
// such a request runs, a panel at the top of the window says what runs and counts seconds.
(function () {
    "use strict";

    var ACTIONS = [
        [/\/assignments\/validate$/, "Validating", "coursekit validate runs the notebook as " +
            "grading does (its visible checks): about 20 s"],
        [/\/assignments\/submit$/, "Submitting", "handing in what is saved in the lab's folder"],
        [/\/assignments\/fetch_feedback$/, "Fetching the feedback", ""],
        [/\/assignments\/fetch$/, "Fetching", "copying the lab into this folder"]
    ];
    var running = [];
    var ticker = null;

    function subject(url, body) {
        var query = url.split("?")[1] || "";
        var found = /(?:^|&)(path|assignment_id)=([^&]*)/.exec(query);
        if (found) return decodeURIComponent(found[2]);
        try {
            var data = JSON.parse(body || "{}");
            return data.path || data.assignment_id || "";
        } catch (error) {
            return "";
        }
    }

    function show() {
        var box = document.getElementById("coursekit-progress");
        if (!box) {
            box = document.createElement("div");
            box.id = "coursekit-progress";
            box.setAttribute("role", "status");
            box.style.cssText = "position: fixed; top: 6px; left: 50%; transform: " +
                "translateX(-50%); z-index: 10000; padding: 8px 16px; border-radius: 4px; " +
                "background: var(--jp-info-color3, #e1f5fe); color: var(--jp-ui-font-color0, " +
                "#000); border: 1px solid var(--jp-info-color1, #0288d1); font-size: 13px; " +
                "box-shadow: 0 2px 8px rgba(0,0,0,.3); max-width: 80%;";
            document.body.appendChild(box);
        }
        box.textContent = "";
        running.forEach(function (job) {
            var line = document.createElement("div");
            var what = document.createElement("b");
            what.textContent = job.what + (job.subject ? " " + job.subject : "") + "… ";
            var seconds = document.createElement("span");
            seconds.className = "coursekit-elapsed";
            seconds.textContent = Math.floor((Date.now() - job.started) / 1000) + " s";
            line.appendChild(what);
            line.appendChild(seconds);
            if (job.why) {
                var why = document.createElement("div");
                why.textContent = job.why;
                line.appendChild(why);
            }
            box.appendChild(line);
        });
        box.style.display = running.length ? "block" : "none";
        if (!running.length && ticker) {
            clearInterval(ticker);
            ticker = null;
        }
    }

    function describe(input, init) {
        var url = typeof input === "string" ? input : (input && input.url) || "";
        var method = ((init && init.method) || (input && input.method) || "GET").toUpperCase();
        if (method !== "POST") return null;
        var path = url.split("?")[0];
        for (var i = 0; i < ACTIONS.length; i++) {
            if (ACTIONS[i][0].test(path)) {
                var job = {what: ACTIONS[i][1], why: ACTIONS[i][2],
                           subject: subject(url, init && init.body), started: Date.now()};
                if (!job.subject && typeof input !== "string" && input.clone) {
                    // JupyterLab sends a Request, whose body (the notebook's path) is read
                    // from a copy
                    input.clone().text().then(function (body) {
                        job.subject = subject("", body);
                        if (running.indexOf(job) >= 0) show();
                    }, function () {});
                }
                return job;
            }
        }
        return null;
    }

    function install() {
        if (window.fetch.coursekitProgress) return;
        var original = window.fetch;
        var wrapped = function (input, init) {
            var job = describe(input, init);
            if (!job) return original.apply(window, arguments);
            running.push(job);
            show();
            if (!ticker) ticker = setInterval(show, 1000);
            var done = function () {
                running.splice(running.indexOf(job), 1);
                show();
            };
            var reply = original.apply(window, arguments);
            reply.then(done, done);
            return reply;
        };
        wrapped.coursekitProgress = true;
        window.fetch = wrapped;
    }

    var plugin = {
        id: "coursekit-progress:plugin",
        description: "Says what runs, and for how long, while nbgrader's buttons wait.",
        autoStart: true,
        activate: function () { install(); }
    };

    window._JUPYTERLAB = window._JUPYTERLAB || {};
    window._JUPYTERLAB["coursekit-progress"] = {
        init: function () { return Promise.resolve(); },
        get: function (module) {
            if (module !== "./extension") {
                return Promise.reject(new Error("coursekit-progress has no module " + module));
            }
            return Promise.resolve(function () { return {__esModule: true, default: [plugin]}; });
        }
    };
}());
