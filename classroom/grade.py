"""`make grade SUBMISSIONS=dir`: grade learners' notebooks against the
collection's own checks, each submission in a sandbox of its own.

    python -m classroom.grade SUBMISSIONS [--out build/grades] [--cell-limit 60]
        [--time-limit 900] [--memory 3] [--cpus 1] [--kernels 2] [--unisolated]

SUBMISSIONS holds one folder per learner, with their notebooks anywhere in
it under the collection's names (`ada/01-dynamic-control-flow.ipynb`; the
class hub's hub-learners/ is laid out that way). Of each submission only
its answer slots are taken (the cells tagged `answer-slot`, matched to the
stored notebook's by cell id, else by order); a submission with no slot
answered is blank, and is not run. The others are put into the pristine
notebook from notebooks/ with the grader's probe around every slot
(classroom/grade_probe.py), which runs from a fresh kernel in the
submission's own sandbox (classroom/grade_sandbox.py, run by
classroom/grade_run.py), `--kernels` at a time. What comes back is data:
each answer as plain values, or what a function did on the check's
inputs (helpers/exercises/observe.py), and what each answer cell changed in
the checking code. The verdicts are decided here, in a process that runs no
learner code; here too each answer's source is read for what it reaches past
the lesson (classroom/grade_source.py), and an observation counts only
when the runner saw every grader cell of its exercise end and itself ended
with status 0.

Written: OUT/grades.csv (learner, notebook, exercise, status: right, wrong,
blank, flagged, error or not graded; what the answer cell changed in the
checking code; a detail), OUT/summary.md (also printed), and each executed
notebook under OUT/notebooks/. Exits 1 when any submission needs a look
(anything flagged, a checker error, anything not graded), 2 when grading
cannot start (no sandbox on this machine and no --unisolated)."""

import argparse
import csv
import json
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import astuple, dataclass, field
from pathlib import Path

import nbformat

from helpers.arguments import wrong
from helpers.exercises import declared
from helpers.exercises.lesson import stored_definitions
from helpers.exercises.observe import judged, reference
from classroom import grade_sandbox
from classroom.grade_files import (MAX_CELL_OUTPUTS, Unreadable, csv_cell, decode, md, notebooks_in, outputs,
                                   read_notebook)
from classroom.grade_probe import IPYTHON, MIME
from classroom.grade_source import binds, lesson_bindings, reaches, rebinds
from tools.notebooks import CHECK, SLOT
from tools.runtime.working_copy import collection

ROOT = Path(__file__).resolve().parents[1]
CELL_LIMIT = 60.0          # seconds for one cell (then it is interrupted; see grade_run.py)
NOTEBOOK_LIMIT = 900.0     # seconds for a whole sandbox (then the watchdog kills it)
KERNELS = 2                # notebooks run at a time
STATUSES = ("right", "wrong", "blank", "flagged", "error", "not graded")
LOOK = ("flagged", "error", "not graded")      # what makes a submission need a look (exit 1)


class NoSandbox(RuntimeError):
    """No sandbox can be made on this machine, and no unisolated run was asked for."""


@dataclass(frozen=True)
class Settings:
    """How grading runs: each cell's limit, the sandbox's limits, how many at
    a time, and whether to run without a sandbox (only when asked by name)."""

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
    changed: str           # what the answer cell changed in the checking code ("" when nothing)
    detail: str


def tags(cell):
    return cell.metadata.get("tags", [])


def submissions(folder):
    """[(learner, stored notebook, submitted file, the learner's folder)] and the files that are
    not a notebook of the collection in a learner's folder. The collection's
    notebooks without exercises (the index) are left out without a word."""
    every = {p.name: p for p in collection()}
    stored = {name: p for name, p in every.items() if name[:2] in _numbers()}
    found, skipped = [], []
    for path in notebooks_in(folder)[0]:
        parts = path.relative_to(folder).parts
        if ".ipynb_checkpoints" in parts or "backups" in parts:
            continue
        if len(parts) > 1 and path.name in stored:
            found.append((parts[0], stored[path.name], path, folder / parts[0]))
        elif not (len(parts) > 1 and path.name in every):
            skipped.append(path)
    return found, skipped


