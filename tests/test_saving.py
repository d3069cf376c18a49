"""The server's save hook and contents manager without a browser (tools/runtime/saving.py, cell_merge.py,
widget_state.py): no save puts ____ back over an answer, a stale tab's save loses no cell the other tab
saved, and a widget output stays drawable after its kernel is gone."""

import asyncio
import copy
import json
import shutil
import uuid
from pathlib import Path

import pytest
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from tools.notebooks import NOTEBOOKS, REFERENCE, WIDGET_STATE, WIDGET_VIEW, notebook_paths
from tools.runtime.lab import SETTINGS, lab_argv, server_options
from tools.runtime.saving import PAGE, PAGES_FILE
from tools.runtime.widget_state import keep_widget_views

STORED = NOTEBOOKS / "03-retain-graph.ipynb"


def _slots(nb):
    return [c for c in nb["cells"] if "answer-slot" in c.get("metadata", {}).get("tags", [])]


# ----- two tabs: the stale one's save merged with the file the other saved -----

def _configured(root, *stored):
    """The learner's server's contents manager, as jupyter/jupyter_server_config.json configures it, serving `root`
    with copies of the `stored` notebooks."""
    for path in stored:
        shutil.copy(path, root / path.name)
    config = json.loads((SETTINGS / "jupyter_server_config.json").read_text(encoding="utf-8"))
    name = config.get("ServerApp", {}).get("contents_manager_class", f"{AsyncLargeFileManager.__module__}."
                                                                       "AsyncLargeFileManager")
    return import_item(name)(config=Config({"ContentsManager": config["ContentsManager"]}), root_dir=str(root))


def _open(manager, name):
    """What a page holds after opening the notebook: the content as JSON."""
    model = asyncio.run(manager.get(name))
    return json.loads(json.dumps(model["content"]))


def _save(manager, name, content):
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": json.loads(json.dumps(content))},
                             name))
    return json.loads((Path(manager.root_dir) / name).read_text(encoding="utf-8"))


def _cell(nb, cell_id):
    return next((c for c in nb["cells"] if c.get("id") == cell_id), None)


