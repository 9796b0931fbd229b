"""The ``coursekit`` instructor commands: argument parsing and printing only.

Each command is a pair ``<name>_arguments(parser)`` / ``<name>(args) -> int`` (the contract
of :mod:`coursekit.cli`); the work is done by one module of this package per step. The
student's commands (``validate``, ``fetch``) are :mod:`coursekit.student.commands`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from coursekit import course as manifest
from coursekit.student.commands import course_of, fail, root_argument


def _db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, metavar="URL",
                        help=f"gradebook SQLAlchemy URL (default: ${manifest.DB_ENV} where set, "
                             f"else sqlite:///course/gradebook.db; "
                             f"postgresql+psycopg://USER@HOST/DB for a shared one)")


# --------------------------------------------------------------------------- release

def release_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labs", nargs="*", metavar="LAB", help="lab ids (default: every lab "
                                                               "in course/course.toml)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if notebooks/ differs from what "
                             "solutions/ generates, listing the differences (for CI)")
    root_argument(parser)


def release(args) -> int:
    from autograder.publish.release import ReleaseError, check_release, write_release
    try:
        course = course_of(args)
        labs = course.select(args.labs)
    except manifest.ManifestError as error:
        return fail(str(error))
    if not labs:
        print("no labs in course/course.toml yet: nothing to release")
        return 0
    failed = False
    for lab in labs:
        try:
            if args.check:
                differences = check_release(course, lab)
                if differences:
                    failed = True
                    print(f"✗ {lab.id}: notebooks/ is out of date with solutions/")
                    for difference in differences:
                        print(f"    {difference}")
                else:
                    print(f"✓ {lab.id}: notebooks/ matches solutions/")
            else:
                changed = write_release(course, lab)
                what = ", ".join(str(p.relative_to(course.root)) for p in changed) or "unchanged"
                print(f"✓ {lab.id}: {what}")
        except ReleaseError as error:
            failed = True
            print(f"✗ {error}")
    if failed and args.check:
        print("run `coursekit release` and commit notebooks/", file=sys.stderr)
    return 1 if failed else 0


# --------------------------------------------------------------------------- validate

# --------------------------------------------------------------------------- autograde

AUTOGRADE_EXIT_CODES = """\
exit codes:
  0  every submission has a stored outcome; missing, corrupt and flagged hand-ins are
     outcomes of the students' own, not failures of the run
  1  at least one submission ended in a grader error (status "error"): its row is stored
     with the reason, every other submission was graded; fix the cause, then regrade it
     with --student ID --lab LAB
  2  nothing was graded: bad arguments or a broken course (course/course.toml)
  3  the Dask cluster (--cluster) could not be reached or went away: what was graded
     before is stored; the same command again grades only what is not graded yet