def _numbers():
    from helpers import lessons

    return set(lessons.numbers())


def answers(stored, submitted):
    """The submission's source for each of the stored notebook's slots
    (None where it has none), and a note on how they were matched."""
    slots = [c for c in stored.cells if SLOT in tags(c)]
    by_id = {c.get("id"): c for c in submitted.cells if c.get("id")}
    matched = [by_id[s["id"]].source if s.get("id") in by_id else None for s in slots]
    if None not in matched:
        return matched, ""
    tagged = [c.source for c in submitted.cells if SLOT in tags(c)]
    if len(tagged) == len(slots):
        return tagged, "answer slots matched by order (their cell ids differ from the stored ones)"
    return matched, "some answer slots are missing (counted blank)"


def untouched(stored, sources):
    """Whether no slot was answered: every source missing or the stored one."""
    slots = [c.source for c in stored.cells if SLOT in tags(c)]
    return all(mine is None or mine.strip() == theirs.strip() for mine, theirs in zip(sources, slots, strict=True))


def _grader_cell(code, name):
    return nbformat.v4.new_code_cell(code, id=f"grade-{name}")


def probed(stored, sources, notebook):
    """The stored notebook with each slot's source replaced by the learner's
    (the stored, unanswered one where they have none) and the probe's calls
    around it; slot k keeps its stored cell id."""
    cells, number, pending = [], 0, None
    for cell in stored.cells:
        if SLOT in tags(cell):
            if number == 0:
                cells.append(_grader_cell(f'__grader__ = __import__("classroom.grade_probe", fromlist=["Probe"])'
                                          f'.Probe("{notebook}", globals())', "probe"))
            if pending:
                cells.append(_grader_cell(f"__grader__.observe({pending})", f"observe-{pending}"))
            number += 1
            cell.source = sources[number - 1] if sources[number - 1] is not None else cell.source
            cells += [_grader_cell(f"__grader__.before({number})", f"before-{number}"), cell,
                      _grader_cell(f"__grader__.after({number})", f"after-{number}")]
            pending = number
            continue
        cells.append(cell)
        if CHECK in tags(cell) and pending:
            cells.append(_grader_cell(f"__grader__.observe({pending})", f"observe-{pending}"))
            pending = None
    if pending:
        cells.append(_grader_cell(f"__grader__.observe({pending})", f"observe-{pending}"))
    stored.cells = cells
    return stored


@dataclass
class Executed:
    """What came back from one sandbox: the notebook with the outputs it
    returned, the cells over their limit, the cells the runner saw end, why
    the run stopped (""), what outlived it, the runner's exit status and the
    limits it ran under."""

    nb: object
    over_limit: list
    stopped: str
    leftovers: list
    ran: frozenset = frozenset()
    returncode: int | None = 0
    enforced: tuple = ()
    seen: dict = field(default_factory=dict)      # {answer cell id: what the runner saw it leave behind}


