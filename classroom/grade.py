"""`make grade SUBMISSIONS=dir`: grade learners' notebooks with the
collection's own checks, each submission in a sandbox of its own.

    python -m classroom.grade SUBMISSIONS [--out build/grades] [--cell-limit 60]
        [--time-limit 900] [--memory 3] [--cpus 1] [--kernels 2] [--unisolated]

SUBMISSIONS holds one folder per learner, with their notebooks anywhere in
it under the collection's names (the hub's hub-learners/<name>/my-notebooks/).
Of a notebook found more than once, the copy in my-notebooks/ is graded,
else the newest; the summary lists the others. What runs is the collection's
own lesson notebook (notebooks/) with the learner's answer cells in its
answer slots (matched by cell id, else by order); their other cells do not
run. A notebook with no slot answered is blank and is not run. Each runs
from a fresh kernel (classroom/grade_run.py) in its own sandbox
(classroom/grade_sandbox.py), `--kernels` at a time; the checks judge there
and each writes its verdict as one line of JSON, read back with size limits.
Each answer's source is read for what an answer has no need of
(classroom/grade_source.py): such an answer is flagged, never counted right.

Written: OUT/grades.csv (learner, notebook, exercise, status: right, wrong,
blank, flagged, error or not graded; why it was flagged; a detail),
OUT/summary.md (also printed) and each executed notebook under
OUT/notebooks/. Exits 1 when any submission needs a look (flagged, error,
not graded), 2 when grading cannot start."""

import argparse
import csv
import os
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import astuple, dataclass
from pathlib import Path

import nbformat

from classroom import grade_sandbox
from classroom.grade_files import Unreadable, csv_cell, decode, md, notebooks_in, read_notebook
from classroom.grade_source import flags
from helpers.exercises import declared
from tools.notebooks import CHECK, SLOT
from tools.runtime.working_copy import collection

ROOT = Path(__file__).resolve().parents[1]
CELL_LIMIT = 60.0          # seconds for one cell (then it is interrupted)
NOTEBOOK_LIMIT = 900.0     # seconds for a whole sandbox (then the watchdog kills it)
KERNELS = 2                # sandboxes at a time
STATUSES = ("right", "wrong", "blank", "flagged", "error", "not graded")
LOOK = ("flagged", "error", "not graded")
COLUMNS = ["learner", "notebook", "exercise", "status", "changed_checking_code", "detail"]


class NoSandbox(RuntimeError):
    """No sandbox can be made on this machine, and no unisolated run was asked for."""


@dataclass(frozen=True)
class Settings:
    cell_limit: float = CELL_LIMIT
    limits: grade_sandbox.RunLimits = grade_sandbox.RunLimits(wall=NOTEBOOK_LIMIT)
    kernels: int = KERNELS
    unisolated: bool = False


@dataclass(frozen=True)
class Row:
    learner: str
    notebook: str
    exercise: int
    status: str            # one of STATUSES
    changed: str           # why the answer was flagged ("" when it was not): the column changed_checking_code
    detail: str


@dataclass(frozen=True)
class Job:
    learner: str           # as shown (text that is not UTF-8 replaced)
    stored: Path
    submitted: Path
    folder: Path           # the learner's folder
    copies: tuple = ()     # the other copies, not graded


@dataclass
class Ran:
    rows: list
    seconds: float = 0.0
    memory: int | None = None
    enforced: tuple = ()


def tags(cell):
    tagged = cell.get("metadata", {}).get("tags", [])
    return tagged if isinstance(tagged, list) else []


def shown(name):
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _stored():
    from helpers import lessons

    numbers = set(lessons.numbers())
    every = {p.name: p for p in collection()}
    return every, {name: p for name, p in every.items() if name[:2] in numbers}


def _newest_first(path, learner_folder):
    """A copy's rank: the one in <learner>/my-notebooks/ first, then the newest."""
    try:
        when = path.lstat().st_mtime
    except OSError:
        when = 0.0
    return (path.parent != learner_folder / "my-notebooks", ".ipynb_checkpoints" in path.parts, -when, str(path))


