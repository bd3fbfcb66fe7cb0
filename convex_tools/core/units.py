"""Lengths as a level designer reads them: in the scene's unit system.

Reports keep Blender units in their data (JSON, CSV, SARIF); what a person reads (messages,
tables, labels in the viewport and pictures) is in the scene's units: Blender units times
``scale_length`` are metres, shown in the scene's ``length_unit`` (or, when that is adaptive,
in the unit that suits the value, as Blender's own fields do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Metres per unit, and the unit's symbol, for Blender's length units.
LENGTH_UNITS = {
    "KILOMETERS": (1000.0, "km"), "METERS": (1.0, "m"), "CENTIMETERS": (0.01, "cm"),
    "MILLIMETERS": (0.001, "mm"), "MICROMETERS": (1e-6, "µm"),
    "MILES": (1609.344, "mi"), "FEET": (0.3048, "ft"), "INCHES": (0.0254, "in"),
    "THOU": (0.0000254, "thou"),
}
# Adaptive units: the largest whose value is at least 1 (else the smallest).
ADAPTIVE = {
    "METRIC": ("KILOMETERS", "METERS", "CENTIMETERS", "MILLIMETERS", "MICROMETERS"),
    "IMPERIAL": ("MILES", "FEET", "INCHES", "THOU"),
}
# Significant digits of a length shown to a person.
DIGITS = 3


@dataclass(frozen=True)
class Units:
    """A scene's unit settings: ``system`` (NONE, METRIC, IMPERIAL), ``scale_length`` (metres
    per Blender unit) and ``length_unit`` (one of ``LENGTH_UNITS`` or ADAPTIVE)."""

    system: str = "NONE"
    scale_length: float = 1.0
    length_unit: str = "ADAPTIVE"

    def to_dict(self) -> dict:
        return {"system": self.system, "scale_length": self.scale_length,
                "length_unit": self.length_unit}

    def format(self, value) -> str:
        """``value`` (Blender units) as text in these units, e.g. "12.3 cm"."""
        if value is None:
            return "-"
        value = float(value)
        if self.system not in ADAPTIVE:
            return significant(value)
        metres = value * self.scale_length
        unit = self.length_unit
        if unit not in LENGTH_UNITS or unit not in ADAPTIVE[self.system]:
            unit = next((u for u in ADAPTIVE[self.system]
                         if abs(metres) >= LENGTH_UNITS[u][0]), ADAPTIVE[self.system][-1])
            if metres == 0.0:
                unit = "METERS" if self.system == "METRIC" else "FEET"
        factor, symbol = LENGTH_UNITS[unit]
        return f"{significant(metres / factor)} {symbol}"


def significant(value) -> str:
    """``value`` with ``DIGITS`` significant digits, without exponent for everyday sizes."""
    if value == 0.0 or not math.isfinite(value):
        return f"{value:g}" if not math.isfinite(value) else "0"
    decimals = max(0, DIGITS - 1 - int(math.floor(math.log10(abs(value)))))
    return f"{value:.{min(decimals, 9)}f}"


PLAIN = Units()