def execute(nb, settings):
    """Run a probed notebook in a sandbox of its own; only its outputs are
    taken back, each onto the cell of ours with the same id, and only those
    nbformat's output schema takes (grade_files.outputs), at most
    MAX_CELL_OUTPUTS a cell."""
    command = [sys.executable, "-m", "classroom.grade_run", "--cell-limit", str(settings.cell_limit)]
    outcome = grade_sandbox.run(command, nbformat.writes(nb).encode(), settings.limits, unisolated=settings.unisolated)
    stopped, over, ran, seen = outcome.stopped, [], frozenset(), {}
    try:
        result = decode(outcome.stdout, "the sandbox's result", cap=grade_sandbox.OUTPUT_CAP)
        returned = {c.get("id"): c for c in result["notebook"]["cells"] if isinstance(c, dict)}
        malformed = 0
        for cell in nb.cells:
            found = returned.get(cell.get("id"), {}).get("outputs")
            if cell.cell_type == "code" and isinstance(found, list):
                cell.outputs, dropped = outputs(found)
                malformed += dropped
        over = [i for i in result.get("over_limit", []) if isinstance(i, str)]
        ran = frozenset(i for i in result.get("ran", []) if isinstance(i, str))
        found_seen = result.get("seen")
        seen = {k: _strings(v) for k, v in found_seen.items()} if isinstance(found_seen, dict) else {}
        stopped = stopped or str(result.get("stopped", ""))[:500]
        if malformed:
            stopped = "; ".join(filter(None, [stopped, f"{malformed} outputs that are not a notebook's, or past "
                                                       f"{MAX_CELL_OUTPUTS} in a cell, were dropped"]))
    except (Unreadable, ValueError, KeyError, TypeError, AttributeError) as error:
        end = outcome.stderr.strip().splitlines()[-1:] or [""]
        why = f"{type(error).__name__}: {error}" if isinstance(error, Unreadable) else type(error).__name__
        stopped = stopped or f"no result came back from the sandbox ({why}; {end[0][:300]})"
    if outcome.leftovers:
        stopped = "; ".join(filter(None, [stopped, f"processes outlived the sandbox and were killed: "
                                                   f"{outcome.leftovers}"]))
    if outcome.returncode not in (0, None):
        stopped = "; ".join(filter(None, [f"the grader's runner ended with exit status {outcome.returncode}",
                                          stopped]))
    return Executed(nb, over, stopped, outcome.leftovers, ran, outcome.returncode, outcome.enforced, seen)


def _steps(number, slot_id):
    """The cells of exercise `number` the runner must have seen end for its observation to count."""
    return (f"grade-before-{number}", slot_id, f"grade-after-{number}", f"grade-observe-{number}")


def _payloads(nb, count):
    """(after, observed, stray): exercise k's payload from its after-k and
    observe-k cells (the first and only one of its role), and per exercise the
    cells where grader-format output appeared that the grader did not write."""
    after, observed, stray, current = {}, {}, {}, 1
    for cell in nb.cells:
        cell_id = cell.get("id", "")
        if cell_id.startswith("grade-before-"):
            current = int(cell_id.rsplit("-", 1)[1])
        for output in cell.get("outputs", []):
            data = output.get("data", {}) if isinstance(output, dict) else {}
            if MIME not in data:
                continue
            payload = json.loads(json.dumps(data[MIME]))        # exact built-in types, not NotebookNode
            ok = isinstance(payload, dict) and payload.get("exercise") == current
            role = payload.get("role") if ok else None
            if ok and role == "after" and cell_id == f"grade-after-{current}" and current not in after:
                after[current] = payload
            elif ok and role == "observe" and cell_id == f"grade-observe-{current}" and current not in observed:
                observed[current] = payload
            else:
                stray.setdefault(current, []).append(cell_id or "?")
    return after, observed, stray


def _error(nb, cell_id):
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    return f"{errors[0].get('ename')}: {str(errors[0].get('evalue'))[:300]}" if errors else ""


def _strings(items):
    return [str(i)[:200] for i in items] if isinstance(items, list) else ["the flags are not a list"]


class Judge:
    """The verdicts, in this process: each notebook's lesson names from the
    stored notebook, each write and fix exercise's reference behaviour
    computed once."""

    def __init__(self):
        self._lessons, self._references = {}, {}

    def lesson(self, notebook, exercise):
        if notebook not in self._lessons:
            self._lessons[notebook] = stored_definitions(notebook)
        return {name: self._lessons[notebook][name] for name in exercise.needs if name in self._lessons[notebook]}

    def __call__(self, notebook, exercise, observation):
        lesson = self.lesson(notebook, exercise)
        missing = [name for name in exercise.needs if name not in lesson]
        if missing:
            return "error", f"the stored notebook defines no {', '.join(missing)}, which this check needs"
        expected = None
        if exercise.kind in ("write", "fix"):
            key = (notebook, exercise.number)
            if key not in self._references:
                try:
                    self._references[key] = ("ok", reference(exercise, lesson))
                except Exception as error:
                    self._references[key] = ("error", f"the reference solution failed ({type(error).__name__}: "
                                                      f"{str(error)[:200]})")
            state, expected = self._references[key]
            if state == "error":
                return "error", expected
        return judged(exercise, observation, lesson, expected)