def _text(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _ids(nb):
    return [c.get("id") for c in nb["cells"]]


NOTE = {"cell_type": "markdown", "id": "my-note-1", "metadata": {}, "source": "My note: retain_graph keeps it."}
LESSON_EDIT = "x = torch.tensor(5.0, requires_grad=True)  # my edit"


@pytest.fixture
def two_tabs(tmp_path):
    """03 open in tabs A and B; A adds a note under section 1's example, edits the example, saves."""
    manager = _configured(tmp_path, STORED)
    a, b = _open(manager, STORED.name), _open(manager, STORED.name)
    a["cells"].insert(_ids(a).index("note-example") + 1, dict(NOTE))
    _cell(a, "note-example")["source"] = LESSON_EDIT
    _save(manager, STORED.name, a)
    return manager, a, b


def test_one_tab_saves_as_sent_and_the_mark_stays_off_disk(tmp_path):
    manager = _configured(tmp_path, STORED)
    page = _open(manager, STORED.name)
    assert PAGE in page["metadata"], "the server's copy of the notebook carries no page mark"
    page["cells"].insert(6, dict(NOTE))
    saved = _save(manager, STORED.name, page)
    assert PAGE not in saved["metadata"] and NOTE["id"] in _ids(saved)
    page["cells"] = [c for c in page["cells"] if c["id"] not in (NOTE["id"], "s1-obs")]
    _cell(page, "note-example")["source"] = LESSON_EDIT
    saved = _save(manager, STORED.name, page)
    assert _ids(saved) == _ids(page) and _text(_cell(saved, "note-example")) == LESSON_EDIT


def test_deletions_merge_and_a_cell_both_changed_keeps_both_texts(two_tabs):
    manager, a, b = two_tabs
    a["cells"] = [c for c in a["cells"] if c["id"] != "s1-grad-md"]
    _save(manager, STORED.name, a)
    b["cells"] = [c for c in b["cells"] if c["id"] != "s2"]
    _cell(b, "note-example")["source"] = "x = torch.tensor(4.0, requires_grad=True)"
    saved = _save(manager, STORED.name, b)
    assert "s1-grad-md" not in _ids(saved) and "s2" not in _ids(saved)
    assert NOTE["id"] in _ids(saved)
    at = _ids(saved).index("note-example")
    assert _text(saved["cells"][at]) == "x = torch.tensor(4.0, requires_grad=True)"
    other = saved["cells"][at + 1]
    assert other["cell_type"] == "markdown" and "another tab" in _text(other) and LESSON_EDIT in _text(other)


def test_a_stale_tab_keeps_the_cells_the_other_tab_saved_across_a_restart(two_tabs, tmp_path):
    """A server started again (make lab again, a culled learner's server) reads the snapshots the old one kept."""
    _, a, b = two_tabs
    again = _configured(tmp_path)
    slot = _slots(b)[0]["id"]
    for answer in ("answer_1 = {'x - 1'}", "answer_1 = {'x + 1'}"):
        _cell(b, slot)["source"] = answer
        saved = _save(again, STORED.name, b)
        assert _ids(saved) == _ids(a), "the merged notebook's cells are not the other tab's, in its order"
        assert _text(_cell(saved, "note-example")) == LESSON_EDIT, "the stale tab's save undid the other's edit"
        assert _text(_cell(saved, slot)) == answer
    kept = tmp_path / PAGES_FILE
    assert len(json.loads(kept.read_text(encoding="utf-8"))) == 2      # the two pages, and no more
    for broken in ("", "{", "[1, 2]", '[["page", {"cell": 3}]]', '{"page": {}}'):
        kept.write_text(broken, encoding="utf-8")
        assert _configured(tmp_path).pages == {}, broken


def test_a_page_the_server_does_not_know_keeps_the_answers(two_tabs):
    """A page opened before the server started: its mark unknown."""
    manager, a, b = two_tabs
    slot = _slots(a)[0]["id"]
    assert "____" in _text(_cell(b, slot)), "03's first slot is no longer blank as stored"
    _cell(a, slot)["source"] = "answer_1 = {'x - 1'}"
    _save(manager, STORED.name, a)
    manager.pages.clear()
    assert _text(_cell(_save(manager, STORED.name, b), slot)) == "answer_1 = {'x - 1'}"
    manager.pages.clear()
    _cell(b, slot)["source"] = "answer_1 = {'x.clone()'}"
    assert _text(_cell(_save(manager, STORED.name, b), slot)) == "answer_1 = {'x.clone()'}"


def test_every_server_the_learner_meets_has_the_servers_settings():
    """On make lab's and make notebook's command lines; classroom/singleuser.py takes the same, Binder its image's."""
    options = server_options()
    for option in ("--MappingKernelManager.cull_idle_timeout=1800", "--MappingKernelManager.cull_interval=60",
                   "--MappingKernelManager.cull_connected=False", "--MappingKernelManager.cull_busy=False",
                   "--ServerApp.contents_manager_class=tools.runtime.saving.Contents",
                   "--ContentsManager.pre_save_hook=tools.runtime.saving.pre_save",
                   "--ServerApp.kernel_spec_manager_class=tools.runtime.kernel.Specs"):
        assert option in options
    assert set(options) <= set(lab_argv()) and set(options) <= set(lab_argv(app="notebook"))


def test_make_edit_serves_the_stored_notebooks_and_a_save_changes_no_byte(tmp_path, monkeypatch):
    from tools.runtime import lab, working_copy

    served, trusted = [], []
    monkeypatch.setattr(lab, "serve", served.append)
    monkeypatch.setattr(working_copy, "trust", trusted.append)
    lab.main(["--edit", "--no-browser"])
    (command,) = served
    assert f"--ServerApp.root_dir={NOTEBOOKS}" in command and all(o in command for o in server_options())
    assert list(trusted[0]) == notebook_paths()
    manager = _configured(tmp_path, *notebook_paths())
    for path in notebook_paths():
        _save(manager, path.name, _open(manager, path.name))
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), f"{path.name} changed by a save"


