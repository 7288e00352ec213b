"""Run specifications: :class:`RunSpec` (one run to execute and store), its content key and
the checks of seeds and tag values.

A run is identified by :attr:`RunSpec.key`, a hash of the normalised scenario, the seed, the
time-series flag and the simulation model version (``ccsim._core.MODEL_VERSION``, bumped by
any engine change that alters results); the experiment name is the partition it is stored in.
"""

from __future__ import annotations

import copy
import json
import operator
from dataclasses import dataclass, field
from typing import Any, Mapping

from .. import _core, store
from ..scenario import MAX_SEED, Scenario, ScenarioError, _short_repr, int_text

@dataclass(frozen=True)
class RunSpec:
    """One run to execute and store.

    ``experiment`` is the partition the run is stored in; ``scenario`` the full
    scenario dict (TOML structure); ``seed`` overrides the scenario's seed;
    ``tags`` become columns of the stored rows (:func:`expand` names them
    ``loss``, ``cc``, ...: :mod:`ccsim.sweep.table`; a tag given here with dots
    becomes ``bottleneck_loss``; a result column that a tag shadows is
    renamed: with a ``cc`` tag the flows' algorithm column is ``flow_cc``; a ``seed``
    tag must equal ``seed`` and is not a separate column; ``experiment``, ``key``,
    ``status`` and ``error`` cannot be tags);
    ``timeseries`` also stores the time series and algorithm events.
    """

    experiment: str
    scenario: dict
    seed: int
    tags: Mapping[str, Any] = field(default_factory=dict)
    timeseries: bool = False

    def __post_init__(self) -> None:
        store.check_experiment(self.experiment)
        scenario = self.scenario
        if isinstance(scenario, Scenario):
            scenario = scenario.to_dict()
        elif isinstance(scenario, Mapping):
            scenario = copy.deepcopy(dict(scenario))
        else:
            raise TypeError(f"RunSpec.scenario: expected a dict or Scenario; got {type(scenario).__name__}")
        object.__setattr__(self, "scenario", scenario)
        seed = _as_seed(self.seed, "RunSpec.seed")
        object.__setattr__(self, "seed", seed)
        if not isinstance(self.tags, Mapping):
            raise TypeError(f"RunSpec.tags: expected a mapping; got {type(self.tags).__name__}")
        tags = {}
        for name, value in self.tags.items():
            if not isinstance(name, str) or not name:
                raise TypeError(f"RunSpec.tags: tag names must be non-empty strings; got {name!r}")
            tags[name] = _plain(value)
        if "seed" in tags and tags["seed"] != seed:
            raise ValueError(f"RunSpec.tags: tag 'seed' = {tags['seed']!r} differs from seed = {seed}")
        store.tag_columns(tags)  # raises if two tags share a column
        object.__setattr__(self, "tags", tags)
        object.__setattr__(self, "timeseries", bool(self.timeseries))

    def __hash__(self) -> int:
        return hash((self.experiment, self.key))

    @property
    def key(self) -> str:
        """sha256 of the canonical JSON of {normalised scenario, seed, timeseries, model version},
        16 hex digits."""
        cached = self.__dict__.get("_key")
        if cached is None:
            cached = _key(self._normalized, self.seed, self.timeseries, self._cc_hashes)
            object.__setattr__(self, "_key", cached)
        return cached

    @property
    def _twin_key(self) -> str:
        """The key of the same run with the other ``timeseries`` flag."""
        return _key(self._normalized, self.seed, not self.timeseries, self._cc_hashes)

    @property
    def _cc_hashes(self) -> dict[str, str]:
        """Content hash of each Python algorithm the scenario names (none for built-ins)."""
        from .. import cc

        return cc.hashes_for(self.scenario)

    @property
    def _normalized(self) -> Any:
        """The scenario as normalised by the core (defaults filled, seed set); for an
        invalid scenario the scenario as given (its run will fail and be recorded)."""
        cached = self.__dict__.get("_norm")
        if cached is None:
            data = dict(self.scenario)
            data["seed"] = self.seed
            try:
                cached = json.loads(_core.validate(Scenario.from_dict(data).to_json()))
            except (ValueError, ScenarioError):
                cached = {"invalid-scenario": store.jsonable(data)}
            object.__setattr__(self, "_norm", cached)
        return cached


def _key(normalized: Any, seed: int, timeseries: bool, cc_hashes: dict[str, str] | None = None) -> str:
    import hashlib

    doc = {"scenario": normalized, "seed": seed, "timeseries": bool(timeseries), "model_version": _core.MODEL_VERSION}
    if cc_hashes:  # Python algorithms: their modules' content (absent otherwise: keys unchanged)
        doc["cc_modules"] = cc_hashes
    text = json.dumps(
        doc,
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _as_seed(seed: Any, where: str) -> int:
    if isinstance(seed, bool):
        raise ScenarioError(f"{where}: expected a non-negative integer; got {_short_repr(seed)}")
    try:
        value = operator.index(seed)
    except TypeError:
        raise ScenarioError(f"{where}: expected a non-negative integer; got {_short_repr(seed)}") from None
    if not 0 <= value <= MAX_SEED:
        raise ScenarioError(f"{where}: {int_text(value)} is out of range; accepted: an integer in [0, {MAX_SEED}]")
    return value


def _plain(value: Any) -> Any:
    """numpy scalars/arrays -> Python values, tuples -> lists (tags, sweep values)."""
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):
        return _plain(value.tolist())
    if hasattr(value, "item") and callable(value.item):
        try:
            return _plain(value.item())
        except (TypeError, ValueError):
            pass
    return value

