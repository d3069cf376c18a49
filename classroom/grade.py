"""`make grade SUBMISSIONS=dir`: grade learners' notebooks with the collection's
own checks, each submission in a sandbox of its own (docs/teaching.md): the lesson
notebook run with the learner's answer cells in its slots (classroom/grade_run.py)."""

import argparse
import csv
import math
import os
import sys
from collections import Counter, namedtuple
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

from classroom import grade_sandbox
from classroom.grade_files import Unreadable, csv_cell, decode, md, notebooks_in, read_notebook
from classroom.grade_source import flags
from helpers.exercises import declared
from tools.notebooks import SLOT, notebook_paths

ROOT = Path(__file__).resolve().parents[1]
CELL_LIMIT = 60.0          # seconds for one cell (then it is interrupted)
NOTEBOOK_LIMIT = 900.0     # seconds for a whole sandbox (then the watchdog kills it)
KERNELS = 2                # sandboxes at a time
STATUSES = ("right", "wrong", "blank", "flagged", "error", "not graded")
COLUMNS = ["learner", "notebook", "exercise", "status", "changed_checking_code", "detail"]


class NoSandbox(RuntimeError):
    """No sandbox can be made on this machine, and no unisolated run was asked for."""


# how grading runs; one row of grades.csv (`changed` is its column changed_checking_code: why it was flagged)
Settings = namedtuple("Settings", "cell_limit limits kernels unisolated",
                      defaults=[CELL_LIMIT, grade_sandbox.RunLimits(wall=NOTEBOOK_LIMIT), KERNELS, False])
Row = namedtuple("Row", "learner notebook exercise status changed detail")
# a submission: the learner as shown (bytes not UTF-8 replaced), the stored notebook, the file graded, the
# learner's folder and the other copies; what grading it gave: rows, the limits weaker than a cgroup's that held
# (None for a submission not run)
Job = namedtuple("Job", "learner stored submitted folder copies", defaults=[()])
Ran = namedtuple("Ran", "rows weaker", defaults=[None])


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])       # a list: every notebook read is nbformat-valid


def shown(name):
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _rank(path, folder):
    """A copy's rank: the one in <learner>/my-notebooks/ first, then not a checkpoint, then the newest."""
    inside = path.relative_to(folder).parts
    try:
        when = path.lstat().st_mtime
    except OSError:
        when = 0.0
    return (inside[:1] != ("my-notebooks",) or len(inside) != 2, ".ipynb_checkpoints" in inside, -when, str(path))


def submissions(folder):
    """(jobs, learners with no notebook of the collection, what was skipped)."""
    from helpers import lessons

    every = {p.name: p for p in notebook_paths()}
    stored = {name: p for name, p in every.items() if name[:2] in set(lessons.numbers())}
    jobs, empty, skipped = [], [], []
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            skipped.append(f"{shown(entry.name)} (not a folder)")
            continue
        learner, here, by_name = shown(entry.name), Path(entry.path), {}
        found, unsearched = notebooks_in(here)
        skipped += [shown(u[len(str(folder)) + 1:]) for u in unsearched]
        for path in found:
            if path.name in stored:
                by_name.setdefault(path.name, []).append(path)
            elif path.name not in every and ".ipynb_checkpoints" not in path.relative_to(here).parts:
                skipped.append(shown(str(path.relative_to(folder))))
        for name, paths in sorted(by_name.items()):
            paths.sort(key=lambda p: _rank(p, here))
            jobs.append(Job(learner, stored[name], paths[0], here, tuple(p.relative_to(here) for p in paths[1:])))
        empty += [] if by_name else [learner]
    return jobs, empty, skipped


def answers(stored, submitted):
    """The submission's source for each stored slot (None where it has none), and how they were matched."""
    slots, by_id = [c for c in stored.cells if SLOT in tags(c)], {}
    for cell in submitted.cells:
        if cell.get("id") and cell.get("cell_type") == "code":
            by_id.setdefault(cell["id"], cell)            # duplicate ids: the first
    matched = [by_id[s["id"]].source if s.get("id") in by_id else None for s in slots]
    if None not in matched:
        return matched, ""
    tagged = [c.source for c in submitted.cells if SLOT in tags(c) and c.get("cell_type") == "code"]
    if len(tagged) == len(slots):
        return tagged, "answer slots matched by order (their cell ids differ from the stored ones)"
    return matched, "some answer slots are missing (counted blank)"


def placed(stored, sources):
    """The learner's sources into the stored notebook's slots; ([slot ids], [each slot's check cell id]): a
    check is the cell after its slot (tests/structure.py)."""
    at = [i for i, cell in enumerate(stored.cells) if SLOT in tags(cell)]
    for i, source in zip(at, sources, strict=True):
        stored.cells[i].source = stored.cells[i].source if source is None else source
    return [stored.cells[i]["id"] for i in at], [stored.cells[i + 1]["id"] for i in at]


