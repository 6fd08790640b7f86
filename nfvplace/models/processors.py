"""Processor generations: which host processor runs code built for the VM's reference model.

NFV-PER 001 clause 8.2.2.1 lets a VM name the processor model it was sized on and leaves it to the
MANO to infer which other models are suitable. nfvplace reads the model string the way
/proc/cpuinfo writes it ("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz") and finds its vendor, its line
and its generation in the small table below. A newer generation of the same line runs code built for
an older one; an older one may lack its instructions (AVX-512 before Skylake, VNNI before Cascade
Lake, AMX before Sapphire Rapids, AVX-512 on EPYC before Genoa), so it is refused.

The table (`number` orders the generations of one `family`; newer is greater):

| family | line | how the model number reads | generations |
|---|---|---|---|
| Xeon | Xeon E7 v1 | `E7-4870` | -4 Westmere-EX |
| Xeon | Xeon E5/E7 | `E5-2680 0` (v1), `E5-2690 v2`, `v3`, `v4` | -3 Sandy Bridge, -2 Ivy Bridge, -1 Haswell, 0 Broadwell |
| Xeon | Xeon Scalable | tier (Bronze, Silver, Gold, Platinum, Max) then 4 digits; the 2nd digit is the generation | 1 Skylake, 2 Cascade Lake, 3 Ice Lake (x3xxH/HL: Cooper Lake), 4 Sapphire Rapids, 5 Emerald Rapids |
| Xeon | Xeon Scalable | `Xeon 6xxxP` / `6xxxE` (no tier) | 6 Granite Rapids (P) / Sierra Forest (E) |
| Xeon D | Xeon D | `D-15xx`, `D-16xx`; `D-21xx`; `D-17xx`, `D-18xx`, `D-27xx`, `D-28xx` | 1 Broadwell-DE, 2 Skylake-D, 3 Ice Lake-D |
| EPYC | EPYC | 4 digits, the last one is the generation (7xx1 ... 9xx5, 8xx4, 4xx4, 4xx5) | 1 Naples, 2 Rome, 3 Milan, 4 Genoa (97x4 Bergamo, 8xx4 Siena, 4xx4 Raphael), 5 Turin (4xx5 Grado) |
| Ampere | Ampere | `Altra Q80-30`, `Altra Max M128-30`; `AmpereOne A192-32X` | 1 Altra / Altra Max, 2 AmpereOne |

Any other model (Xeon E3, Core, Westmere-EP X56xx, EPYC Embedded, virtual CPUs, a bare
"Intel(R) Xeon(R) CPU") has no known generation: it is then matched by family name, the words of the
model name before the first word with a digit (`model_family`), as before the table existed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

EXACT, LISTED, SAME_LINE = 0, 1, 2
"""Ranks of `match_rank`: the reference model itself, one of `compatible_models`, and a model of the
same line and a generation no older than the reference's (or of the same family name)."""

