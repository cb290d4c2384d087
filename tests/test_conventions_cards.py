"""The metric cards carry evaluate's sections with this project's specifics, their How to Use example prints what
the card says it prints, and they link to nothing outside the repository. Run outside the repository."""

import contextlib
import io
import re
from pathlib import Path

import evaluate
import pytest

import audioreason

METRICS = ("aria", "mmar_rubrics", "audiospan_rubric", "anchor_chain", "text_prior_decomposition")
SECTIONS = (
    "## How to Use",
    "### Inputs at a glance",
    "### Output Values",
    "## Score scale",
    "## Values from Popular Papers",
    "## Citation",
    "## Further References",
)  # in this order
# aria's example loads the packaged backbones (about a minute on 2 cores): its output was pasted from a run.
RUN_HERE = ("mmar_rubrics", "audiospan_rubric", "anchor_chain", "text_prior_decomposition")


@pytest.fixture(autouse=True)
def outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def card(name):
    return (Path(audioreason.metric_path(name)) / "README.md").read_text(encoding="utf-8")


def how_to_use(text):
    section = text.split("## How to Use", 1)[1]
    code, printed = re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)[:2]
    return code, printed


@pytest.mark.parametrize("name", METRICS)
def test_the_card_has_evaluates_sections_and_this_projects_specifics(name):
    text = card(name)
    positions = [text.find(s) for s in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), dict(zip(SECTIONS, positions))
    assert "## Limitations and Bias" in text
    bibtex = text.split("## Citation", 1)[1]
    assert re.search(r"```bibtex\n@\w+\{\w+,\n.*\bauthor\s*=\s*\{[^}]+\}.*\byear\s*=\s*\{20\d\d\}", bibtex, flags=re.S)
    assert "fraction in **[0, 1]**" in text  # the one scale, written in every card
    assert "| key | range | meaning |" in text and "| input | kind | type |" in text


@pytest.mark.parametrize("name", METRICS)
def test_the_card_links_to_nothing_outside_the_repository(name):
    text = card(name)
    targets = re.findall(r"\]\(([^)]+)\)", text)
    assert all(t.startswith("https://") for t in targets), targets
    assert "/work/" not in text and "shared/" not in text and "../" not in text
    assert 'evaluate.load("metrics/' not in text  # works only from the repository root


@pytest.mark.parametrize("name", METRICS)
def test_the_module_info_links_the_papers_by_their_public_address(name):
    info = evaluate.load(audioreason.metric_path(name)).info
    assert all(u.startswith("https://") for u in info.reference_urls + info.codebase_urls)
    assert name == "aria" or any("arxiv.org/abs/" in u for u in info.reference_urls)


@pytest.mark.parametrize("name", RUN_HERE)
def test_the_how_to_use_example_prints_what_the_card_shows(name):
    code, printed = how_to_use(card(name))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{name} card", "exec"), {})  # noqa: S102 - the card's own example
    assert out.getvalue() == printed
