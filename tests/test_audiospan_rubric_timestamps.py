"""Golden tables for the timestamp normaliser (AudioSpan, arXiv:2608.26431, App. C.3: "timestamps in any format
are normalized to seconds before comparison"). Expected values are seconds computed by hand; a tuple is a span,
None is no time."""

import pytest

from audioreason.text.timestamps import find_timestamps, parse_span, parse_timestamp

GOLDEN = [
    # clocks
    ("12:30", 750.0),
    ("0:05", 5.0),
    ("64:00", 3840.0),  # minutes past 59 carried: 1:04:00
    ("1:04:00", 3840.0),
    ("01:04:00", 3840.0),
    ("1:75", 135.0),  # seconds past 59 carried
    ("00:01:02.5", 62.5),
    ("00:01:02,500", 62.5),  # SRT milliseconds
    ("1:02.25", 62.25),
    ("0:28:53.053", 1733.053),
    ("1：02", 62.0),  # full-width colon
    ("01：02：03", 3723.0),
    ("1:02 min", 62.0),
    ("at 1:05", 65.0),
    ("around 12:30", 750.0),
    ("~12:30", 750.0),
    ("[12:30]", 750.0),
    ("(at 0:45)", 45.0),
    # minute and second marks
    ("1'02\"", 62.0),
    ("1′02″", 62.0),
    ("12'30''", 750.0),
    # seconds and units
    ("522.640 s", 522.64),
    ("522 seconds", 522.0),
    ("522.64", 522.64),  # a bare number in a whole string is seconds
    ("90", 90.0),
    ("30s", 30.0),
    ("30 sec", 30.0),
    ("45 secs", 45.0),
    ("1 min 2 s", 62.0),
    ("1m02s", 62.0),
    ("1 minute 2 seconds", 62.0),
    ("1 min, 2 sec", 62.0),
    ("2 minutes", 120.0),
    ("2 mins", 120.0),
    ("1.5 minutes", 90.0),
    ("1 hour 2 minutes", 3720.0),
    ("1h 2m 3s", 3723.0),
    ("1h2m3s", 3723.0),
    ("1 hr 5 min", 3900.0),
    ("2 hours", 7200.0),
    ("1 hour, 2 minutes and 3 seconds", 3723.0),
    ("around the 2-minute mark", 120.0),
    ("at the 30-second mark", 30.0),
    ("about 90 seconds in", 90.0),
    ("approximately 1 min 5 s", 65.0),
    ("t=30s", 30.0),
    # ISO 8601 durations
    ("PT1M2S", 62.0),
    ("PT1H2M3S", 3723.0),
    ("PT62.5S", 62.5),
    ("pt2m", 120.0),
    # Chinese
    ("1分2秒", 62.0),
    ("62秒", 62.0),
    ("1小时2分", 3720.0),
    ("2分钟", 120.0),
    ("1分钟2秒", 62.0),
    ("1小时2分3秒", 3723.0),
    ("12分30秒", 750.0),
    ("第62秒", 62.0),
    ("约1分05秒处", 65.0),
    ("12分30秒左右", 750.0),
    ("1.5分钟", 90.0),
    ("30秒钟", 30.0),
    ("2小时", 7200.0),
    ("1個小時2分鐘", 3720.0),
    ("在1:05左右", 65.0),
    ("大约2分钟处", 120.0),
    ("1分钟前后", 60.0),  # "around 1 minute", not "1 minute before"
    # spans
    ("12:30-13:05", (750.0, 785.0)),
    ("12:30 – 13:05", (750.0, 785.0)),
    ("12:30 to 13:05", (750.0, 785.0)),
    ("from 0:30 to 0:45", (30.0, 45.0)),
    ("between 0:30 and 0:45", (30.0, 45.0)),
    ("[0:30, 0:45]", (30.0, 45.0)),
    ("(0:30, 0:45)", (30.0, 45.0)),
    ("30-45 s", (30.0, 45.0)),  # the unit is shared
    ("30 to 45 seconds", (30.0, 45.0)),
    ("1-2 minutes", (60.0, 120.0)),
    ("between 30 and 45 seconds", (30.0, 45.0)),
    ("0:30~0:45", (30.0, 45.0)),
    ("从0:30到0:45", (30.0, 45.0)),
    ("0:30至0:45", (30.0, 45.0)),
    ("在0:30和0:45之间", (30.0, 45.0)),
    ("30到45秒", (30.0, 45.0)),
    ("1:00:00-1:02:30", (3600.0, 3750.0)),
    ("from 1 min 2 s to 1 min 10 s", (62.0, 70.0)),
    ("30-45", (30.0, 45.0)),  # bare seconds in a whole string
    # not times into the recording
    ("at 12:30pm", None),  # a time of day
    ("12:30 PM", None),
    ("12:30 p.m.", None),
    ("下午3:30", None),
    ("score was 2:1", None),  # a score: the seconds field of a clock has two digits
    ("the final score was 21:14", None),
    ("比分是21:14", None),
    ("16:9", None),  # a ratio
    ("5 seconds later", None),  # relative
    ("for 30 seconds", None),  # a length
    ("the first 30 seconds", None),
    ("5秒后", None),
    ("1分钟内", None),
    ("2分", None),  # 分 alone is also "points"
    ("5 m", None),  # metres?
    ("2h", None),
    ("the 1990s", None),
    ("13:05-12:30", None),  # runs backwards: two points, not one time
    ("12:30 and 13:05", None),  # two points
    ("3 speakers", None),
    ("two minutes", None),  # numbers as words are not read (documented limit)
    ("soon", None),
    ("", None),
    ("1:2:3:4", None),
    ("-3", None),
    ("12:3x", None),
]


