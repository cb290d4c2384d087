"""M6 word pipeline and audio vocabulary (audioreason.text.lexicon)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from audioreason.text import lexicon
from audioreason.text.lexicon import (
    AUDIO_VOCABULARY_FILE,
    CUSTOM_STOPWORDS,
    NLTK_STOPWORDS,
    NON_SOUND_WORDS,
    STOPWORDS,
    SYNONYMS,
    build_audio_vocabulary,
    content_words,
    lemmatize,
    load_audio_vocabulary,
)

ONTOLOGY = Path(__file__).parent / "data" / "audioset_ontology.json"  # shipped (tests/data/README.md)


# --- stopwords ---------------------------------------------------------------------------------
def test_stopword_lists():
    assert len(NLTK_STOPWORDS) == len(set(NLTK_STOPWORDS)) == 179
    assert len(CUSTOM_STOPWORDS) == 30
    assert not CUSTOM_STOPWORDS & set(NLTK_STOPWORDS)
    assert STOPWORDS == set(NLTK_STOPWORDS) | CUSTOM_STOPWORDS
    assert {"i", "the", "wouldn't", "won", "y"} <= set(NLTK_STOPWORDS)
    # Generic audio words are counted by the paper, so they must not be stopwords.
    assert not {"audio", "sound", "speech", "voice", "music", "song", "instrument"} & STOPWORDS


# --- lemmatize ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "word, lemma",
    [
        ("barking", "bark"),
        ("sang", "sing"),
        ("dogs", "dog"),
        ("speech", "speech"),
        ("children", "child"),
        ("Barking", "bark"),
        ("was", "be"),
        ("mice", "mouse"),
        ("loudly", "loudly"),
        ("xyzzyq", "xyzzyq"),
    ],
)
def test_lemmatize(word, lemma):
    assert lemmatize(word) == lemma


# --- content_words -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        # Entities/was/a are stopwords; dogs->dog, barking->bark, singing->sing; the tag goes.
        ("[PERCEPTION] Entities: dogs barking, a man was singing loudly.", ["dog", "bark", "man", "sing", "loudly"]),
        # think markup goes but its content stays; "B" is under 3 characters.
        (
            "<think>The audio features a female voice speaking English.</think> [ANSWER] (B) Piano",
            ["audio", "feature", "female", "voice", "speak", "english", "piano"],
        ),
        # suggests->suggest is dropped after lemmatisation; the rest is NLTK or custom stopwords.
        ("It suggests that the sound was likely a siren, therefore option C is correct.", ["sound", "siren"]),
        # digits and underscores split words; "pm" is too short.
        ("3 dogs_barking at 10pm", ["dog", "bark"]),
        # a tag between two words must not fuse them.
        ("dog[X]bark", ["dog", "bark"]),
        ("[PERCEPTION] [ANALYSIS]", []),
        ("", []),
    ],
)
def test_content_words(text, expected):
    assert content_words(text) == expected


def test_content_words_non_strings():
    assert content_words(None) == []
    assert content_words(42) == []  # type: ignore[arg-type]
    assert content_words(b"dog barking") == []  # type: ignore[arg-type]


def test_content_words_chinese():
    # A run of Chinese characters is letters, so it stays one word (it will simply have no vector).
    assert content_words("狗在叫 and dogs barking") == ["狗在叫", "dog", "bark"]


def test_content_words_never_raises():
    rng = random.Random(0)
    alphabet = "abcXYZ [] <think></think> _-'.,;:!?0129\n\t\u00e9\u00df\u0130\u4e2d\u6587\u0301\U0001f600\x00"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        words = content_words(text)
        assert all(isinstance(w, str) and len(w) >= 3 and w not in STOPWORDS for w in words)


# --- audio vocabulary --------------------------------------------------------------------------
def test_shipped_vocabulary_is_clean():
    words = load_audio_vocabulary()
    assert words == sorted(set(words))
    assert 300 <= len(words) <= 700
    assert {"dog", "bark", "guitar", "siren", "rain", "laughter", "speech", "baby", "violin"} <= set(words)
    assert not set(SYNONYMS) & set(words)
    assert set(SYNONYMS.values()) <= set(words)
    assert not NON_SOUND_WORDS & set(words)
    assert not STOPWORDS & set(words)
    header = [line for line in AUDIO_VOCABULARY_FILE.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert "# AudioSet ontology, CC BY-SA 4.0, Gemmeke et al. 2017" in header


def test_built_vocabulary_matches_shipped_file():
    built = build_audio_vocabulary(ONTOLOGY)
    assert built == load_audio_vocabulary()
    assert f"{len(built)} words." in AUDIO_VOCABULARY_FILE.read_text(encoding="utf-8")


def test_synonyms_are_both_in_the_raw_vocabulary(monkeypatch):
    # Each mapping must join two words the audio branches really give; a stale key would silently do nothing.
    monkeypatch.setattr(lexicon, "SYNONYMS", {})
    raw = set(build_audio_vocabulary(ONTOLOGY))
    assert set(SYNONYMS) <= raw
    assert set(SYNONYMS.values()) <= raw
    assert len(raw) == len(load_audio_vocabulary()) + len(SYNONYMS)


def test_vocabulary_holds_sound_words_not_generic_ones():
    words = set(load_audio_vocabulary())
    # generic words the class names carry ("Sounds of things", "Typing", "Specific impact sounds", "Musical
    # concepts", "Change ringing", "Cash register", "Shuffling cards", "Independent music", "Rustling
    # leaves", "working animals", "New-age music"): none names a sound alone
    assert (
        not {
            "thing",
            "type",
            "specific",
            "concept",
            "change",
            "cash",
            "card",
            "independent",
            "leave",
            "work",
            "new",
            "genre",
            "mood",
            "role",
            "technique",
            "frequency",
        }
        & words
    )
    # verbal actions, sound-producing subjects, environmental sounds (§3.3.6) stay
    assert {
        "bark",
        "sing",
        "whisper",
        "cough",
        "dog",
        "piano",
        "siren",
        "engine",
        "rain",
        "thunder",
        "wind",
        "jazz",
        "rock",
        "sound",
        "music",
        "speech",
        "noise",
    } <= words


def test_non_sound_words_are_all_real_candidates(monkeypatch):
    # Each dropped word must come from the class names; a stale entry would silently do nothing.
    monkeypatch.setattr(lexicon, "NON_SOUND_WORDS", frozenset())
    raw = set(build_audio_vocabulary(ONTOLOGY))
    assert NON_SOUND_WORDS <= raw
    assert len(raw) == len(load_audio_vocabulary()) + len(NON_SOUND_WORDS)


def test_abstract_headings_and_qualifiers_are_not_terms(tmp_path):
    ontology = [
        {"id": "r", "name": "Animal", "child_ids": ["h", "q"], "restrictions": []},
        {"id": "h", "name": "Domestic moods", "child_ids": ["d"], "restrictions": ["abstract"]},
        {"id": "d", "name": "Dog", "child_ids": [], "restrictions": []},
        {"id": "q", "name": "Howl (wind)", "child_ids": [], "restrictions": []},
    ] + [
        {"id": root, "name": root, "child_ids": [], "restrictions": []}
        for root in ("Music", "Human sounds", "Natural sounds", "Sounds of things")
    ]
    path = tmp_path / "ontology.json"
    path.write_text(json.dumps(ontology), encoding="utf-8")
    # "Animal" is a root heading, "Domestic moods" abstract, "(wind)" a qualifier: only dog and howl remain
    assert build_audio_vocabulary(path) == ["dog", "howl"]


def test_load_audio_vocabulary_skips_comments(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("# header\n\ndog\n  # indented comment\nbark\n", encoding="utf-8")
    assert load_audio_vocabulary(path) == ["dog", "bark"]
