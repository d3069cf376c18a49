"""The save hook that keeps a notebook's widget outputs drawable after its
kernel is gone (tools/runtime/widget_state.py), without a browser, on the
stored notebook 02: a widget cell run again in a session is saved with the
stored drawing (the page sends the state it opened with), a learner who
turned `saveState` on keeps the last state and no model of earlier runs,
a notebook reopened and saved before its cells ran again keeps its drawings,
a widget with no stored form keeps its text form. The hook runs in the
server `make lab`, `make notebook`, the hub and Binder start. The browser
test is tests/test_saved_widgets.py."""

import asyncio
import copy
import json
import uuid

import nbformat
import pytest
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from traitlets.config import Config

from tools.notebooks import NOTEBOOKS
from tools.runtime.lab import SETTINGS, lab_argv, server_options
from tools.runtime.widget_state import REFERENCE, WIDGET_STATE, WIDGET_VIEW, keep_widget_views

STORED = NOTEBOOKS / "02-inspecting-the-graph.ipynb"
HOOK = "tools.runtime.saving.pre_save"


def stored():
    return json.loads(STORED.read_text(encoding="utf-8"))


def state(nb):
    return nb["metadata"]["widgets"][WIDGET_STATE]["state"]


def views(nb):
    """(cell id, index, output) of each widget output of `nb`."""
    return [(cell["id"], i, output) for cell in nb["cells"] if cell["cell_type"] == "code"
            for i, output in enumerate(cell["outputs"]) if WIDGET_VIEW in output.get("data", {})]


def run_again(nb, models=None):
    """`nb` as the page sends it once its widget cells ran in a new kernel:
    each widget output names a new model (its models renamed, and `models`,
    when given, receives them as a live kernel's state would hold them), the
    caption says step 3, the execution count is the session's."""
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


def test_the_stored_notebook_has_widget_outputs_to_keep():
    nb = stored()
    assert views(nb), f"{STORED.name} holds no widget output: these tests check nothing"
    assert all(output["data"][WIDGET_VIEW]["model_id"] in state(nb) for _, _, output in views(nb))


def test_a_widget_run_again_is_saved_with_its_stored_drawing():
    """saveState off (the learners' default): the page sends the outputs of
    the session and the widget state it opened with, which lacks their
    models. Saved, each widget output is the stored one (its text form
    too), numbered as the session's, and the state holds its models."""
    on_disk = stored()
    sent = run_again(stored())
    assert keep_widget_views(sent, lambda: on_disk) == (len(views(on_disk)), 0)
    for (_, _, saved), (_, _, kept) in zip(views(sent), views(on_disk), strict=True):
        assert saved == {**kept, "execution_count": 41}
    assert state(sent) == state(on_disk)


def test_with_save_state_on_the_last_state_is_kept_without_earlier_runs():
    """saveState on: the page sends the live models, those of the cell's
    earlier runs in the same kernel too. The outputs keep their models (the
    last state); the earlier runs' models are not saved."""
    earlier, live = {}, {}
    run_again(stored(), earlier)
    sent = run_again(stored(), live)
    state(sent).clear()
    state(sent).update({**earlier, **live})
    assert keep_widget_views(sent, lambda: pytest.fail("the file on disk was read")) == (0, 0)
    assert state(sent) == live
    assert "step 3 of 5" in json.dumps(state(sent))


def test_reopened_and_saved_before_running_keeps_its_drawings():
    """saveState on sends only the models of a live kernel: a notebook
    reopened and saved (autosave, or Save on closing) before its widget cells
    ran again would be saved with an empty state. The file's models stay."""
    on_disk = stored()
    sent = stored()
    state(sent).clear()
    assert keep_widget_views(sent, lambda: on_disk) == (len(views(on_disk)), 0)
    assert sent == on_disk


def test_a_widget_with_no_stored_form_keeps_its_text_form():
    """A widget cell the file does not hold (a cell the learner added) and
    whose models the page did not send: no widget view to show, so the
    output keeps its text form, never "model not found"."""
    on_disk = stored()
    sent = run_again(stored())
    for cell in sent["cells"]:
        cell["id"] = uuid.uuid4().hex[:8]
    assert keep_widget_views(sent, lambda: on_disk) == (0, len(views(on_disk)))
    assert views(sent) == []
    assert state(sent) == {}
    texts = ["".join(o.get("data", {}).get("text/plain", "")) for cell in sent["cells"]
             if cell["cell_type"] == "code" for o in cell["outputs"]]
    assert sum(text.startswith("panel(step=3)") for text in texts) == len(views(on_disk))


def test_a_model_another_names_is_kept_with_it():
    """A widget output needs every model its model names (boxes' children,
    layouts, styles): one missing makes the output's stored form wanted."""
    nb = stored()
    names = [ref for model in state(nb).values() for ref in json.dumps(model["state"]).split('"')
             if ref.startswith(REFERENCE)]
    assert names, "the stored widget names no other model"
    sent = copy.deepcopy(nb)
    del state(sent)[names[0].removeprefix(REFERENCE)]
    assert keep_widget_views(sent, lambda: nb) == (1, 0)
    assert state(sent) == state(nb)


def test_a_notebook_without_widgets_is_saved_as_it_comes():
    nb = json.loads((NOTEBOOKS / "03-retain-graph.ipynb").read_text(encoding="utf-8"))
    before = copy.deepcopy(nb)
    assert keep_widget_views(nb, lambda: pytest.fail("the file on disk was read")) == (0, 0)
    assert nb == before


def test_every_server_the_learner_meets_runs_the_hook():
    """jupyter/jupyter_server_config.json names the hook: `make lab` and
    `make notebook` pass it on the command line (so does the hub's learner
    server, classroom/singleuser.py, with the same options), Binder
    writes it into the image's server config (test_lab's test_binder_set_up)."""
    config = json.loads((SETTINGS / "jupyter_server_config.json").read_text(encoding="utf-8"))
    assert config["ContentsManager"]["pre_save_hook"] == HOOK
    option = f"--ContentsManager.pre_save_hook={HOOK}"
    assert option in server_options()
    assert option in lab_argv() and option in lab_argv(app="notebook")


def test_the_server_saves_through_the_hook(tmp_path):
    """jupyter_server's own contents manager, configured as the command
    line configures it, saves a widget cell run again with its stored form."""
    (tmp_path / STORED.name).write_text(STORED.read_text(encoding="utf-8"), encoding="utf-8")
    config = Config({"ContentsManager": {"pre_save_hook": HOOK}})
    manager = AsyncLargeFileManager(config=config, root_dir=str(tmp_path))
    sent = run_again(stored())
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": sent}, STORED.name))
    saved = nbformat.read(tmp_path / STORED.name, as_version=4)
    kept = saved.metadata["widgets"][WIDGET_STATE]["state"]
    ids = [o.data[WIDGET_VIEW]["model_id"] for c in saved.cells if c.cell_type == "code" for o in c.outputs
           if WIDGET_VIEW in o.get("data", {})]
    assert ids and all(i in kept for i in ids)
    assert kept == state(stored())