def rows(learner, name, executed, slot_ids, sources, judge):
    """One Row per exercise of an executed probed notebook."""
    notebook, nb = name[:2], executed.nb
    exercises = declared(notebook)
    after, observed, stray = _payloads(nb, len(slot_ids))
    names = lesson_bindings([c.source for c in nb.cells if c.cell_type == "code" and c.get("id") not in slot_ids
                          and not str(c.get("id", "")).startswith("grade-")])
    found, earlier = [], []
    before = _code_before(nb, slot_ids, sources)
    for number, (slot_id, source, exercise) in enumerate(zip(slot_ids, sources, exercises, strict=True), start=1):
        reached = reaches(source, names) if source is not None else []
        flags = [f"its code reaches past the lesson ({', '.join(reached[:6])})"] if reached else []
        again = rebinds(before.get(slot_id, []), source, {exercise.answer_name} | binds(exercise.solution), IPYTHON)
        flags += [f"it binds again or deletes names bound before it ({', '.join(again[:6])})"] if again else []
        flags += _not_named_again(_strings(after[number].get("flagged", [])) if number in after else [], again)
        flags += executed.seen.get(slot_id, [])         # read from outside the kernel by the runner
        flags += [f"output in the grader's format appeared in cell {c}, which the grader did not write it to"
                  for c in stray.get(number, [])]
        if executed.leftovers:
            flags.append("a process outlived the sandbox")
        changed = "; ".join(flags)
        earlier += [number] if changed else []
        if not changed and earlier:       # checked after an earlier answer cell changed the checking code
            changed = f"checked after exercise {earlier[0]}'s answer cell changed the checking code"
        noted = "; ".join(_strings(after[number].get("noted", []))) if number in after else ""
        unseen = [step for step in _steps(number, slot_id) if step not in executed.ran]
        if executed.returncode != 0:
            status, detail = "not graded", executed.stopped or "the grader's runner did not end cleanly"
        elif number not in observed:
            status, detail = "not graded", executed.stopped or "the grader's probe gave no observation"
        elif unseen:
            status, detail = "not graded", (f"the runner did not see the grader's cell {unseen[0]} end, yet an "
                                            "observation came back")
        elif observed[number].get("observation") is None:
            raised = _error(nb, slot_id)
            if slot_id in executed.over_limit:
                status, detail = "wrong", "the answer cell ran past its time limit and was stopped"
            elif raised:
                status, detail = "wrong", f"the answer cell raised {raised}"
            else:
                status = "wrong" if (source or "").strip() else "blank"
                detail = f"no {exercise.answer_name} was defined"
        else:
            status, detail = judge(notebook, exercise, observed[number]["observation"])
        if changed and status != "blank":
            detail, status = f"judged {status}, but flagged: {detail}", "flagged"
        elif changed:
            status = "flagged"
        if slot_id in executed.over_limit and "time limit" not in detail:
            detail += "; the answer cell ran past its time limit and was stopped"
        found.append(Row(learner, name, number, status, changed, "; ".join(filter(None, [detail, noted]))))
    return found


def _not_named_again(flags, again):
    """The probe's flags but its "rebound x" and "deleted x" of a name the
    source reader already named."""
    return [flag for flag in flags
            if not (flag.startswith(("rebound ", "deleted ")) and flag.split(" ", 1)[1] in again)]


def _code_before(nb, slot_ids, sources):
    """For each answer slot, the sources of the code cells the kernel ran
    before it: the lesson's, the grader's, and the answers (or the stored
    slots) of the earlier slots."""
    answered, ran, before = dict(zip(slot_ids, sources, strict=True)), [], {}
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        cell_id = cell.get("id", "")
        if cell_id in answered:
            before[cell_id] = list(ran)
        ran.append(answered[cell_id] if answered.get(cell_id) is not None else cell.get("source", ""))
    return before


def prepare(learner, stored_path, submitted_path, folder=None):
    """(stored notebook, slot ids, sources, note) for one submission, read
    from inside the learner's `folder` (by default the file's own) as
    untrusted input: Unreadable says why it cannot be graded."""
    stored = nbformat.read(stored_path, as_version=4)
    slot_ids = [c["id"] for c in stored.cells if SLOT in tags(c)]
    if len(slot_ids) != len(declared(stored_path.name[:2])):
        raise wrong(ValueError, f"{stored_path.name} has {len(slot_ids)} answer slots for "
                                f"{len(declared(stored_path.name[:2]))} exercises: fix the notebook's tags")
    sources, note = answers(stored, read_notebook(submitted_path, folder or Path(submitted_path).parent))
    return stored, slot_ids, sources, note


