"""Draw the README's pictures from the live graph of the note's example:
before and after backward(). Run: .venv/bin/python -m tools.build.readme_figure"""

import subprocess
from pathlib import Path

import torch

from helpers import draw_graph

DOCS = Path(__file__).resolve().parents[2] / "docs"


def main():
    x = torch.tensor(2.0, requires_grad=True)
    y = x**2
    z = y * 3
    names = {"x": x, "z": z}
    pictures = {"graph-before.png": draw_graph(z, names)}
    z.backward()
    pictures["graph-after.png"] = draw_graph(z, names)
    for name, drawing in pictures.items():
        subprocess.run(["dot", "-Tpng", "-Gdpi=110", "-o", str(DOCS / name)],
                       input=drawing.source.encode(), check=True)
        print(DOCS / name)


if __name__ == "__main__":
    main()
