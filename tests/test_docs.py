"""The documentation site (mkdocs.yml, docs/): it builds with warnings as errors, the Python examples on its
pages run offline and print what the page says they print, the `audioreason ...` shell examples name real
subcommands and flags, the test names the reliability table cites exist, and nothing points outside the
repository (the developers' shared folder, their machine's paths)."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_data_standalone import OUTSIDE

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
NO_RUN = re.compile(r"<!--\s*no-run:\s*(.*?)\s*-->")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")


def blocks(path: Path) -> list[dict]:
    """The fenced code blocks of a Markdown file: language, text, first line, the no-run reason written just
    before it (a `<!-- no-run: reason -->` line) and the prose between it and the previous block."""
    found, lines, i, prose = [], path.read_text(encoding="utf-8").splitlines(), 0, []
    while i < len(lines):
        start = FENCE.match(lines[i])
        if not start:
            prose.append(lines[i])
            i += 1
            continue
        indent, j = len(start["indent"]), i + 1
        while not (lines[j].strip() == "```" and len(lines[j]) - len(lines[j].lstrip()) == indent):
            j += 1
        before = [line for line in prose if line.strip()]
        marker = NO_RUN.fullmatch(before[-1].strip()) if before else None
        found.append(
            {
                "lang": start["lang"],
                "line": i + 1,
                "prose": "\n".join(before),
                "text": "\n".join(line[indent:] for line in lines[i + 1 : j]) + "\n",
                "no_run": marker.group(1) if marker else None,
            }
        )
        prose, i = [], j + 1
    return found


def python_examples() -> list[dict]:
    """Every ```python block to run, with the output the page shows after it ("prints" and a plain block)."""
    examples = []
    for page in PAGES:
        found = blocks(page)
        for n, block in enumerate(found):
            if block["lang"] != "python" or block["no_run"] is not None:
                continue
            after = found[n + 1] if n + 1 < len(found) else None
            expected = after["text"] if after and after["lang"] == "" and after["prose"].strip() == "prints" else None
            examples.append(
                {"where": f"{page.relative_to(ROOT)}:{block['line']}", "code": block["text"], "expected": expected}
            )
    return examples


RUNNER = r"""
import contextlib, io, json, os, sys, traceback
examples, results = json.load(sys.stdin), []
for n, example in enumerate(examples):
    folder = os.path.join(os.getcwd(), f"example-{n}")  # each example in its own empty folder
    os.makedirs(folder)
    os.chdir(folder)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(example["code"], example["where"], "exec"), {"__name__": "__main__"})
        error = None
    except BaseException:
        error = traceback.format_exc(limit=4)
    results.append({"stdout": out.getvalue(), "error": error})
    os.chdir("..")
print(json.dumps(results))
"""


def test_the_site_builds_strictly(tmp_path):
    """`mkdocs build --strict`: a broken link or anchor, a page missing from the nav, an API reference that does
    not resolve, each fails the build."""
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    for page in PAGES:  # every page became HTML
        rel = page.relative_to(DOCS).with_suffix("")
        html = site / ("index.html" if rel.name == "index" else rel / "index.html")
        assert html.is_file(), f"{page} was not built"
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert (
        "audioreason.text.cot.parse_cot" in api and "Never raises: garbage gives an empty parse" in api
    )  # its docstring


def test_the_python_examples_run_and_print_what_the_pages_say(tmp_path):
    examples = python_examples()
    assert len(examples) >= 8  # the runnable ones; the no-run ones are counted below
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HF_MODULES_CACHE": str(tmp_path / "hf" / "modules"),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(examples),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for example, result in zip(examples, json.loads(done.stdout.splitlines()[-1])):
        assert result["error"] is None, f"{example['where']}:\n{result['error']}"
        if example["expected"] is not None:
            assert result["stdout"] == example["expected"], f"{example['where']} printed {result['stdout']!r}"


def test_the_examples_that_do_not_run_say_why_and_are_few():
    skipped = [(page, b) for page in PAGES for b in blocks(page) if b["lang"] == "python" and b["no_run"] is not None]
    assert all(len(b["no_run"]) > 15 for _, b in skipped), "a no-run example needs its reason"
    assert len(skipped) <= 6, [f"{p.name}:{b['line']}" for p, b in skipped]


def _commands(text: str) -> list[list[str]]:
    """The `audioreason ...` command lines in a shell block (continuations joined, comments dropped)."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:  # a heredoc body or prose, not a command
            continue
        command: list[str] = []
        for word in words + ["&&"]:
            if word in ("&&", "||", "|", ";"):
                if command and (command[0] == "audioreason" or command[0].endswith("/audioreason")):
                    commands.append(command)
                command = []
            else:
                command.append(word)
    return commands


def _check_command(parser, words: list[str]) -> None:
    """Descend the subcommands the words name; every flag given must be one of that parser's options."""
    import argparse

    for word in words[1:]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            break
        parser = subs[0].choices[word]
    assert parser.format_help()  # its --help exists
    for word in words[1:]:
        if word.startswith("-") and word != "-" and not re.fullmatch(r"-\d.*", word):
            flag = word.split("=", 1)[0]
            assert flag in parser._option_string_actions, f"{' '.join(words)}: {parser.prog} has no {flag}"


def test_the_shell_examples_name_real_subcommands_and_flags():
    from audioreason.cli import build_parser

    parser, checked = build_parser(), 0
    for page in PAGES + [ROOT / "README.md"]:
        for block in blocks(page):
            if block["lang"] == "python":
                continue
            for words in _commands(block["text"]):
                _check_command(parser, words)
                checked += 1
    assert checked >= 15


def test_a_misspelt_flag_in_an_example_would_fail():
    """The check above can fail: a flag `run` does not have, and one that belongs to another subcommand."""
    from audioreason.cli import build_parser

    parser = build_parser()
    for words in (["audioreason", "run", "--modle", "x"], ["audioreason", "score", "runs/a", "--tb-model", "x"]):
        with pytest.raises(AssertionError, match="has no"):
            _check_command(parser, words)
    assert _commands("audioreason score runs/q2a --scorers aria \\\n    --compat  # a comment\n") == [
        ["audioreason", "score", "runs/q2a", "--scorers", "aria", "--compat"]
    ]


@functools.lru_cache(maxsize=None)
def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_the_tests_the_pages_cite_exist():
    """`test_x.py::test_name` (and `::test_other` after it, in the same file) in the reliability table and
    elsewhere name real test functions."""
    cited = 0
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            current = None
            for file, name in re.findall(r"(?:tests/)?(test_\w+\.py)?::(test_\w+)", line):
                current = file or current
                assert current, f"{page.name}: ::{name} without a file before it"
                path = ROOT / "tests" / current
                assert path.is_file(), f"{page.name}: {current} does not exist"
                assert name in _test_names(path), f"{page.name}: {current}::{name} does not exist"
                cited += 1
    assert cited >= 80


def test_nothing_points_outside_the_repository():
    for path in PAGES + [ROOT / "README.md", ROOT / "mkdocs.yml"]:
        text = path.read_text(encoding="utf-8")
        assert not OUTSIDE.search(text) and "/work/" not in text, path  # nor a developer machine's path
