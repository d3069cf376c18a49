"""Lesson models that several notebooks use. Notebook 01 prints their
source with `inspect.getsource`, so what the learner reads is what runs."""

import torch


class TanhRNNCell(torch.nn.Module):
    """A hand-written RNN cell: h' = tanh(w_x @ x + w_h @ h + b)."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.w_x = torch.nn.Parameter(torch.randn(hidden_size, input_size) * 0.5)
        self.w_h = torch.nn.Parameter(torch.randn(hidden_size, hidden_size) * 0.5)
        self.b = torch.nn.Parameter(torch.zeros(hidden_size))

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.w_x @ x + self.w_h @ h + self.b)


def run_sequence(cell: TanhRNNCell, sequence: torch.Tensor) -> torch.Tensor:
    """Unroll `cell` over the rows of `sequence`, one step per row."""
    h = torch.zeros(cell.b.shape[0])
    for x in sequence:
        h = cell(x, h)
    return h