def verdict(line, raised):
    """(status, detail) from a check's line; its "blank" of an answer cell that raised is wrong."""
    status, message = line.get("status", ""), line.get("message", "")
    if status == "blank" and raised:
        return "wrong", f"the answer cell raised {raised}"
    return (status, message) if status in STATUSES[:3] + ("error",) else ("error", f"the check said {status!r}")


def judged(job, stored_sources, sources, result, stopped=""):
    name, rows = job.stored.name, []
    for number, (source, stored_source) in enumerate(zip(sources, stored_sources, strict=True), start=1):
        if source is None or source.strip() == stored_source.strip():
            rows.append(Row(job.learner, name, number, "blank", "", "not answered"))
            continue
        slot, check = result["slots"][number - 1], result["checks"][number - 1]
        lines = [v for v in result["verdicts"].get(check, []) if isinstance(v, dict)
                 and v.get("exercise") == f"q{number}" and v.get("notebook") == name[:2]]
        if slot in result["over_limit"]:
            status, detail = "wrong", "the answer cell ran past its time limit and was stopped"
        elif lines and check not in result["raised"]:     # a check cell that raised wrote no verdict of its own
            status, detail = verdict(lines[-1], result["raised"].get(slot, ""))   # the check's own, written last
        elif stopped:
            status, detail = "not graded", stopped
        else:
            why = result["raised"].get(check)
            status, detail = "not graded", "the check gave no verdict" + (f" (its cell raised {why})" if why else "")
        flagged = flags(source) if source is not None else []
        if flagged:
            status, detail = "flagged", f"judged {status}, but flagged: {detail}"
        rows.append(Row(job.learner, name, number, status, "; ".join(flagged), detail))
    return rows


def _result(outcome):
    """(the runner's result, why it stopped, the executed notebook), bounded; a part of the wrong kind raises
    when it is used: that learner's notebook is not graded."""
    try:
        found = decode(outcome.stdout, "the sandbox's result")
        if not isinstance(found, dict):
            raise Unreadable("the sandbox's result is not a JSON object")
    except Unreadable as error:
        found = {"stopped": f"no result came back ({error}; {(outcome.stderr.strip().splitlines() or [''])[-1]})"}
    kept = {k: found.get(k) or kind() for k, kind in (("verdicts", dict), ("raised", dict), ("over_limit", list))}
    return kept, str(found.get("stopped", ""))[:500], found.get("notebook")


def run_one(job, out, settings):
    """Grade one submission; anything it raises is this learner's alone ("not graded", with why)."""
    try:
        return _run_checked(job, out, settings)
    except Unreadable as error:
        why = f"unreadable: {error}"
    except Exception as error:  # noqa: BLE001 (one submission must not stop the class's grading)
        why = f"grading this notebook failed ({type(error).__name__}: {str(error)[:200]})"
    count = len(declared(job.stored.name[:2]))
    return Ran([Row(job.learner, job.stored.name, n, "not graded", "", why) for n in range(1, count + 1)])


def _run_checked(job, out, settings):
    stored = nbformat.read(job.stored, as_version=4)
    stored_sources = [c.source for c in stored.cells if SLOT in tags(c)]  # one per exercise: make solutions checks
    sources, note = answers(stored, read_notebook(job.submitted, job.folder))
    if all(s is None or s.strip() == t.strip() for s, t in zip(sources, stored_sources, strict=True)):
        return Ran(judged(job, stored_sources, sources, None))        # every answer blank: not run
    slots, checks = placed(stored, sources)
    command = [grade_sandbox.python(), "-m", "classroom.grade_run", str(settings.cell_limit)]
    outcome = grade_sandbox.run(command, nbformat.writes(stored).encode(), settings.limits,
                                unisolated=settings.unisolated)
    result, stopped, executed = _result(outcome)
    left = [f"processes outlived the sandbox and were killed: {outcome.leftovers}"] if outcome.leftovers else []
    stopped = "; ".join(filter(None, [outcome.stopped, stopped, *left]))
    rows = judged(job, stored_sources, sources, {**result, "slots": slots, "checks": checks}, stopped)
    copy = out / "notebooks" / job.folder.name / job.stored.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    try:
        nbformat.write(nbformat.from_dict(executed), copy)
    except Exception as error:  # noqa: BLE001 (a notebook nbformat refuses: the grades still count)
        copy.write_text(f"the executed notebook could not be written ({type(error).__name__})\n")
    rows = [r._replace(detail="; ".join(filter(None, [r.detail, note]))) for r in rows]
    return Ran(rows, outcome.weaker)


