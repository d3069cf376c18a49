"""Every lesson function has one source: no twin between the notebooks,
helpers/ and tests/, and the detector itself catches a twin."""

import nbformat
from twins import project_sources, twins

LESSON = '''
def dynamic_forward(x, use_extra_layer):
    y = x * 2
    if use_extra_layer:
        y = y + 1
    return y
'''


def test_no_twins_in_the_project():
    assert twins(project_sources()) == []


def test_a_notebook_function_redefined_in_helpers_is_caught():
    found = twins([("notebooks/01.ipynb", "notebook", LESSON), ("helpers/lesson.py", "helpers", LESSON)])
    assert "dynamic_forward: defined in notebooks/01.ipynb and again in helpers/lesson.py" in found


def test_a_renamed_copy_is_caught():
    renamed = LESSON.replace("dynamic_forward", "_branchy").replace('"""', "")
    found = twins([("notebooks/01.ipynb", "notebook", LESSON), ("tests/test_x.py", "tests", renamed)])
    assert found == ["same body: dynamic_forward in notebooks/01.ipynb, _branchy in tests/test_x.py"]


def test_different_functions_are_not_twins():
    other = LESSON.replace("dynamic_forward", "other").replace("y + 1", "y - 1")
    assert twins([("notebooks/01.ipynb", "notebook", LESSON), ("helpers/a.py", "helpers", other)]) == []


def test_a_copy_in_a_subpackage_is_caught(tmp_path):
    """The scan reaches every depth: a lesson function copied into
    helpers/lessons/ (a package inside the package) is found."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(LESSON)])
    (tmp_path / "notebooks").mkdir()
    nbformat.write(notebook, tmp_path / "notebooks" / "01-lesson.ipynb")
    nested = tmp_path / "helpers" / "lessons"
    nested.mkdir(parents=True)
    (nested / "nb01.py").write_text(LESSON)
    found = twins(project_sources(tmp_path))
    assert "dynamic_forward: defined in notebooks/01-lesson.ipynb and again in helpers/lessons/nb01.py" in found
