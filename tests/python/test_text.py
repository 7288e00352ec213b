"""The text tells the truth (issue 11, item 7): lists of algorithms, the README's file lists,
citations of the seed papers, and the README's measured BBR-at-5%-loss figure."""

from __future__ import annotations

import json
import re

import pytest

import ccsim
from ccsim.cli import cli
from ccsim.experiments.catalogue import BY_ID, CATALOGUE

from _support import REPO, base_scenario

README = (REPO / "README.md").read_text(encoding="utf-8")
NAMES = [a["name"] for a in ccsim.algorithms()]

# The seed papers' tags and a surname of their authors (docs/references.md).
SEED_AUTHORS = {"000": "Atsuta", "001": "Atsuta", "002": "Utsumi", "003": "Utsumi", "004": "Katsumata"}


def _text_files():
    for pattern in ("README.md", "docs/*.md", "examples/*.toml", "python/ccsim/**/*.py",
                    "python/ccsim/*.pyi", "crates/*/src/**/*.rs"):
        yield from REPO.glob(pattern)


def test_readme_algorithm_table_is_the_registry():
    rows = re.findall(r"^\| `([a-z0-9+-]+)` \|", README, flags=re.M)
    assert sorted(rows) == sorted(NAMES)


def test_every_list_of_algorithm_names_is_complete():
    """A list that starts like the registry either names every algorithm or ends in '...'."""
    found = 0
    for path in _text_files():
        text = " ".join(path.read_text(encoding="utf-8").split())  # join wrapped lines
        for m in re.finditer(r"newreno, cubic, bbr((?:, [a-z0-9+-]+)*)(, \.\.\.)?", text):
            found += 1
            if m.group(2):
                continue
            listed = ["newreno", "cubic", "bbr"] + [n.strip() for n in m.group(1).split(",") if n.strip()]
            assert sorted(listed) == sorted(NAMES), f"{path.relative_to(REPO)}: {m.group(0)!r}"
        # Quoted lists too (`"newreno", "cubic" or "bbr"`).
        assert not re.search(r'cubic\\?" or \\?"bbr', text), path.relative_to(REPO)
    assert found > 0


def test_readme_unknown_algorithm_example_is_the_real_message():
    sc = base_scenario()
    sc["flows"] = [{"cc": "cubicc"}]
    with pytest.raises(ValueError) as err:
        ccsim._core.validate(json.dumps(sc))
    readme = " ".join(README.split())
    assert f"Example: `{err.value}`" in readme


def test_readme_lists_every_file_run_out_writes(tmp_path, write_scenario, runner):
    out = tmp_path / "out"
    res = runner.invoke(cli, ["run", str(write_scenario(base_scenario())), "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    written = sorted(p.name for p in out.iterdir())
    bullet = " ".join(README.split("- **`--out DIR`**", 1)[1].split("\n- ", 1)[0].split())
    for name in written:
        assert f"`{name}`" in bullet, name
    # The command's help and its own message name them too.
    for name in written:
        assert name in res.stdout


def test_seed_papers_are_cited_by_author_where_named():
    refs = (REPO / "docs" / "references.md").read_text(encoding="utf-8")
    for tag, author in SEED_AUTHORS.items():
        assert author in refs
    for m in re.finditer(r"seeds? (00[0-4])", README):
        before = README[max(0, m.start() - 300):m.start()]
        assert SEED_AUTHORS[m.group(1)] in before, f"README names seed {m.group(1)} without its authors: {README[m.start() - 80:m.end()]!r}"
    for e in CATALOGUE:
        for tag in re.findall(r"seed (00[0-4])", e.source):
            assert SEED_AUTHORS[tag] in e.source, (e.id, e.source)


def test_no_reference_to_files_outside_the_repository():
    for path in _text_files():
        text = path.read_text(encoding="utf-8")
        assert "experiments.md" not in text, path.relative_to(REPO)


def test_readme_bbr_at_5_percent_loss_matches_the_code():
    """README: 'With RFC 6675 alone, BBR's goodput at 5% loss would be X Mbps instead of Y'
    (e5-cardwell's set-up, its two seeds); the catalogue's set-up text gives the same."""
    base = BY_ID["e5-cardwell"].base

    def mean_goodput(recovery: str) -> float:
        vals = []
        for seed in (1, 2):
            sc = ccsim.Scenario.from_dict(base).replace("flows.0.cc", "bbr").replace("bottleneck.loss", 0.05)
            sc = sc.replace("tcp.recovery", recovery)
            vals.append(ccsim.run(sc, seed=seed).flows[0]["throughput_mbps"])
        return sum(vals) / len(vals)

    rfc, rack = round(mean_goodput("rfc6675")), round(mean_goodput("rack"))
    readme = " ".join(README.split())
    assert f"BBR's goodput at 5% loss would be {rfc} Mbps instead of {rack}" in readme
    assert f"BBR falls from {rack} to {rfc} Mbps at 5% loss" in BY_ID["e5-cardwell"].setup
