"""Counterfactuals: a failing claim's suspected cause, changed alone, and the claim checked again.

The catalogue's entries keep the paper's stated set-up; they are never changed to make a claim
pass. A counterfactual is a named variant of one entry that changes one suspected cause (a
scenario key, an algorithm parameter, a sweep over something the paper does not give, or a
second reading of the claim's words) and checks the same claims on its runs, with the entry's
repetitions. Its outcome is reported next to the claim:

- "holds when X": the claim holds with the change, so the cause is demonstrated;
- "still fails when X": the change alone does not explain the failure;
- "cannot be tested here, because ...": the change needs what ccsim cannot run.

Each counterfactual says what kind of cause it tests (:data:`KINDS`), so that the report can
count the failing claims whose cause is demonstrated outside ccsim (a reading of the paper or
its test bed) apart from those whose cause lies in ccsim or is unexplained.

A counterfactual's runs are stored as experiment ``ENTRY+ID`` (e.g. ``e1-fig6+no-delayed-ack``).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from .claims import Claim, Data, Verdict

if TYPE_CHECKING:  # the catalogue imports this module
    from .catalogue import Experiment

#: What a counterfactual's change stands for.
KINDS = {
    "reading": "another reading of the paper's words (the claim's threshold or what it compares)",
    "setup": "a set-up detail the paper does not state, or states differently from its test bed",
    "testbed": "a mechanism of the paper's test bed or simulator that ccsim's default model leaves out",
    "ccsim": "a mechanism of ccsim's own model (a cause inside ccsim)",
}


@dataclass(frozen=True)
class Counterfactual:
    #: Short name; the runs are stored as experiment ``ENTRY+id``.
    id: str
    #: The change, as it reads after "holds when" / "still fails when".
    change: str
    #: The claims of the entry it checks again.
    claims: tuple[str, ...]
    #: One of :data:`KINDS`.
    kind: str
    #: Scenario fields set on every run (dotted paths as in a sweep: ``"tcp.delayed_ack"``).
    set: Mapping[str, Any] = field(default_factory=dict)
    #: Algorithm parameters added to every flow running that algorithm ({"ucc": {...}}).
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: A sweep table replacing the entry's (full mode; quick mode too unless ``quick_sweep``).
    sweep: Mapping[str, Any] | None = None
    quick_sweep: Mapping[str, Any] | None = None
    #: Checks replacing the entry's, by claim id (another reading of the same claim).
    checks: Mapping[str, Callable[[Data], Verdict]] = field(default_factory=dict)
    #: Non-empty: the change cannot be run here, and this says why (no runs are made).
    untestable: str = ""
    #: Whether the paper's own set-up would have had this change, and anything else to know.
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"counterfactual {self.id}: kind {self.kind!r}; accepted: {', '.join(KINDS)}")

    @property
    def makes_runs(self) -> bool:
        return not self.untestable and bool(self.set or self.params or self.sweep is not None
                                            or self.quick_sweep is not None)

    def apply(self, scenario: dict) -> dict:
        """The run's scenario with this change."""
        from ..scenario import Scenario

        sc = Scenario.from_dict(scenario)
        for path, value in self.set.items():
            sc = sc.replace(path, value)
        out = sc.to_dict()
        for f in out.get("flows", []):
            if isinstance(f, dict) and f.get("cc") in self.params:
                f["params"] = {**f.get("params", {}), **copy.deepcopy(dict(self.params[f["cc"]]))}
        return out


def derived_id(entry: str, cf: Counterfactual) -> str:
    return f"{entry}+{cf.id}"


def derive(e: "Experiment", cf: Counterfactual, by_id: Mapping[str, "Experiment"]) -> "Experiment":
    """The catalogue entry for ``cf`` of entry ``e``: the runs of ``e`` (or of the entry whose
    runs it reads) with the change, and the claims ``cf`` names with their checks. A change of
    reading only (no scenario change) reads ``e``'s own runs."""
    from .catalogue import Variant

    by_claim = {c.id: c for c in e.claims}
    unknown = [c for c in cf.claims if c not in by_claim]
    if unknown:
        raise ValueError(f"counterfactual {e.id}+{cf.id}: no claim {unknown[0]!r} in {e.id}")
    claims = [Claim(c, by_claim[c].text, cf.checks.get(c, by_claim[c].check), by_claim[c].if_fails) for c in cf.claims]
    # A needed entry with a counterfactual of the same id is read under the same change.
    needs = tuple(derived_id(n, cf) if any(x.id == cf.id for x in by_id[n].counterfactuals) else n for n in e.needs)
    new_id = derived_id(e.id, cf)
    if not cf.makes_runs:
        return dataclasses.replace(e, id=new_id, claims=claims, needs=needs, runs_from=e.data_id,
                                   counterfactuals=(), transform=None)
    if e.runs_from and any(x.id == cf.id and x.makes_runs for x in by_id[e.runs_from].counterfactuals):
        # The entry whose runs this one reads has the same counterfactual: read its runs.
        return dataclasses.replace(e, id=new_id, claims=claims, needs=needs, runs_from=derived_id(e.runs_from, cf),
                                   counterfactuals=(), transform=None)
    src = by_id[e.data_id]
    full_sweep = cf.sweep if cf.sweep is not None else src.full.sweep
    quick_sweep = cf.quick_sweep if cf.quick_sweep is not None else (cf.sweep if cf.sweep is not None else src.quick.sweep)
    return dataclasses.replace(
        e, id=new_id, claims=claims, needs=needs, runs_from=None, base=copy.deepcopy(src.base),
        full=Variant(full_sweep, src.full.runs, src.full.duration),
        quick=Variant(quick_sweep, src.quick.runs, src.quick.duration),
        timeseries=src.timeseries, counterfactuals=(), transform=cf.apply,
    )


def outcome_text(status: str, cf: Counterfactual) -> str:
    if status == "PASS":
        return f"holds when {cf.change}"
    if status == "FAIL":
        return f"still fails when {cf.change}"
    if status == "UNTESTABLE":
        return f"cannot be tested here, because {cf.untestable}"
    return f"could not be checked when {cf.change}"
