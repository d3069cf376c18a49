"""Colours of the drawings, computed: every text colour reads at WCAG contrast 4.5:1 or more on every fill it can
sit on, and every two fills stay apart (CIELAB distance), for normal vision and under Machado, Oliveira and
Fernandes' (2009) full-severity protanopia, deuteranopia and tritanopia simulations, in linear RGB."""

import itertools
import re
from pathlib import Path

from helpers import dot

MIN_CONTRAST = 4.5
MIN_DISTANCE = 10.0       # CIELAB delta E (1976) between two fills
MACHADO = {
    "normal": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}
TEXTS = {"text": dot.TEXT_COLOUR, "saved": dot.SAVED_COLOUR, "freed": dot.FREED_COLOUR,
         "cut": dot.CUT_COLOUR, "note": dot.NOTE_COLOUR}
FILLS = {kind: fill for kind, (fill, _, _) in dot.LEGEND.items()}
# the cut note's fill carries only the cut colour, but every text is held to it
BACKGROUNDS = {**FILLS, "cut note": dot.CUT_FILL}
def linear(hex_colour):
    channels = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]


def luminance(rgb):
    return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]


def contrast(text, fill):
    high, low = sorted((luminance(linear(text)), luminance(linear(fill))), reverse=True)
    return (high + 0.05) / (low + 0.05)


def simulated(hex_colour, matrix):
    rgb = linear(hex_colour)
    return [min(1.0, max(0.0, sum(m * c for m, c in zip(row, rgb, strict=True)))) for row in matrix]


def cielab(rgb):
    x = (0.4124 * rgb[0] + 0.3576 * rgb[1] + 0.1805 * rgb[2]) / 0.95047
    y = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    z = (0.0193 * rgb[0] + 0.1192 * rgb[1] + 0.9505 * rgb[2]) / 1.08883
    fx, fy, fz = (t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def distance(a, b, matrix):
    return sum((p - q) ** 2 for p, q in zip(cielab(simulated(a, matrix)), cielab(simulated(b, matrix)),
                                            strict=True)) ** 0.5


def low_contrast(texts, backgrounds):
    return {(t, f): round(contrast(tc, fc), 2) for t, tc in texts.items() for f, fc in backgrounds.items()
            if contrast(tc, fc) < MIN_CONTRAST}


def close_fills(fills):
    return {(vision, a, b): round(distance(fills[a], fills[b], matrix), 1)
            for vision, matrix in MACHADO.items() for a, b in itertools.combinations(fills, 2)
            if distance(fills[a], fills[b], matrix) < MIN_DISTANCE}


def test_every_text_reads_on_every_fill():
    assert low_contrast(TEXTS, BACKGROUNDS) == {}


def test_fills_stay_apart_for_each_colour_vision():
    assert close_fills(FILLS) == {}


def test_every_colour_in_dot_is_checked():
    """A colour added to dot.py without joining TEXTS or BACKGROUNDS fails here."""
    used = set(re.findall(r'"(#[0-9a-fA-F]{6})"', Path(dot.__file__).read_text()))
    border = "#546e7a"                       # box outlines and arrows: not behind or under any text
    assert used - {border} == set(TEXTS.values()) | set(BACKGROUNDS.values())
