"""Translate the kubelet's Topology Manager policy tests into `cases.json`, mechanically.

    python translate.py DIR > cases.json

DIR is `pkg/kubelet/cm/topologymanager` of k8s.io/kubernetes (v1.34.2 here: `go mod download
k8s.io/kubernetes@v1.34.2`). The test tables are Go composite literals; this reads the few forms
they use (struct and map literals, `NewTestBitMask(...)`, `nil`, booleans, strings, numbers) and
writes them as JSON, so that tests/integrations/test_kubernetes_hints.py checks nfvplace's port
against the kubelet's own expectations, case by case.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

TOKEN = re.compile(
    r'\s+|//[^\n]*|/\*.*?\*/|(?P<str>"(?:\\.|[^"\\])*"|`[^`]*`)|(?P<num>-?\d+)'
    r"|(?P<id>[A-Za-z_][A-Za-z_0-9]*)|(?P<op>\.\.\.|[{}()\[\],:&.*])",
    re.S,
)


def tokens(text: str) -> list[tuple[str, str]]:
    out = []
    for match in TOKEN.finditer(text):
        kind = match.lastgroup
        if kind is not None:
            out.append((kind, match.group(kind)))
    return out


class Parser:
    def __init__(self, toks: list[tuple[str, str]], numa: list[int]) -> None:
        self.toks, self.i, self.numa = toks, 0, numa

    def peek(self, k: int = 0) -> str:
        return self.toks[self.i + k][1] if self.i + k < len(self.toks) else ""

    def take(self, want: str | None = None) -> str:
        value = self.toks[self.i][1]
        if want is not None and value != want:
            raise ValueError(f"expected {want!r}, got {value!r} at token {self.i}")
        self.i += 1
        return value

    def skip_type(self) -> None:
        """A type before a composite literal or a conversion: []T, [][]T, map[K]V, pkg.T, *T."""
        while self.peek() not in ("{", "(", ""):
            if self.peek() == "[":
                self.take("[")
                while self.peek() != "]":
                    self.take()
                self.take("]")
            else:
                self.take()

    def value(self) -> Any:
        if self.peek() == "&":
            self.take()
        kind, text = self.toks[self.i]
        if kind == "str":
            self.take()
            return json.loads(text) if text.startswith('"') else text[1:-1]
        if kind == "num":
            self.take()
            return int(text)
        if text == "{":
            return self.composite()
        if text in ("true", "false", "nil"):
            self.take()
            return {"true": True, "false": False, "nil": None}[text]
        if text in ("NewTestBitMask", "NewEmptyBitMask") or (
            text == "bitmask" and self.peek(2) == "NewEmptyBitMask"
        ):
            return self.bitmask()
        self.skip_type()
        if self.peek() == "(":  # a conversion such as []TopologyHint(nil)
            self.take("(")
            inner = self.value()
            self.take(")")
            return inner
        return self.composite()

    def bitmask(self) -> dict[str, list[int]]:
        while self.peek() != "(":
            self.take()
        self.take("(")
        nodes: list[int] = []
        while self.peek() != ")":
            if self.peek() == "numaNodes":
                self.take()
                self.take("...")
                nodes.extend(self.numa)
            else:
                nodes.append(int(self.take()))
            if self.peek() == ",":
                self.take()
        self.take(")")
        return {"mask": nodes}

    def composite(self) -> Any:
        self.take("{")
        keyed: dict[str, Any] = {}
        items: list[Any] = []
        while self.peek() != "}":
            if self.peek(1) == ":" and self.toks[self.i][0] in ("id", "str"):
                kind, key = self.toks[self.i]
                self.i += 2
                keyed[json.loads(key) if kind == "str" else key] = self.value()
            else:
                items.append(self.value())
            if self.peek() == ",":
                self.take()
        self.take("}")
        return keyed if keyed else items


def hint(raw: Any) -> dict[str, Any]:
    """A TopologyHint literal: keyed, positional, or {} (nil mask, not preferred)."""
    if isinstance(raw, list):
        raw = dict(zip(("NUMANodeAffinity", "Preferred"), raw, strict=False))
    mask = raw.get("NUMANodeAffinity")
    return {
        "mask": None if mask is None else mask["mask"],
        "preferred": raw.get("Preferred", False),
    }


def provider(raw: Any) -> Any:
    """A mockHintProvider literal (its one field is the map), or a provider's map itself."""
    hints = raw[0] if isinstance(raw, list) and raw else ({} if isinstance(raw, list) else raw)
    if not hints:
        return None
    return {k: None if v is None else [hint(h) for h in v] for k, v in hints.items()}