def submissions(folder):
    """(jobs, learners with no notebook of the collection, what was skipped, in words)."""
    every, stored = _stored()
    jobs, empty, skipped = [], [], []
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            skipped.append(f"{shown(entry.name)} (not a folder)")
            continue
        learner, here = shown(entry.name), Path(entry.path)
        found, unsearched = notebooks_in(here)
        skipped += [shown(str(Path(u).relative_to(folder) if u.startswith(str(folder)) else u)) for u in unsearched]
        by_name = {}
        for path in found:
            if path.name in stored:
                by_name.setdefault(path.name, []).append(path)
            elif path.name not in every and ".ipynb_checkpoints" not in path.parts:
                skipped.append(shown(str(path.relative_to(folder))))
        for name, paths in sorted(by_name.items()):
            paths.sort(key=lambda p: _newest_first(p, here))
            jobs.append(Job(learner, stored[name], paths[0], here, tuple(p.relative_to(here) for p in paths[1:])))
        if not by_name:
            empty.append(learner)
    return jobs, empty, skipped


def answers(stored, submitted):
    """The submission's source for each of the stored notebook's slots (None
    where it has none), and a note on how they were matched."""
    slots = [c for c in stored.cells if SLOT in tags(c)]
    by_id = {}
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
    """The stored notebook with each answered slot's source the learner's;
    ([slot ids], [the id of each slot's check cell, or None])."""
    slot_ids, check_ids, number = [], [], 0
    for cell in stored.cells:
        if SLOT in tags(cell):
            slot_ids.append(cell["id"])
            check_ids.append(None)
            if sources[number] is not None:
                cell.source = sources[number]
            number += 1
        elif CHECK in tags(cell) and check_ids and check_ids[-1] is None:
            check_ids[-1] = cell["id"]
    return slot_ids, check_ids


def verdict(line, name, number, raised):
    """(status, detail) from a check's line of JSON; the check's "blank" of
    an answer cell that raised is wrong."""
    status, message = line.get("status", ""), line.get("message", "")
    if status == "blank" and raised:
        return "wrong", f"the answer cell raised {raised}"
    if status in ("right", "wrong", "error", "blank"):
        return status, message
    return "error", f"the check said {status!r}: {message}"


def judged(job, stored_sources, sources, result, stopped):
    """One Row per exercise, from the runner's result (None when none came back)."""
    name, count = job.stored.name, len(stored_sources)
    found = []
    for number in range(1, count + 1):
        source = sources[number - 1]
        flagged = flags(source) if source is not None else []
        slot, check = result["slots"][number - 1], result["checks"][number - 1]
        lines = [v for v in result["verdicts"].get(check, []) if isinstance(v, dict)
                 and v.get("exercise") == f"q{number}" and v.get("notebook") == name[:2]][:1]
        raised = result["raised"].get(slot, "")
        if source is None or source.strip() == stored_sources[number - 1].strip():
            status, detail = "blank", "not answered"
        elif slot in result["over_limit"]:
            status, detail = "wrong", "the answer cell ran past its time limit and was stopped"
        elif lines:
            status, detail = verdict(lines[0], name, number, raised)
        elif stopped:
            status, detail = "not graded", stopped
        else:
            why = result["raised"].get(check)
            status, detail = "not graded", "the check gave no verdict" + (f" (its cell raised {why})" if why else "")
        reason = "; ".join(flagged)
        if flagged and status != "blank":
            status, detail = "flagged", f"judged {status}, but flagged: {detail}"
        found.append(Row(job.learner, name, number, status, reason, detail))
    return found


def _result(outcome):
    """The runner's result as the grader uses it, read as untrusted; raises Unreadable."""
    result = decode(outcome.stdout, "the sandbox's result", cap=grade_sandbox.OUTPUT_CAP)
    if not isinstance(result, dict):
        raise Unreadable("the sandbox's result is not a JSON object")
    verdicts = result.get("verdicts") if isinstance(result.get("verdicts"), dict) else {}
    raised = result.get("raised") if isinstance(result.get("raised"), dict) else {}
    over = result.get("over_limit") if isinstance(result.get("over_limit"), list) else []
    return ({"verdicts": {k: v for k, v in verdicts.items() if isinstance(v, list)},
             "raised": {k: str(v)[:400] for k, v in raised.items()}, "over_limit": [str(i) for i in over]},
            str(result.get("stopped", ""))[:500], result.get("notebook"))