def test_golden_table_is_large_and_bilingual():
    assert len(GOLDEN) >= 80
    assert sum(any("\u4e00" <= ch <= "\u9fff" for ch in text) for text, _ in GOLDEN) >= 20
    assert len({text for text, _ in GOLDEN}) == len(GOLDEN)


@pytest.mark.parametrize("text,expected", GOLDEN)
def test_normaliser_golden(text, expected):
    if expected is None:
        assert parse_timestamp(text) is None and parse_span(text) is None
    elif isinstance(expected, tuple):
        assert parse_span(text) == expected
        assert parse_timestamp(text) is None  # a span is not one point
    else:
        assert parse_timestamp(text) == expected
        assert parse_span(text) == (expected, expected)


FREE_TEXT = [
    ("The bell rings at 1:05 and again at 2:30.", [65.0, 150.0]),
    ("From 0:30 to 0:45 the choir sings; at 12:30pm it ends.", [(30.0, 45.0)]),
    ("The score was 2:1 at 12:30.", [750.0]),
    ("5 seconds later a dog barks at 1 min 2 s.", [62.0]),
    ("The speech [0:30, 0:45] precedes the applause (1:05).", [(30.0, 45.0), 65.0]),
    ("它在1分2秒开始，5秒后结束，在1小时2分再次出现。", [62.0, 3720.0]),
    ("Two speakers talk for 30 seconds, between 2:00 and 2:30.", [(120.0, 150.0)]),
    ("around the 2-minute mark, then 30-45 s", [120.0, (30.0, 45.0)]),
    ("music of the 1990s, the stage is 3 m wide", []),
    ("PT1M2S and 1'02\"", [62.0, 62.0]),
    ("1:00, 2:00, 3:00", [60.0, 120.0, 180.0]),
    ("first at 13:05-12:30", [785.0, 750.0]),
    ("3 people talk from 1 to 2 minutes", [(60.0, 120.0)]),
    ("在12:30左右，比分是21:14", [750.0]),
    ("at 12:30, then 1:04:00 and 522.640 s", [750.0, 3840.0, 522.64]),
    ("Chapter 2 has 12 tracks", []),  # bare numbers in free text are no times
]


@pytest.mark.parametrize("text,expected", FREE_TEXT)
def test_find_timestamps_golden(text, expected):
    assert find_timestamps(text) == expected


def test_bare_seconds_in_a_quoted_timestamp():
    assert find_timestamps("752 (12:32)", bare_seconds=True) == [752.0, 752.0]
    assert find_timestamps("752 (12:32)") == [752.0]