def body_of(text: str, signature: str) -> list[tuple[str, str]]:
    start = text.index(signature)
    return tokens(text[start:])


def merge_cases(text: str, signature: str, numa: list[int]) -> list[dict[str, Any]]:
    toks = body_of(text, signature)
    parser = Parser(toks, numa)
    while parser.peek() != "return":
        parser.take()
    parser.take("return")
    return [
        {
            "name": case["name"],
            "providers": [provider(p) for p in case["hp"]],
            "expected": hint(case["expected"]),
        }
        for case in parser.value()
    ]


def table(text: str, signature: str) -> list[Any]:
    parser = Parser(body_of(text, signature), [])
    while not (parser.peek() == "}" and parser.peek(1) == "{"):  # the end of the struct type
        parser.take()
    parser.take("}")
    result: list[Any] = parser.composite()
    return result


def main() -> int:
    folder = Path(sys.argv[1])
    policy = (folder / "policy_test.go").read_text()
    sources = ["policy_test.go", "policy_none_test.go", "policy_single_numa_node_test.go"]
    four = [0, 1, 2, 3]
    eight = list(range(8))
    suites: dict[str, list[dict[str, Any]]] = {
        "common/4": merge_cases(policy, "func commonPolicyMergeTestCases(", four),
        "common/8": merge_cases(policy, "func commonPolicyMergeTestCases(", eight),
        "best-effort/4": merge_cases(policy, "func (p *bestEffortPolicy) mergeTestCases(", four),
        "best-effort/8": merge_cases(policy, "func (p *bestEffortPolicy) mergeTestCases(", eight),
        "no-policies/4": merge_cases(
            policy, "func (p *bestEffortPolicy) mergeTestCasesNoPolicies(", four
        ),
        "closest/8": merge_cases(
            policy, "func (p *bestEffortPolicy) mergeTestCasesClosestNUMA(", eight
        ),
        "single-numa-node/4": merge_cases(
            policy, "func (p *singleNumaNodePolicy) mergeTestCases(", four
        ),
    }
    none = table((folder / "policy_none_test.go").read_text(), "func TestPolicyNoneMerge(")
    single = (folder / "policy_single_numa_node_test.go").read_text()
    out = {
        "source": "k8s.io/kubernetes v1.34.2, pkg/kubelet/cm/topologymanager",
        "sha256": {
            name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in sources
        },
        "merge": suites,
        "none": [
            {
                "name": c["name"],
                "providers": [provider(p) for p in c["providersHints"]],
                "expected": hint(c["expectedHint"]),
                "admit": c["expectedAdmit"],
            }
            for c in none
        ],
        "max_of_min": [
            {"hints": [[hint(h) for h in r] for r in c[0]], "expected": c[1]}
            for c in table(policy, "func TestMaxOfMinAffinityCounts(")
        ],
        "compare": [
            {
                "name": c[0],
                "best_non_preferred": c[1],
                "current": None if c[2] is None else hint(c[2]),
                "candidate": hint(c[3]),
                "expected": c[4],
            }
            for c in table(policy, "func TestCompareHintsNarrowest(")
        ],
        "single_numa_filter": [
            {
                "name": c["name"],
                "hints": [[hint(h) for h in r or []] for r in c["allResources"]],
                "expected": [[hint(h) for h in r or []] for r in c["expectedResources"] or []],
            }
            for c in table(single, "func TestPolicySingleNumaNodeFilterHints(")
        ],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
