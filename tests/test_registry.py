"""Each scorer is declared once (``scorers/<name>/declaration.py``) and listed once (``scorers.registry``):
every list of scorers in the package is the registry's, and a scorer's name is not spelt out again elsewhere
(outside its own folder and the places allowed below, each with its reason)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from audioreason.scorers.registry import DECLARATIONS, JUDGED, NAMES, SCORERS, SECTIONS, declaration, owner

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "audioreason"

# Names checked for spreading. "aria" is also ARIA's own value in every result and item row, an extraction
# rule and the aria_cot template's prefix, and "text_prior" the text-prior decomposition's result key: as
# strings they are not only the scorer's name, so the consumer tests below check them instead.
CHECKED = ("mmar_rubrics", "audiospan_rubric", "anchor_chain", "text_prior_decomposition")
# Files outside a scorer's folder that may name it, and why.
ALLOWED: dict[str, tuple[str, str]] = {
    "audioreason/apps/shells.py": (
        "anchor_chain audiospan_rubric text_prior_decomposition",
        "COMBINATIONS and APPLICABLE: the pairs of evaluate modules that score one run together and the rows each "
        "scores there, relations of two scorers",
    ),
    "audioreason/apps/spaces.py": (
        "mmar_rubrics audiospan_rubric anchor_chain text_prior_decomposition",
        "each metric Space's requirements and weights (test_metric_spaces_are_the_registry_s below)",
    ),
    "audioreason/apps/demo.py": ("mmar_rubrics", "the demo's fixture rows read the sections they print"),
    "audioreason/analysis/compare.py": (
        "mmar_rubrics audiospan_rubric anchor_chain",
        "layer 7, below the registry: the paired comparison reads each section's per-item values by name",
    ),
    "audioreason/analysis/judge_swap.py": (
        "mmar_rubrics audiospan_rubric",
        "layer 7, below the registry: the judged sections it re-judges",
    ),
    "audioreason/analysis/report.py": (
        "mmar_rubrics",
        "layer 7, below the registry: the validity report's measures of MMAR-Rubrics",
    ),
    "audioreason/report/build.py": (
        "mmar_rubrics",
        "VALIDITY_SCORERS: the sections whose measures analysis.validity_report (layer 7) reads",
    ),
    "audioreason/report/tables.py": (
        "mmar_rubrics audiospan_rubric anchor_chain",
        "the report's renderers of the scorers' tables (report code, named by the declarations)",
    ),
    "audioreason/report/figures.py": (
        "mmar_rubrics audiospan_rubric anchor_chain",
        "the report's renderers of the scorers' figures (report code, named by the declarations)",
    ),
    "audioreason/report/scale.py": (
        "mmar_rubrics audiospan_rubric text_prior_decomposition",
        "results written on the old percentage scale, by the scorer that wrote them",
    ),
    "audioreason/report/leaderboard.py": (
        "mmar_rubrics audiospan_rubric anchor_chain text_prior_decomposition",
        "the explorer's leaderboard: each scorer's headline read from its section's result keys",
    ),
    "audioreason/report/item_table.py": (
        "mmar_rubrics audiospan_rubric anchor_chain",
        "the explorer's item table: each scorer's per-item verdict read from its item row's keys",
    ),
    "audioreason/report/item_page.py": (
        "mmar_rubrics audiospan_rubric",
        "the explorer's item page: the rubric verdicts of each judged scorer",
    ),
}


def _string_constants(path: Path) -> set[str]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _spelt_out() -> dict[str, set[str]]:
    """Package file (relative) -> the checked names it holds as a string literal, outside their own folder."""
    folders = {d.name: f"audioreason/scorers/{d.folder}/" for d in DECLARATIONS}
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        names = {n for n in _string_constants(path) & set(CHECKED) if not where.startswith(folders[n])}
        if names:
            found[where] = names
    return found


def test_a_scorer_s_name_is_spelt_out_only_in_its_folder_and_the_allowed_places():
    found = _spelt_out()
    spread = {f: sorted(n) for f, n in found.items() if not n <= set(ALLOWED.get(f, ("", ""))[0].split())}
    assert spread == {}, (
        "a scorer's name spelt out again: read it from its declaration (scorers.registry), or "
        f"add the file to ALLOWED with the reason: {spread}"
    )
    stale = {
        f: sorted(set(names.split()) - found.get(f, set()))
        for f, (names, _) in ALLOWED.items()
        if set(names.split()) - found.get(f, set())
    }
    assert stale == {}, f"ALLOWED names files or names that no longer spell a scorer out; remove them: {stale}"


def test_the_check_finds_a_spelt_out_name(tmp_path):
    source = tmp_path / "m.py"
    source.write_text('SCORERS = ("accuracy", "anchor_chain")\nNOTE = "anchor_chain is fine inside prose"\n')
    assert _string_constants(source) & set(CHECKED) == {"anchor_chain"}


def test_the_registry_lists_each_scorer_once_with_its_folder():
    assert NAMES == ("aria", "mmar_rubrics", "audiospan_rubric", "anchor_chain", "text_prior_decomposition")
    assert SCORERS == ("accuracy", *NAMES)
    assert SECTIONS == (
        "accuracy",
        "aria",
        "perturbations",
        "mmar_rubrics",
        "audiospan_rubric",
        "anchor_chain",
        "text_prior_decomposition",
    )
    assert JUDGED == ("mmar_rubrics", "audiospan_rubric")
    for d in DECLARATIONS:
        folder = PACKAGE / "scorers" / d.folder
        assert {"formulas.py", "scorer.py", "declaration.py"} <= {p.name for p in folder.iterdir()}, d.name
        assert d.score.__module__ == f"audioreason.scorers.{d.folder}.declaration", d.name
        assert owner(d.name) is d and declaration(d.name) is d
    assert owner("perturbations") is declaration("aria") and owner("accuracy") is None
    with pytest.raises(ValueError, match="unknown scorer 'nope': choose from accuracy, aria, mmar_rubrics"):
        declaration("nope")


def test_the_shells_columns_and_options_are_the_declarations():
    from audioreason.apps import shells

    assert list(shells.INPUTS) == list(NAMES) and list(shells.OPTIONS) == list(NAMES)
    for d in DECLARATIONS:
        assert list(shells.INPUTS[d.name]) == list(d.inputs)
        assert shells.OPTIONS[d.name][: len(d.options)] == d.options
    assert shells.INPUTS["anchor_chain"]["link_position"] == shells._INT
    assert "m3_mode" in shells.options("aria") and "judge_model" in shells.options("audiospan_rubric")
    assert "max_reasks" in shells.options("mmar_rubrics") and "max_reasks" not in shells.options("anchor_chain")


def test_the_shipped_modules_are_the_registry_s():
    import audioreason

    folders = sorted(p.name for p in (ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file())
    assert folders == sorted(NAMES)
    for name in NAMES:
        assert Path(audioreason.metric_path(name), f"{name}.py").is_file()
        module = (ROOT / "metrics" / name / f"{name}.py").read_text(encoding="utf-8")
        assert f'SCORER = "{name}"' in module, name
    with pytest.raises(ValueError, match=r"unknown metric 'accuracy': one of \['aria', 'mmar_rubrics'"):
        audioreason.metric_path("accuracy")


def test_metric_spaces_are_the_registry_s():
    from audioreason.apps.spaces import APPS

    assert [a.name for a in APPS.values() if a.folder.startswith("metrics/")] == list(NAMES)
    assert all(APPS[name].folder == f"metrics/{name}" for name in NAMES)


def test_scoring_the_table_and_the_report_read_the_registry():
    from audioreason.evaluation import table
    from audioreason.evaluation.score import parse_scorers
    from audioreason.report import build, figures, load, tables

    assert list(table._ROW_BUILDERS) == list(SECTIONS)
    assert load.SCORERS == SECTIONS and list(build.SECTION_TITLES) == list(SECTIONS)
    assert build.SECTION_TITLES["perturbations"] == "CoT perturbations"
    named = [(s.name, t) for d in DECLARATIONS for s in d.results for t in s.tables]
    assert [(s, make.__name__) for s, make in tables.TABLES] == [("accuracy", "accuracy_table"), *named]
    drawn = {(s.name, f) for d in DECLARATIONS for s in d.results for f in s.figures}
    assert {(s, draw.__name__) for s, draw in figures.FIGURES} == {("accuracy", "accuracy_bars"), *drawn}
    assert set(tables.RENDERERS) == {t for _, t in named} and set(figures.RENDERERS) == {f for _, f in drawn}
    with pytest.raises(ValueError, match="choose auto or from " + re.escape(", ".join(SCORERS))):
        parse_scorers(["nope"])


def test_score_scorers_help_lists_the_registry():
    import argparse

    from audioreason.cli.score_args import add_score_arguments

    parser = argparse.ArgumentParser()
    add_score_arguments(parser)
    (action,) = [a for a in parser._actions if a.dest == "scorers"]
    assert action.help.endswith(", ".join(SCORERS))


@pytest.mark.parametrize(
    "result, scorer",
    [
        ({"text_prior": {}, "decomposition": {}}, "text_prior_decomposition"),
        ({"chain": 0.5, "random_chain": 0.1}, "anchor_chain"),
        ({"accuracy": 0.5, "random_accuracy": 0.25}, "anchor_chain"),
        ({"rubrics": 0.4, "accuracy": 0.6}, "mmar_rubrics"),
        ({"rubric": 0.4, "semantic": 0.5}, "audiospan_rubric"),
        ({"M1": 0.3, "accuracy": 0.5}, "aria"),
        ({"perturbations": []}, "perturbations"),
        ({"accuracy": 0.5}, "accuracy"),
        ({"something": 1}, None),
    ],
)
def test_a_bare_result_is_told_by_its_declaration(result, scorer):
    from audioreason.report.load import detect_scorer

    assert detect_scorer(result) == scorer


def test_a_section_that_names_no_table_is_reported_with_its_printed_rows():
    from audioreason.evaluation.rows import Row
    from audioreason.report.load import Entry
    from audioreason.report.tables import rows_table
    from audioreason.scorers.declare import Results

    def rows(entry, label):
        return [
            Row(label("sixth: mean"), entry["mean"], entry["n"], "judge-free", interval=entry["uncertainty"]["mean"]),
            Row(label("sixth: spread"), None, entry["n"], "not computed"),
        ]

    make = rows_table(Results("sixth", "A sixth scorer", rows))
    entry = Entry(
        "sixth", {"mean": 0.625, "n": 8, "uncertainty": {"mean": {"ci95": [0.3, 0.9]}}}, "m", "mmar", "full", "plain"
    )
    table = make([entry])
    assert (table.key, table.title) == ("sixth", "A sixth scorer")
    assert table.rows == [
        ["m on mmar [full/plain]", "sixth: mean", "0.6250", "[0.3000, 0.9000]", "8", "judge-free"],
        ["m on mmar [full/plain]", "sixth: spread", "n/a", "-", "8", "not computed"],
    ]
