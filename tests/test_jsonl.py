"""JSON Lines, read one way everywhere (audioreason.base.jsonl): the files' reader and the widgets' pasted records."""

import pytest

from audioreason.base.jsonl import (
    numbered_json_lines,
    parse_json_lines,
    parse_json_records,
    read_json_file,
    read_json_lines,
    read_json_objects,
)


def test_lines_blank_lines_skipped_and_a_bad_line_named(tmp_path):
    assert parse_json_lines('{"a": 1}\n\n  \n[2]\n') == [{"a": 1}, [2]]
    with pytest.raises(ValueError, match=r"^line 2 is not valid JSON \(Expecting value\)$"):
        parse_json_lines('{"a": 1}\nnope')
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"b": \n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}:2: not valid JSON"):
        read_json_lines(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "Paste at least one JSON line (one JSON object per line)."),
        ("\n  \n", "Paste at least one JSON line (one JSON object per line)."),
        (
            '{"id": "a"}\n{',
            "each line must be one JSON object: line 2 is not valid JSON (Expecting property name "
            "enclosed in double quotes)",
        ),
        ('{"id": "a", "x": 1}\n["x"]', "JSON line 2: expected an item, got a list"),
        ('{"id": "a", "x": 1}\n{"id": "b"}', "JSON line 2 (b): the field 'x' is missing (lines hold id and x)"),
        ('{"x": 1, "id": "a"}\n{"y": 2}', "JSON line 2: the field 'x' is missing (lines hold id and x)"),
    ],
)
def test_pasted_records_name_the_line(text, message):
    with pytest.raises(ValueError) as err:
        parse_json_records(text, needed=("x",), what="an item", hint="lines hold id and x")
    assert str(err.value) == message


def test_pasted_records_come_back_as_written():
    assert parse_json_records('{"x": 1}\n\n{"x": 2, "y": null}', needed=("x",)) == [{"x": 1}, {"x": 2, "y": None}]
    assert parse_json_records('{"a": 1}') == [{"a": 1}]  # no field needed


def test_a_line_ends_at_newline_only():
    # U+2028, U+2029 and U+0085 inside a string are text (json.dumps(ensure_ascii=False) writes them as is);
    # str.splitlines broke the line there and called it invalid JSON.
    text = '{"a": "x\u2028y"}\n{"b": "p\x85q\u2029r"}\r\n'
    assert parse_json_lines(text) == [{"a": "x\u2028y"}, {"b": "p\x85q\u2029r"}]


def test_lines_keep_their_numbers_and_bad_bytes_are_named(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"a": "\xc3\xa9"}\n{"a": "\xff"}\n')
    with pytest.raises(ValueError) as err:
        read_json_lines(path)
    assert str(err.value) == f"{path}:4: not valid UTF-8 (byte 0xff at column 8)"
    path.write_bytes(b'{"a": 1}\n\n["b"]\n')
    assert numbered_json_lines(path.read_bytes())[0] == [(1, {"a": 1}), (3, ["b"])]
    with pytest.raises(ValueError) as err:
        read_json_objects(path)
    assert str(err.value) == f"{path}:3: expected a JSON object, got an array"
    with pytest.raises(ValueError) as err:
        parse_json_lines('{"a": 1}\n' + "[" * 100_000 + "]" * 100_000, "deep.jsonl")
    assert str(err.value) == "deep.jsonl:2: JSON nested too deeply to read"


@pytest.mark.parametrize("tail", [b'{"a": 2}', b'{"a": "\xe7\xad', b'{"a'])
def test_a_torn_last_line_is_dropped_and_counted(tail):
    # What a writer killed mid-line leaves: a last line without its newline, cut anywhere (even in a character).
    assert numbered_json_lines(b'{"a": 1}\n' + tail, torn_last=True) == ([(1, {"a": 1})], 1)
    assert numbered_json_lines(b'{"a": 1}\n', torn_last=True) == ([(1, {"a": 1})], 0)
    with pytest.raises(ValueError, match="^f:1: not valid UTF-8"):
        numbered_json_lines(b'{"a": "\xe7\xad"}\n{"a": 1}', "f", torn_last=True)  # torn only when last


def test_a_json_file_error_names_the_file(tmp_path):
    path = tmp_path / "run.json"
    for content, message in [
        (b'{"a": [1, ', "not valid JSON (Expecting value: line 1 column 11)"),
        (b'{"a": "\xe9"}', "not valid UTF-8 (byte 0xe9 at position 8)"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON nested too deeply to read"),
    ]:
        path.write_bytes(content)
        with pytest.raises(ValueError) as err:
            read_json_file(path)
        assert str(err.value) == f"{path}: {message}"
    with pytest.raises(ValueError, match=f"^{tmp_path / 'none.json'}: cannot be read \\(No such file or directory\\)$"):
        read_json_file(tmp_path / "none.json")
    path.write_text("[]")
    assert read_json_file(path) == []


def test_a_lone_surrogate_is_refused_with_its_line_and_key(tmp_path):
    # "\ud800" alone is half of a UTF-16 pair, not a character: json reads it, UTF-8 cannot write it back.
    half = " holds a lone surrogate \\{} (half of a UTF-16 pair, not a character)"
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": "\\ud83d\\ude00 \\\\ud800"}\n{"id": "b", "details": {"cot": ["ok", "x\\ud800"]}}\n')
    with pytest.raises(ValueError) as err:
        read_json_lines(path)
    assert str(err.value) == f"{path}:2: details.cot[1]" + half.format("ud800")
    path.write_text('{"k\\udc01": 1}\n')
    with pytest.raises(ValueError) as err:
        read_json_objects(path)
    assert str(err.value) == f"{path}:1: key 'k\\udc01'" + half.format("udc01")
    path.write_text('{"a": "\\ud83d\\ude00 \\\\ud800"}\n')  # a pair is a character; an escaped backslash, text
    assert read_json_lines(path) == [{"a": "\U0001f600 \\ud800"}]
    with pytest.raises(ValueError) as err:
        parse_json_lines('"\ud800"')  # pasted text holding the code point itself
    assert str(err.value) == "line 1: the value" + half.format("ud800")
    path = tmp_path / "r.json"
    path.write_text('[{"id": "a"}, {"model_output": "\\udfff"}]')
    with pytest.raises(ValueError) as err:
        read_json_file(path)
    assert str(err.value) == f"{path}: [1].model_output" + half.format("udfff")


def test_a_line_over_the_bound_is_refused_by_its_number(tmp_path, monkeypatch):
    monkeypatch.setattr("audioreason.base.jsonl.MAX_LINE_BYTES", 16)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b'["0123456789ab"]\n' + b'["0123456789abc"]\n{"b": 2}\n')  # 16 bytes, then 17
    with pytest.raises(ValueError) as err:
        read_json_lines(path)
    assert (
        str(err.value) == f"{path}:3: a line longer than 16 bytes, the most a JSON line may hold (is it one "
        "record per line?)"
    )
    path.write_bytes(b'{"a": 1}\n' + b'["0123456789ab"]')  # the last line, at the bound, without its newline
    assert read_json_lines(path) == [{"a": 1}, ["0123456789ab"]]
    assert read_json_objects(path, torn_last=True) == ([(1, {"a": 1})], 1)
