"""Command-line and build-script errors are one line with a non-zero exit (the traceback behind --debug), and
--push-to-hub publishes a private repo unless --public is given, which prints the card's licence first.
Run from a working directory outside the repository; nothing reaches the network (a stand-in HfApi)."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from fixtures.data_helpers import mmar_records, write_mmar_raw

from audioreason import cli
from audioreason.cli import prompt
from audioreason.cli.build_script import run_build_script

CARD = Path(__file__).resolve().parents[1] / "datasets_scripts" / "mmar" / "README.md"


@pytest.fixture(autouse=True)
def outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_a_failing_command_prints_one_line_and_exits_1(monkeypatch, capsys):
    def fails(args):
        raise RuntimeError("the decoder gave up\nat frame 12\n\nwhile reading x.wav")

    monkeypatch.setattr(prompt, "prompt_command", fails)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["prompt", "Q?", "a", "b"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(
        "audioreason prompt: error: RuntimeError: the decoder gave up; at frame 12; while reading x.wav"
    )
    assert "audioreason --debug prompt" in err


def test_debug_shows_the_traceback(monkeypatch):
    monkeypatch.setattr(prompt, "prompt_command", lambda args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        cli.main(["--debug", "prompt", "Q?", "a", "b"])


def test_a_long_message_is_cut_on_one_line():
    line = cli.describe_error(ValueError("x" * 1000))
    assert "\n" not in line and line.startswith("ValueError: xxx") and line.endswith("--debug shows the whole message)")
    assert len(line) < 480


class FakeHub:
    """Records what would be sent to the Hub; ``public_repo`` makes repo_info report an existing open repo."""

    def __init__(self, capsys, public_repo=False):
        self.calls, self.capsys, self.public_repo, self.printed_before_create = [], capsys, public_repo, None

    def create_repo(self, repo_id, **kwargs):
        self.printed_before_create = self.capsys.readouterr().out
        self.calls.append(("create_repo", repo_id, kwargs))

    def repo_info(self, repo_id, **kwargs):
        self.calls.append(("repo_info", repo_id, kwargs))
        return SimpleNamespace(private=not self.public_repo)

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs))


@pytest.fixture
def raw(tmp_path):
    return write_mmar_raw(tmp_path / "raw", mmar_records()[:2])


def _build(raw, tmp_path, *extra, api=None):
    return run_build_script(
        "mmar", CARD, [str(raw), str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), *extra], api=api
    )


def test_push_is_private_by_default(raw, tmp_path, capsys):
    hub = FakeHub(capsys)
    assert _build(raw, tmp_path, "--push-to-hub", "org/mmar", api=hub) == 0
    assert hub.calls[0] == ("create_repo", "org/mmar", {"repo_type": "dataset", "private": True, "exist_ok": True})
    assert hub.calls[1][0] == "repo_info"
    upload = hub.calls[2][1]
    assert upload["repo_id"] == "org/mmar" and upload["repo_type"] == "dataset"
    assert Path(upload["folder_path"]) == (tmp_path / "out").resolve()
    out = capsys.readouterr().out
    assert "published https://huggingface.co/datasets/org/mmar (private" in out and "--public" in out
    assert "licence" not in hub.printed_before_create


def test_public_prints_the_licence_before_creating_the_repo(raw, tmp_path, capsys):
    hub = FakeHub(capsys)
    assert _build(raw, tmp_path, "--push-to-hub", "org/mmar", "--public", api=hub) == 0
    assert hub.calls[0] == ("create_repo", "org/mmar", {"repo_type": "dataset", "private": False, "exist_ok": True})
    assert [c[0] for c in hub.calls] == ["create_repo", "upload_folder"]
    before = hub.printed_before_create
    assert "readable by anyone" in before and "licence: cc-by-nc-4.0" in before
    assert "**CC BY-NC 4.0** (non-commercial use, with attribution)" in before  # the card's own section
    assert "published https://huggingface.co/datasets/org/mmar (public)" in capsys.readouterr().out


def test_an_existing_public_repo_is_not_uploaded_to_by_default(raw, tmp_path, capsys):
    hub = FakeHub(capsys, public_repo=True)
    assert _build(raw, tmp_path, "--push-to-hub", "org/mmar", api=hub) == 1
    assert "upload_folder" not in [c[0] for c in hub.calls]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PermissionError: the dataset repo org/mmar already exists and is public" in err


def test_public_needs_push_to_hub(raw, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        _build(raw, tmp_path, "--public")
    assert exit_info.value.code == 2 and "--public goes with --push-to-hub" in capsys.readouterr().err


def test_a_failed_build_is_one_line_with_the_report_written(tmp_path, capsys):
    records = mmar_records()[:3]
    raw = write_mmar_raw(tmp_path / "raw", records, skip_audio=[records[1]["id"]])
    code = _build(raw, tmp_path, "--report", str(tmp_path / "report.json"))
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("datasets_scripts/mmar/build.py: error: BenchmarkValidationError: mmar raw folder")
    assert "1 audio files are missing or unreadable" in err and records[1]["id"] in err
    assert (tmp_path / "report.json").is_file() and not (tmp_path / "out").exists()
    with pytest.raises(Exception, match="failed validation"):
        _build(raw, tmp_path, "--debug")


def test_a_full_output_folder_names_the_flag_before_any_build(raw, tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "kept.txt").write_text("x")
    assert _build(raw, tmp_path) == 1
    captured = capsys.readouterr()
    assert "records read" not in captured.out  # refused before the build
    assert captured.err.count("\n") == 1 and "is not empty; pass --overwrite to replace it" in captured.err
    assert "overwrite=True" not in captured.err
