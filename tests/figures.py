"""Figures a test measured (browser timings, sweep counts), printed at the end
of the run, never asserted: the `timings` fixture of tests/ and classroom/tests/."""

FIGURE = "figure"


class Figures:
    """They travel with the test's report, so they survive parallel workers."""

    def __init__(self, node):
        self.node = node

    def append(self, line):
        self.node.user_properties.append((FIGURE, line))


def figure_lines(terminalreporter):
    """Print every passed or failed test's figures under one heading."""
    reports = [r for kind in ("passed", "failed") for r in terminalreporter.stats.get(kind, []) if r.when == "call"]
    figures = [line for r in reports for name, line in r.user_properties if name == FIGURE]
    if figures:
        terminalreporter.section("figures (measured, not asserted)")
        for line in figures:
            terminalreporter.write_line(line)