# ----- widget outputs kept drawable (tools/runtime/widget_state.py) -----

WIDGETS = NOTEBOOKS / "02-inspecting-the-graph.ipynb"


def stored():
    return json.loads(WIDGETS.read_text(encoding="utf-8"))


def state(nb):
    return nb["metadata"]["widgets"][WIDGET_STATE]["state"]


def views(nb):
    """(cell id, index, output) of each widget output of `nb`."""
    return [(cell["id"], i, output) for cell in nb["cells"] if cell["cell_type"] == "code"
            for i, output in enumerate(cell["outputs"]) if WIDGET_VIEW in output.get("data", {})]


def run_again(nb, models=None):
    """`nb` as the page sends it after its widget cells ran in a new kernel: new model ids (`models`, if given,
    receives them as a live kernel holds them), step 3, the session's execution count."""
    renames = {old: uuid.uuid4().hex for old in state(nb)}
    text = json.dumps(state(nb))
    for old, new in renames.items():
        text = text.replace(old, new)
    if models is not None:
        models.update(json.loads(text.replace("step 1 of 5", "step 3 of 5")))
    for _, _, output in views(nb):
        output["data"][WIDGET_VIEW]["model_id"] = renames[output["data"][WIDGET_VIEW]["model_id"]]
        output["data"]["text/plain"] = "panel(step=3)\nstep 3 of 5: ..."
        output["execution_count"] = 41
    return nb


def test_with_save_state_on_the_last_state_is_kept_without_earlier_runs():
    """saveState on: the page sends the live models, the cell's earlier runs' too."""
    earlier, live = {}, {}
    run_again(stored(), earlier)
    sent = run_again(stored(), live)
    state(sent).clear()
    state(sent).update({**earlier, **live})
    keep_widget_views(sent)
    assert state(sent) == live
    assert "step 3 of 5" in json.dumps(state(sent))


def test_reopened_and_saved_before_running_keeps_its_drawings():
    """saveState on sends only a live kernel's models: autosave after a reopen would save an empty state."""
    on_disk = stored()
    sent = stored()
    state(sent).clear()
    keep_widget_views(sent, on_disk)
    assert sent == on_disk


def test_a_widget_with_no_stored_form_keeps_its_text_form():
    """A cell the learner added, its models not sent: the text form, never "model not found"."""
    on_disk = stored()
    sent = run_again(stored())
    for cell in sent["cells"]:
        cell["id"] = uuid.uuid4().hex[:8]
    keep_widget_views(sent, on_disk)
    assert views(sent) == []
    assert state(sent) == {}
    texts = ["".join(o.get("data", {}).get("text/plain", "")) for cell in sent["cells"]
             if cell["cell_type"] == "code" for o in cell["outputs"]]
    assert sum(text.startswith("panel(step=3)") for text in texts) == len(views(on_disk))


def test_a_model_another_names_is_kept_with_it():
    """Boxes' children, layouts, styles: one missing makes the output's stored form wanted."""
    nb = stored()
    names = [ref for model in state(nb).values() for ref in json.dumps(model["state"]).split('"')
             if ref.startswith(REFERENCE)]
    assert names, "the stored widget names no other model"
    sent = copy.deepcopy(nb)
    del state(sent)[names[0].removeprefix(REFERENCE)]
    keep_widget_views(sent, nb)
    assert state(sent) == state(nb)


def test_a_widget_run_again_is_saved_through_the_server_with_its_stored_drawing(tmp_path):
    """saveState off (the learners' default): the page sends the session's outputs and the state it opened with."""
    on_disk = stored()
    assert views(on_disk), f"{WIDGETS.name} holds no widget output: these tests check nothing"
    saved = _save(_configured(tmp_path, WIDGETS), WIDGETS.name, run_again(stored()))
    for (_, _, output), (_, _, kept) in zip(views(saved), views(on_disk), strict=True):
        assert output == {**kept, "execution_count": 41}
    assert state(saved) == state(on_disk)
