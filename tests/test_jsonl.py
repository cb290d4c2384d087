"""JSON Lines, read one way everywhere (audioreason.jsonl): the files' reader and the widgets' pasted records."""
import pytest

from audioreason.jsonl import parse_json_lines, parse_json_records, read_json_lines


def test_lines_blank_lines_skipped_and_a_bad_line_named(tmp_path):
    assert parse_json_lines('{"a": 1}\n\n  \n[2]\n') == [{"a": 1}, [2]]
    with pytest.raises(ValueError, match=r"^line 2 is not valid JSON \(Expecting value\)$"):
        parse_json_lines('{"a": 1}\nnope')
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"b": \n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}:2: not valid JSON"):
        read_json_lines(path)


@pytest.mark.parametrize("text, message", [
    ("", "Paste at least one JSON line (one JSON object per line)."),
    ("\n  \n", "Paste at least one JSON line (one JSON object per line)."),
    ('{"id": "a"}\n{', "each line must be one JSON object: line 2 is not valid JSON (Expecting property name "
                       "enclosed in double quotes)"),
    ('{"id": "a", "x": 1}\n["x"]', "JSON line 2: expected an item, got a list"),
    ('{"id": "a", "x": 1}\n{"id": "b"}', "JSON line 2 (b): the field 'x' is missing (lines hold id and x)"),
    ('{"x": 1, "id": "a"}\n{"y": 2}', "JSON line 2: the field 'x' is missing (lines hold id and x)"),
])
def test_pasted_records_name_the_line(text, message):
    with pytest.raises(ValueError) as err:
        parse_json_records(text, needed=("x",), what="an item", hint="lines hold id and x")
    assert str(err.value) == message


def test_pasted_records_come_back_as_written():
    assert parse_json_records('{"x": 1}\n\n{"x": 2, "y": null}', needed=("x",)) == [{"x": 1}, {"x": 2, "y": None}]
    assert parse_json_records('{"a": 1}') == [{"a": 1}]  # no field needed