A failure of the run itself (a gradebook that cannot be opened, say) stops with its
traceback and a non-zero code; what was stored before it stays stored.
"""


def autograde_arguments(parser: argparse.ArgumentParser) -> None:
    # The exit codes are part of the command's contract (CI and scripts read them).
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = AUTOGRADE_EXIT_CODES
    parser.add_argument("submissions", nargs="?", type=Path, default=None,
                        help="folder with one folder or .zip per student "
                             "(default: course/submitted/)")
    parser.add_argument("--lab", action="append", dest="labs", metavar="LAB",
                        help="grade only this lab (repeatable)")
    parser.add_argument("--student", action="append", dest="students", metavar="ID",
                        help="grade only this student (repeatable)")
    parser.add_argument("--jobs", "-j", type=int, default=1,
                        help="notebooks graded at the same time (default 1)")
    parser.add_argument("--cluster", default=None, metavar="ADDRESS",
                        help="grade on the workers of this Dask scheduler (tcp://HOST:8786, "
                             "tls://... across machines) instead of --jobs local kernels")
    parser.add_argument("--regrade", action="store_true",
                        help="grade every submission again; by default a submission whose "
                             "hand-in and lab are unchanged since it was graded (by content "
                             "hash) keeps its stored outcome, so a stopped run goes on")
    _db_argument(parser)
    parser.add_argument("--cell-timeout", type=float, default=None,
                        help="override the manifest's per-cell timeout (seconds)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="override the manifest's per-notebook time limit (seconds)")
    parser.add_argument("--memory-mb", type=int, default=None,
                        help="override the manifest's kernel memory limit")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run kernels without bubblewrap (reported loudly everywhere)")
    parser.add_argument("--all-cells", action="store_true",
                        help="also run the instructor's exploration cells (slower; grading "
                             "only needs setup, answer and checks cells)")
    parser.add_argument("--fresh-kernels", action="store_true",
                        help="start every kernel fresh instead of forking it from a "
                             "pre-warmed one per job slot (slower; same sandbox and limits)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    root_argument(parser)


def autograde(args) -> int:
    from autograder.pipeline.autograde import autograde as run_autograde
    from autograder.pipeline.grader import Overrides
    from autograder.pipeline.gradebook import OutcomeStatus
    from autograder.pipeline.summary import grade_table
    try:
        course = course_of(args)
        course.select(args.labs)
    except manifest.ManifestError as error:
        return fail(str(error))
    from autograder.pipeline.cluster import ClusterError
    try:
        run = run_autograde(course, labs=args.labs, students=args.students, db_url=args.db,
                            submitted_dir=args.submissions, jobs=args.jobs,
                            no_sandbox=args.no_sandbox, progress=not args.no_progress,
                            all_cells=args.all_cells, only_changed=not args.regrade,
                            cluster=args.cluster, fork_kernels=not args.fresh_kernels,
                            overrides=Overrides(args.cell_timeout, args.time_limit,
                                                args.memory_mb))
    except ClusterError as error:
        print(f"coursekit autograde: {error}", file=sys.stderr)
        return 3
    except manifest.ManifestError as error:   # the course cannot be graded here as it is
        return fail(str(error))
    print(grade_table(run.outcomes))
    engine = f"the cluster {args.cluster}" if args.cluster else f"{args.jobs} job(s)"
    print(f"graded {len(run.outcomes)} notebook(s) in {run.seconds:.1f}s with {engine}; "
          f"gradebook: {run.db_url}")
    print(f"kernels: {run.kernels}")
    if run.refused:
        print(f"\n{len(run.refused)} hand-in(s) in the class folder were not graded:",
              file=sys.stderr)
        for why in run.refused.values():
            print(f"  {why}", file=sys.stderr)
    if run.unchanged:
        print(f"{len(run.unchanged)} submission(s) unchanged since they were graded kept their "
              f"stored outcome (--regrade grades them again)")
    if not run.status.sandboxed:
        print("\n" + run.status.warning)
    failed = [o for o in run.outcomes if o.status == OutcomeStatus.ERROR]
    if failed:
        print(f"\n{len(failed)} submission(s) ended in a grader error (status 'error'; "
              f"the reason is stored with each): "
              + ", ".join(f"{o.student}/{o.lab}" for o in failed), file=sys.stderr)
        return 1
    return 0


# --------------------------------------------------------------------------- feedback / export

def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lab", action="append", dest="labs", metavar="LAB",
                        help="only this lab (repeatable)")
    parser.add_argument("--student", action="append", dest="students", metavar="ID",
                        help="only this student (repeatable)")
    _db_argument(parser)
    root_argument(parser)


def feedback_arguments(parser: argparse.ArgumentParser) -> None:
    _filters(parser)


def feedback(args) -> int:
    from autograder.publish.feedback import write_feedback
    try:
        course = course_of(args)
        paths = write_feedback(course, args.db, students=args.students, labs=args.labs)
    except manifest.ManifestError as error:
        return fail(str(error))
    print(f"wrote {len(paths)} feedback page(s) under "
          f"{course.feedback_dir.relative_to(course.root)}/")
    return 0


def export_arguments(parser: argparse.ArgumentParser) -> None:
    _filters(parser)
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: course/exports/)")
    parser.add_argument("--format", action="append", dest="formats", default=[],
                        metavar="LMS", help="also write LMS.csv, the file that LMS imports: "
                                            "canvas or moodle (repeatable; students by the "
                                            "lms_user_id of `nbgrader db student import`)")


def export(args) -> int:
    from autograder.publish.export import export as run_export
    from autograder.publish.lms import FORMATS, RosterError
    unknown = [fmt for fmt in args.formats if fmt not in FORMATS]
    if unknown:
        return fail(f"--format {unknown[0]!r} is not an LMS format coursekit writes; choose "
                    f"{' or '.join(FORMATS)}")
    try:
        course = course_of(args)
        paths = run_export(course, args.db, students=args.students, labs=args.labs,
                           out_dir=args.out, formats=tuple(dict.fromkeys(args.formats)))
    except (manifest.ManifestError, RosterError) as error:
        return fail(str(error))
    lms_files = paths[1:1 + len(set(args.formats))]
    print(f"wrote {paths[0]}" + "".join(f", {path}" for path in lms_files)
          + f" and {len(paths) - 1 - len(lms_files)} results.json file(s)")
    return 0


def extend_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lab", metavar="LAB", help="the lab whose due date moves")
    parser.add_argument("student", metavar="STUDENT", help="the student's id")
    parser.add_argument("--days", type=float, default=0, help="days added to the due date")
    parser.add_argument("--hours", type=float, default=0, help="hours added to the due date")
    parser.add_argument("--reason", default="", help="a note for the TAs (never shown to "
                                                     "students)")
    root_argument(parser)


def extend(args) -> int:
    from autograder.publish.extensions import grant
    try:
        course = course_of(args)
        path = grant(course, args.student, args.lab, days=args.days, hours=args.hours,
                     reason=args.reason)
    except manifest.ManifestError as error:
        return fail(str(error))
    lab = course.lab(args.lab)
    due = (f"; due {lab.due:%Y-%m-%d %H:%M} UTC before it" if lab.due else
           "; the lab has no due date yet (course/course.toml)")
    print(f"{args.student} · {args.lab}: {args.days:g} day(s) {args.hours:g} hour(s) later"
          f"{due}; written to {path}. Feedback and exports made from now on count from it "
          f"(`coursekit feedback`, `coursekit export`); nothing needs regrading.")
    return 0


# --------------------------------------------------------------------------- demo

def demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lab", default=None,
                        help="the lab the demo class hands in (default: lab01_graphs, else "
                             "the manifest's first lab)")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="notebooks at a time")
    _db_argument(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    root_argument(parser)


def demo(args) -> int:
    from autograder.demo.run import run_demo
    return run_demo(course_of(args), lab_id=args.lab, jobs=args.jobs, db_url=args.db,
                    progress=not args.no_progress)


# --------------------------------------------------------------------------- similarity

def similarity_arguments(parser: argparse.ArgumentParser) -> None:
    from autograder.publish.similarity import MIN_TOKENS, REFERENCE_THRESHOLD, THRESHOLD
    parser.add_argument("lab", metavar="LAB", help="the lab whose hand-ins are compared")
    parser.add_argument("submissions", nargs="?", type=Path, default=None,
                        help="folder with one folder or .zip per student "
                             "(default: course/submitted/)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD,
                        help=f"flag a pair when this share of the smaller answer is found in a "
                             f"classmate's (default {THRESHOLD})")
    parser.add_argument("--reference-threshold", type=float, default=REFERENCE_THRESHOLD,
                        help=f"the same against a reference source (default {REFERENCE_THRESHOLD})")
    parser.add_argument("--min-tokens", type=int, default=MIN_TOKENS,
                        help=f"answers with fewer tokens of their own never flag "
                             f"(default {MIN_TOKENS})")
    parser.add_argument("--out", type=Path, default=None,
                        help="the HTML report (default: course/similarity/<lab>.html)")
    _db_argument(parser)
    root_argument(parser)


def similarity(args) -> int:
    from autograder.publish.similarity import similarity as run_similarity
    try:
        course = course_of(args)
        lab = course.lab(args.lab)
    except manifest.ManifestError as error:
        return fail(str(error))
    run = run_similarity(course, lab, submitted_dir=args.submissions, threshold=args.threshold,
                         reference_threshold=args.reference_threshold,
                         min_tokens=args.min_tokens, report=args.out, db_url=args.db)
    for match in run.flagged:
        print(f"flagged  {match.exercise:<22} {match.student} ↔ {match.other}  "
              f"{match.similarity:.0%} ({match.shared} fingerprints in common)")
    print(f"{len(run.flagged)} pair(s) flagged for a TA among {run.students} students in "
          f"{run.seconds:.1f}s (no score changed); report: {run.report}")
    return 0


# --------------------------------------------------------------------------- reveal / bundle

def reveal_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lab", metavar="LAB", help="the lab whose reference code students "
                                                   "may now read")
    parser.add_argument("--on", default=None, metavar="YYYY-MM-DD",
                        help="the day it is revealed (default: today)")
    root_argument(parser)


def reveal(args) -> int:
    from datetime import date

    from autograder.publish.bundle import set_reveal_date
    try:
        course = course_of(args)
        lab = course.lab(args.lab)
        day = date.fromisoformat(args.on) if args.on else date.today()
    except manifest.ManifestError as error:
        return fail(str(error))
    except ValueError:
        return fail(f"--on {args.on!r} is not a date; write it as YYYY-MM-DD")
    set_reveal_date(course, lab, day)
    what = ", ".join(lab.reveals) or "its check program's reference functions"
    print(f"{lab.id}: reveal_after = {day.isoformat()} in course/course.toml; from then the "
          f"student bundle holds {what}. Rebuild it with `coursekit bundle DIR`.")
    return 0


def bundle_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="DIR", help="the folder to write (replaced "
                                                              "if it holds an earlier bundle)")
    parser.add_argument("--lab", action="append", dest="labs", metavar="LAB",
                        help="hand out only this lab (repeatable; default: every lab)")
    parser.add_argument("--as-of", default=None, metavar="YYYY-MM-DD",
                        help="decide what is revealed as on this day (default: today)")
    root_argument(parser)


def bundle(args) -> int:
    from datetime import date

    from autograder.publish.bundle import BundleError, build_bundle
    try:
        course = course_of(args)
        labs = course.select(args.labs)
        today = date.fromisoformat(args.as_of) if args.as_of else date.today()
        built = build_bundle(course, args.out, labs=labs, today=today)
    except (manifest.ManifestError, BundleError) as error:
        return fail(str(error))
    except ValueError as error:
        return fail(f"--as-of {args.as_of!r}: {error}")
    print(built.summary())
    return 0


# --------------------------------------------------------------------------- fetch