def summary(ran, jobs, empty, skipped, unisolated=False):
    """The teacher's summary, in Markdown; learner-made text as one-line code spans."""
    lines = ["| learner | notebook | " + " | ".join(STATUSES) + " |", "|---|---|" + "---:|" * len(STATUSES)]
    blank, rows = {learner: ["no notebook of the collection"] for learner in empty}, []
    for one, job in zip(ran, jobs, strict=True):
        mine, rows = [r.status for r in one.rows], rows + one.rows
        if set(mine) == {"blank"}:
            blank.setdefault(job.learner, []).append(job.stored.name)
            continue
        lines.append(f"| {md(job.learner, table=True)} | {job.stored.name} | " + " | ".join(
            str(mine.count(s)) for s in STATUSES) + " |")
    if blank:
        lines += ["", "Blank (every answer as handed out; not run, not in the table above):"]
        lines += [f"- {md(learner)}: {', '.join(names)}" for learner, names in blank.items()]
    for status, what in (("flagged", "changed"), ("error", "detail"), ("not graded", "detail")):
        found = [r for r in rows if r.status == status]
        said = " (never counted right; read the answer cell)" if status == "flagged" else ""
        lines += ["", f"{status.capitalize()}{said}: {len(found) or 'none'}"]
        lines += [f"- {md(r.learner)}, {r.notebook}, exercise {r.exercise}: {md(getattr(r, what))}" for r in found]
    if any(j.copies for j in jobs):
        lines += ["", "Copies not graded (the one in my-notebooks/ is graded, else the newest):"]
        lines += [f"- {md(j.learner)}, {j.stored.name}: graded {md(j.submitted.relative_to(j.folder))}; not "
                  f"{md(', '.join(map(str, j.copies)), 1000)}" for j in jobs if j.copies]
    if skipped:
        names = ", ".join(md(name, 200) for name in skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        lines += ["", f"Not graded, not a notebook of the collection or not searched ({len(skipped)}): {names}"]
    if unisolated:
        return "\n".join(lines + ["", "Limits: none. Graded WITHOUT a sandbox (--unisolated): with your rights."])
    runs = [one.weaker for one in ran if one.weaker is not None]
    for weaker, count in Counter(w for w in runs if w).most_common():
        lines += ["", f"Limits weaker than a cgroup's, for {count} of the {len(runs)} submissions run:",
                  *[f"- {w}" for w in weaker]]
    return "\n".join(lines)


def grade(folder, out, settings=None):
    """Grade every submission in `folder`; write OUT/grades.csv and OUT/summary.md; returns (rows, summary)."""
    folder, settings = Path(folder), settings or Settings()
    if not folder.is_dir():
        raise ValueError(f"SUBMISSIONS must be a folder with one folder per learner; got {folder}")
    problem = None if settings.unisolated else grade_sandbox.why_no_sandbox()
    if problem:
        raise NoSandbox(f"{problem}. To grade without a sandbox anyway, only submissions you trust: "
                        "make grade UNISOLATED=1 (python -m classroom.grade --unisolated ...)")
    jobs, empty, skipped = submissions(folder)
    with ThreadPoolExecutor(max_workers=settings.kernels) as pool:       # a run mostly waits on its sandbox
        ran = list(pool.map(lambda job: run_one(job, out, settings), jobs))
    rows = [r for one in ran for r in one.rows] + [Row(e, "", 0, "blank", "", "no notebook of the collection")
                                                  for e in empty]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as file:
        csv.writer(file).writerows([COLUMNS] + [[csv_cell(shown(v)) if isinstance(v, str) else v for v in r]
                                                for r in rows])
    text = shown(summary(ran, jobs, empty, skipped, settings.unisolated))      # a path's bytes that are not UTF-8
    (out / "summary.md").write_text(text + "\n", encoding="utf-8")
    return rows, text


def _positive(text):
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of more than 0; got {text}")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m classroom.grade", description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "grades")
    for flag, default, help in (
            ("--cell-limit", CELL_LIMIT, "seconds one cell may run before it is interrupted"),
            ("--time-limit", NOTEBOOK_LIMIT, "seconds a submission's sandbox may run, then killed"),
            ("--memory", 3.0, "GB of memory per sandbox"), ("--cpus", 1.0, "cores per sandbox")):
        parser.add_argument(flag, type=_positive, default=default, help=f"{help} (default {default:g})")
    parser.add_argument("--unisolated", action="store_true",
                        help="run without the sandbox (no isolation at all: only for submissions you trust)")
    args = parser.parse_args(argv)
    limits = grade_sandbox.RunLimits(wall=args.time_limit, memory=int(args.memory * 2 ** 30), cpus=args.cpus)
    try:
        rows, text = grade(args.submissions, args.out, Settings(args.cell_limit, limits, KERNELS, args.unisolated))
    except (NoSandbox, ValueError) as error:
        print(f"make grade: {error}", file=sys.stderr)
        return 2
    print(text)
    look = any(r.status in ("flagged", "error", "not graded") for r in rows)
    print(f"\n{len(rows)} exercises graded: {args.out / 'grades.csv'}" +
          ("; some need a look (flagged, error or not graded): exit 1" if look else ""))
    return 1 if look else 0


if __name__ == "__main__":
    sys.exit(main())