def grade_one(learner, stored_path, submitted_path, out, settings, judge=None, folder=None):
    """Rows for one submitted notebook; its executed copy goes under `out`."""
    return _judged(_run_one(learner, stored_path, submitted_path, out, settings, folder), judge or Judge())


@dataclass(frozen=True)
class NotGraded:
    """A submission that could not be graded, and why (the learner's alone)."""

    why: str


def _run_one(learner, stored_path, submitted_path, out, settings, folder=None):
    """What grading one submission gave; anything it raises is this learner's
    alone (NotGraded), and grading goes on for everyone else."""
    try:
        return _run_checked(learner, stored_path, submitted_path, out, settings, folder)
    except Unreadable as error:
        return learner, stored_path.name, NotGraded(f"unreadable: {error}"), None, None, ""
    except Exception as error:      # noqa: BLE001 (one submission must not stop the class's grading)
        return (learner, stored_path.name, NotGraded(f"grading this notebook failed ({type(error).__name__}: "
                                                      f"{str(error)[:200]})"), None, None, "")


def _run_checked(learner, stored_path, submitted_path, out, settings, folder):
    stored, slot_ids, sources, note = prepare(learner, stored_path, submitted_path, folder)
    if untouched(stored, sources):
        return learner, stored_path.name, None, slot_ids, sources, note or "nothing answered: not run"
    executed = execute(probed(stored, sources, stored_path.name[:2]), settings)
    copy = out / "notebooks" / learner / stored_path.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    try:
        nbformat.write(executed.nb, copy)
    except Exception as error:      # noqa: BLE001 (an output nbformat refuses: the grades still count)
        copy.write_text(f"the executed notebook could not be written ({type(error).__name__})\n")
    return learner, stored_path.name, executed, slot_ids, sources, note


def _judged(ran, judge):
    """The rows of one submission; anything judging it raises is this
    learner's alone ("not graded", with why), and the rest of the class is judged."""
    learner, name = ran[:2]
    try:
        return _judged_rows(ran, judge)
    except Exception as error:      # noqa: BLE001 (one submission must not stop the class's grading)
        why = NotGraded(f"judging this notebook failed ({type(error).__name__}: {str(error)[:200]})")
        return _judged_rows((learner, name, why, None, None, ""), judge)


def _judged_rows(ran, judge):
    learner, name, executed, slot_ids, sources, note = ran
    if isinstance(executed, NotGraded):
        count = len(declared(name[:2]))
        return [Row(learner, name, n, "not graded", "", executed.why) for n in range(1, count + 1)]
    if executed is None:
        return [Row(learner, name, n, "blank", "", note) for n in range(1, len(slot_ids) + 1)]
    found = rows(learner, name, executed, slot_ids, sources, judge)
    return [Row(*astuple(r)[:5], "; ".join(filter(None, [r.detail, note]))) for r in found]


def limits_text(runs, unisolated=False):
    """What bounded the sandboxes: each distinct set of limits, with how many runs had it."""
    if unisolated:
        return ["", "Limits: none. Graded WITHOUT a sandbox (--unisolated): the submissions ran with your rights."]
    sets = Counter(tuple(e.enforced) for e in runs)
    lines = []
    for enforced, count in sorted(sets.items(), key=lambda item: -item[1]):
        lines += ["", f"Limits that held for {count} of {len(runs)} submissions run:"]
        lines += [f"- {md(item, 1000)}" for item in enforced] or ["- none reported"]
    return lines