def run_one(job, out, settings):
    """Grade one submission; anything it raises is this learner's alone."""
    count = len(declared(job.stored.name[:2]))
    try:
        return _run_checked(job, out, settings)
    except Unreadable as error:
        why = f"unreadable: {error}"
    except Exception as error:  # noqa: BLE001 (one submission must not stop the class's grading)
        why = f"grading this notebook failed ({type(error).__name__}: {str(error)[:200]})"
    return Ran([Row(job.learner, job.stored.name, n, "not graded", "", why) for n in range(1, count + 1)])


def _run_checked(job, out, settings):
    stored = nbformat.read(job.stored, as_version=4)
    stored_sources = [c.source for c in stored.cells if SLOT in tags(c)]
    if len(stored_sources) != len(declared(job.stored.name[:2])):
        raise ValueError(f"{job.stored.name} has {len(stored_sources)} answer slots for "
                         f"{len(declared(job.stored.name[:2]))} exercises: fix the notebook's tags")
    sources, note = answers(stored, read_notebook(job.submitted, job.folder))
    blank = {"slots": [None] * len(sources), "checks": [None] * len(sources), "verdicts": {}, "raised": {},
             "over_limit": []}
    if all(s is None or s.strip() == t.strip() for s, t in zip(sources, stored_sources, strict=True)):
        return Ran(judged(job, stored_sources, [None] * len(sources), blank, ""))
    slots, checks = placed(stored, sources)
    command = [grade_sandbox.python(), "-m", "classroom.grade_run", "--cell-limit", str(settings.cell_limit)]
    start = time.monotonic()
    outcome = grade_sandbox.run(command, nbformat.writes(stored).encode(), settings.limits,
                                unisolated=settings.unisolated)
    seconds = time.monotonic() - start
    try:
        result, stopped, executed = _result(outcome)
    except Unreadable as error:
        end = outcome.stderr.strip().splitlines()[-1:] or [""]
        result, stopped, executed = dict(blank), f"no result came back from the sandbox ({error}; {end[0][:300]})", None
    stopped = "; ".join(filter(None, [outcome.stopped, stopped] + (
        [f"processes outlived the sandbox and were killed: {outcome.leftovers}"] if outcome.leftovers else [])))
    result |= {"slots": slots, "checks": checks}
    rows = judged(job, stored_sources, sources, result, stopped)
    rows = [Row(*astuple(r)[:5], "; ".join(filter(None, [r.detail, note]))) for r in rows]
    copy = out / "notebooks" / job.folder.name / job.stored.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    try:
        nbformat.write(nbformat.from_dict(executed), copy)
    except Exception as error:  # noqa: BLE001 (a notebook nbformat refuses: the grades still count)
        copy.write_text(f"the executed notebook could not be written ({type(error).__name__})\n")
    return Ran(rows, seconds, outcome.peak_memory, outcome.enforced)


