"""One score scale (fractions in [0, 1], audioreason.base.scale) and what people read of it: the Space widgets show
at most 4 decimals, never float noise. Run outside the repository."""

import json
from fractions import Fraction

import pytest
from fixtures.shell_helpers import load_app

from audioreason.base.scale import floats, rounded, to_float


@pytest.fixture(autouse=True)
def outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _floats_in(obj):
    if isinstance(obj, float):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _floats_in(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _floats_in(v)


def _at_most_4_decimals(obj):
    values = list(_floats_in(obj))
    return values and all(round(v, 4) == v for v in values)


def test_the_helpers():
    assert to_float(Fraction(1, 2)) == 0.5 and to_float(None) is None
    assert floats({"a": [Fraction(5, 6), (Fraction(1, 3), 2)], "b": "x"}) == {"a": [5 / 6, (1 / 3, 2)], "b": "x"}
    assert rounded({"a": [0.49999999999999994, Fraction(1, 3), True, 7, None]}) == {"a": [0.5, 0.3333, True, 7, None]}


def test_anchor_chain_widget_shows_four_decimals():
    rows = [
        {"chain_id": "c", "link_position": k, "choices": ["x", "y"], "answer": "x", "reply": reply}
        for k, reply in ((1, "A"), (2, "B"), (3, "A"))
    ]
    result = load_app("anchor_chain").score("\n".join(json.dumps(r) for r in rows), "chain", "exact")
    assert result["chain"] == 0.3333 and result["random_chain"] == 0.2917  # 1/3; (1/2 + 1/4 + 1/8) / 3
    assert _at_most_4_decimals(result)


def test_audiospan_rubric_widget_shows_four_decimals():
    app = load_app("audiospan_rubric")
    result = app.score(app.EXAMPLE)
    assert result["rubric"] == 0.8333  # 5/6: (1 + 0.5 * (1 + 0) / 2) / 1.5
    assert _at_most_4_decimals(result)


def test_text_prior_widget_shows_four_decimals():
    app = load_app("text_prior_decomposition")
    *tables, full = app.score(app.EXAMPLE, "separate", 0, "as_zero")
    assert _at_most_4_decimals(full) and all(_at_most_4_decimals(t["data"]) for t in tables[:3])
    assert full["text_prior"]["per_model"]["model-a"]["full"] == 0.75