_NOISE = re.compile(r"\(r\)|\(tm\)|\bcpu\b|\bprocessor\b|@.*$")
_DISPLAY_NOISE = re.compile(r"\((?:r|tm)\)|\bcpu\b|\bprocessor\b|@.*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Generation:
    """Where a processor model sits: `number` orders the generations of one `family`."""

    vendor: str  # Intel, AMD, Ampere
    family: str  # what generations are compared within: Xeon, Xeon D, EPYC, Ampere
    line: str  # as sold: Xeon Scalable, Xeon E5, Xeon D, EPYC, Ampere
    number: int  # newer is greater; below 1 for the Xeons before Skylake
    name: str  # Skylake, Milan, ...
    tag: str  # "gen 1", "v4"

    @property
    def label(self) -> str:
        """`Xeon Scalable gen 1`, `Xeon E5 v4`, `EPYC gen 3`."""
        return f"{self.line} {self.tag}"


def normalise(model: str) -> str:
    """`Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz` -> `intel xeon gold 6248`."""
    return " ".join(_NOISE.sub(" ", model.lower()).split())


def display_name(model: str) -> str:
    """The model name without trademarks, "CPU", "Processor" and the clock: `Intel Xeon Gold 6248`."""
    return " ".join(_DISPLAY_NOISE.sub(" ", model).split()) or model


def model_family(model: str) -> str:
    """`Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz` -> `intel xeon gold` (the fallback rule)."""
    family: list[str] = []
    for word in normalise(model).split():
        if any(ch.isdigit() for ch in word):
            break
        family.append(word)
    return " ".join(family)


_SCALABLE = re.compile(r"\bxeon (?:bronze|silver|gold|platinum|max) \d(\d)\d\d([a-z+]*)\b")
_XEON6 = re.compile(r"\bxeon (?:6 )?6\d{3}([a-z]*)\b")
_XEON_E = re.compile(r"\bxeon (e[57])-\s*\d{4}[a-z]*(?:\s+(v\d|0)\b)?")
_XEON_D = re.compile(r"\bxeon d-(\d\d)\d\d[a-z]*\b")
_EPYC = re.compile(r"\bepyc (\d)(\d)\d(\d)[a-z]*\b")
_AMPERE = re.compile(r"\b(ampere ?one|altra max|altra)\b")

_SCALABLE_NAMES = {
    1: "Skylake",
    2: "Cascade Lake",
    3: "Ice Lake",
    4: "Sapphire Rapids",
    5: "Emerald Rapids",
}
_XEON_E_NAMES = {  # (line, version) -> (number, name)
    ("e7", "v1"): (-4, "Westmere-EX"),
    ("e5", "v1"): (-3, "Sandy Bridge"),
    ("e5", "v2"): (-2, "Ivy Bridge"),
    ("e7", "v2"): (-2, "Ivy Bridge"),
    ("e5", "v3"): (-1, "Haswell"),
    ("e7", "v3"): (-1, "Haswell"),
    ("e5", "v4"): (0, "Broadwell"),
    ("e7", "v4"): (0, "Broadwell"),
}
_XEON_D_NAMES = {
    "15": (1, "Broadwell-DE"),
    "16": (1, "Broadwell-DE"),
    "21": (2, "Skylake-D"),
    "17": (3, "Ice Lake-D"),
    "18": (3, "Ice Lake-D"),
    "27": (3, "Ice Lake-D"),
    "28": (3, "Ice Lake-D"),
}
_EPYC_NAMES = {  # (series digit, generation digit) -> name
    ("7", "1"): "Naples",
    ("7", "2"): "Rome",
    ("7", "3"): "Milan",
    ("9", "4"): "Genoa",
    ("8", "4"): "Siena",
    ("4", "4"): "Raphael",
    ("9", "5"): "Turin",
    ("4", "5"): "Grado",
}


def _intel(text: str) -> Generation | None:
    if m := _SCALABLE.search(text):
        number = int(m.group(1))
        if number not in _SCALABLE_NAMES:
            return None
        name = _SCALABLE_NAMES[number]
        if number == 3 and m.group(2).startswith("h"):
            name = "Cooper Lake"
        return Generation("Intel", "Xeon", "Xeon Scalable", number, name, f"gen {number}")
    if m := _XEON6.search(text):
        name = {"p": "Granite Rapids", "e": "Sierra Forest"}.get(
            m.group(1)[:1], "Granite Rapids/Sierra Forest"
        )
        return Generation("Intel", "Xeon", "Xeon Scalable", 6, name, "gen 6")
    if m := _XEON_D.search(text):
        if m.group(1) not in _XEON_D_NAMES:
            return None
        number, name = _XEON_D_NAMES[m.group(1)]
        return Generation("Intel", "Xeon D", "Xeon D", number, name, f"gen {number}")
    if m := _XEON_E.search(text):
        version = "v1" if m.group(2) in (None, "0") else m.group(2)
        if (m.group(1), version) not in _XEON_E_NAMES:
            return None
        number, name = _XEON_E_NAMES[(m.group(1), version)]
        return Generation("Intel", "Xeon", f"Xeon {m.group(1).upper()}", number, name, version)
    return None


def _other(text: str) -> Generation | None:
    if m := _EPYC.search(text):
        series, digit, last = m.groups()
        name = _EPYC_NAMES.get((series, last))
        if name is None:
            return None
        if name == "Genoa" and digit == "7":
            name = "Bergamo"
        return Generation("AMD", "EPYC", "EPYC", int(last), name, f"gen {last}")
    if text.startswith("ampere") and (m := _AMPERE.search(text)):
        word = m.group(1)
        if word.startswith("ampere"):
            return Generation("Ampere", "Ampere", "Ampere", 2, "AmpereOne", "gen 2")
        return Generation("Ampere", "Ampere", "Ampere", 1, word.title(), "gen 1")
    return None


@lru_cache(maxsize=1024)
def generation(model: str) -> Generation | None:
    """The generation of a processor model string (any case), or None when the table has none."""
    text = normalise(model)
    if text.startswith("intel"):
        return _intel(text)
    return _other(text)


def supersedes(host: str, reference: str) -> bool:
    """Whether a host processor runs code built for the reference model: same vendor and family
    and a generation no older; when either generation is unknown, the same family name."""
    have, need = generation(host), generation(reference)
    if have is None or need is None:
        family = model_family(reference)
        return bool(family) and model_family(host) == family
    return (have.vendor, have.family) == (need.vendor, need.family) and have.number >= need.number


def match_rank(host: str, reference: str, compatible_models: Iterable[str] = ()) -> int | None:
    """EXACT, LISTED or SAME_LINE (see `supersedes`); None when the host is not compatible."""
    name = host.lower()
    if name == reference.lower():
        return EXACT
    if name in {m.lower() for m in compatible_models}:
        return LISTED
    return SAME_LINE if supersedes(host, reference) else None


def refusal(host: str, reference: str) -> str | None:
    """Why the host's generation cannot stand in for the reference's, when both are known."""
    have, need = generation(host), generation(reference)
    if have is None or need is None:
        return None
    what = f"processor {display_name(host)} is {have.name} ({have.label})"
    if (have.vendor, have.family) != (need.vendor, need.family):
        return f"{what}, not a {need.family} like the VM's {need.name} ({need.label})"
    if have.number < need.number:
        need_tag = need.tag if have.line == need.line else need.label
        return f"{what}; the VM needs {need.name} ({need_tag}) or newer"
    return None