def summary(ran, jobs, empty, skipped, unisolated=False):
    """The teacher's summary, in Markdown: every learner-made text escaped onto one line."""
    rows = [r for one in ran for r in one.rows]
    lines = ["| learner | notebook | " + " | ".join(STATUSES) + " | time (s) | memory (MB) |",
             "|---|---|" + "---:|" * (len(STATUSES) + 2)]
    blank = {}
    for one, job in zip(ran, jobs, strict=True):
        mine = [r.status for r in one.rows]
        if set(mine) == {"blank"}:
            blank.setdefault(job.learner, []).append(job.stored.name)
            continue
        memory = f"{one.memory / 2 ** 20:.0f}" if one.memory else "-"
        lines.append(f"| {md(job.learner, table=True)} | {job.stored.name} | " + " | ".join(
            str(mine.count(s)) for s in STATUSES) + f" | {one.seconds:.0f} | {memory} |")
    for learner in empty:
        blank.setdefault(learner, []).append("no notebook of the collection")
    if blank:
        lines += ["", "Blank (every answer as handed out; not run, not in the table above):"]
        lines += [f"- {md(learner)}: {', '.join(names)}" for learner, names in blank.items()]
    flagged = [r for r in rows if r.status == "flagged"]
    lines += ["", f"Flagged (never counted right; read the answer cell): {len(flagged) or 'none'}"]
    lines += [f"- {md(r.learner)}, {r.notebook}, exercise {r.exercise}: {md(r.changed)}" for r in flagged]
    for status in ("error", "not graded"):
        found = [r for r in rows if r.status == status]
        lines += ["", f"{status.capitalize()}: {len(found) or 'none'}"]
        lines += [f"- {md(r.learner)}, {r.notebook}, exercise {r.exercise}: {md(r.detail)}" for r in found]
    copies = [j for j in jobs if j.copies]
    if copies:
        lines += ["", "Copies not graded (the one in my-notebooks/ is graded, else the newest):"]
        lines += [f"- {md(j.learner)}, {j.stored.name}: graded {md(j.submitted.relative_to(j.folder))}; not "
                  f"{md(', '.join(map(str, j.copies)), 1000)}" for j in copies]
    if skipped:
        names = ", ".join(md(name, 200) for name in skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        lines += ["", f"Not graded, not a notebook of the collection or not searched ({len(skipped)}): {names}"]
    return "\n".join(lines + limits_text(ran, unisolated))


def limits_text(ran, unisolated):
    if unisolated:
        return ["", "Limits: none. Graded WITHOUT a sandbox (--unisolated): the submissions ran with your rights."]
    lines, runs = [], [one for one in ran if one.enforced]
    for enforced, count in Counter(one.enforced for one in runs).most_common():
        lines += ["", f"Limits that held for {count} of {len(runs)} submissions run:"]
        lines += [f"- {item}" for item in enforced]
    return lines


def grade(folder, out, settings=Settings()):
    """Grade every submission in `folder`; write OUT/grades.csv and
    OUT/summary.md; returns (rows, summary text)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"SUBMISSIONS must be a folder with one folder per learner; got {folder}")
    problem = None if settings.unisolated else grade_sandbox.why_no_sandbox()
    if problem:
        raise NoSandbox(f"{problem}. To grade without a sandbox anyway, only submissions you trust: "
                        "make grade UNISOLATED=1 (python -m classroom.grade --unisolated ...)")
    jobs, empty, skipped = submissions(folder)
    with ThreadPoolExecutor(max_workers=settings.kernels) as pool:       # a run mostly waits on its sandbox
        ran = list(pool.map(lambda job: run_one(job, out, settings), jobs))
    rows = [r for one in ran for r in one.rows] + [Row(learner, "", 0, "blank", "", "no notebook of the collection")
                                                  for learner in empty]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(COLUMNS)
        writer.writerows([csv_cell(v) if isinstance(v, str) else v for v in astuple(r)] for r in rows)
    text = summary(ran, jobs, empty, skipped, settings.unisolated)
    (out / "summary.md").write_text(text + "\n", encoding="utf-8")
    return rows, text


def _positive(kind):
    def parse(text):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be more than 0; got {text}")
        return value
    return parse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m classroom.grade", description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "grades")
    parser.add_argument("--cell-limit", type=_positive(float), default=CELL_LIMIT,
                        help=f"seconds one cell may run before it is interrupted (default {CELL_LIMIT:g})")
    parser.add_argument("--time-limit", type=_positive(float), default=NOTEBOOK_LIMIT,
                        help=f"seconds a submission's sandbox may run, then killed (default {NOTEBOOK_LIMIT:g})")
    parser.add_argument("--memory", type=_positive(float), default=3.0, help="GB of memory per sandbox (default 3)")
    parser.add_argument("--cpus", type=_positive(float), default=1.0, help="cores per sandbox (default 1)")
    parser.add_argument("--kernels", type=_positive(int), default=KERNELS, help="sandboxes at a time (default 2)")
    parser.add_argument("--unisolated", action="store_true",
                        help="run without the sandbox (no isolation at all: only for submissions you trust)")
    args = parser.parse_args(argv)
    limits = grade_sandbox.RunLimits(wall=args.time_limit, memory=int(args.memory * 2 ** 30), cpus=args.cpus)
    try:
        rows, text = grade(args.submissions, args.out, Settings(args.cell_limit, limits, args.kernels,
                                                                args.unisolated))
    except (NoSandbox, ValueError) as error:
        print(f"make grade: {error}", file=sys.stderr)
        return 2
    print(text)
    look = any(r.status in LOOK for r in rows)
    print(f"\n{len(rows)} exercises graded: {args.out / 'grades.csv'}" +
          ("; some need a look (flagged, error or not graded): exit 1" if look else ""))
    return 1 if look else 0


if __name__ == "__main__":
    sys.exit(main())