def summary(all_rows, skipped, limits=()):
    """The teacher's summary, in Markdown; `limits` is limits_text's lines."""
    lines = ["| learner | notebook | " + " | ".join(STATUSES) + " |", "|---|---|" + "---:|" * len(STATUSES)]
    untouched = {}                 # a notebook with every answer blank is one name in a list, not a row
    for key in sorted({(r.learner, r.notebook) for r in all_rows}):
        mine = [r.status for r in all_rows if (r.learner, r.notebook) == key]
        if set(mine) == {"blank"}:
            untouched.setdefault(key[0], []).append(key[1])
            continue
        lines.append(f"| {md(key[0])} | {md(key[1])} | " + " | ".join(str(mine.count(s)) for s in STATUSES) + " |")
    if untouched:
        lines += ["", "Notebooks with every answer blank (not counted in the table above):"]
        lines += [f"- {md(learner)}: {md(', '.join(notebooks), 2000)}" for learner, notebooks in untouched.items()]
    # every learner-made text below (names, what a cell raised, what it printed) is escaped onto one line
    flagged = [r for r in all_rows if r.changed and not r.changed.startswith("checked after")]
    lines += ["", f"Answer cells that changed the checking code: {len(flagged) or 'none'} (the exercises "
              "checked after such a cell are flagged too; a flagged exercise is never counted right)"]
    lines += [f"- {md(r.learner)}, {md(r.notebook)}, exercise {r.exercise}: {md(r.changed)}" for r in flagged]
    for status in ("error", "not graded"):
        found = [r for r in all_rows if r.status == status]
        lines += ["", f"{status.capitalize()}: {len(found) or 'none'}"]
        lines += [f"- {md(r.learner)}, {md(r.notebook)}, exercise {r.exercise}: {md(r.detail)}" for r in found]
    if skipped:
        names = md(", ".join(str(p) for p in skipped[:5]), 1000) + (", ..." if len(skipped) > 5 else "")
        lines += ["", f"Not graded, not a notebook of the collection in a learner's folder ({len(skipped)}): {names}"]
    return "\n".join([*lines, *limits])


def needs_a_look(all_rows):
    """Whether any submission needs the teacher's look (exit 1)."""
    return any(r.status in LOOK for r in all_rows)


def grade(folder, out, settings=Settings()):
    """Grade every submission in `folder`; write OUT/grades.csv and
    OUT/summary.md; returns (rows, summary text). Raises NoSandbox when this
    machine cannot make the sandbox and `settings.unisolated` is off."""
    if not Path(folder).is_dir():
        raise wrong(ValueError, f"SUBMISSIONS must be a folder with one folder per learner; got {folder}")
    problem = None if settings.unisolated else grade_sandbox.why_no_sandbox()
    if problem:
        raise NoSandbox(f"{problem}. To grade without a sandbox anyway, only submissions you trust: "
                        "make grade UNISOLATED=1 (python -m classroom.grade --unisolated ...)")
    found, skipped = submissions(Path(folder))
    with ThreadPoolExecutor(max_workers=settings.kernels) as pool:       # a run mostly waits on its sandbox
        ran = list(pool.map(lambda job: _run_one(*job[:3], out, settings, job[3]), found))
    judge = Judge()                                          # verdicts one at a time, here
    all_rows = [row for one in ran for row in _judged(one, judge)]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["learner", "notebook", "exercise", "status", "changed_checking_code", "detail"])
        writer.writerows([csv_cell(v) if isinstance(v, str) else v for v in astuple(r)] for r in all_rows)
    runs = [one[2] for one in ran if isinstance(one[2], Executed)]
    text = summary(all_rows, skipped, limits_text(runs, settings.unisolated) if runs or settings.unisolated else [])
    (out / "summary.md").write_text(text + "\n")
    return all_rows, text


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
    settings = Settings(args.cell_limit, limits, args.kernels, args.unisolated)
    try:
        all_rows, text = grade(args.submissions, args.out, settings)
    except NoSandbox as error:
        print(f"make grade: {error}", file=sys.stderr)
        return 2
    except ValueError as error:
        print(f"make grade: {error}", file=sys.stderr)
        return 2
    print(text)
    look = needs_a_look(all_rows)
    print(f"\n{len(all_rows)} exercises graded: {args.out / 'grades.csv'}" +
          ("; some need a look (flagged, error or not graded): exit 1" if look else ""))
    return 1 if look else 0


if __name__ == "__main__":
    sys.exit(main())
