"""Word normalisation and the audio vocabulary behind ARIA's M6 "Audio Lexical Density" (§3.3.6, Table 11).

M6 scores each content word of a chain of thought by its best cosine similarity to an audio vocabulary
and averages over words. This module holds the text side only (no model loading):

* ``content_words``: the paper's word pipeline (tag stripping with ``\\[[^\\]]*\\]``, NLTK default English
  stopwords + 30 custom ones, verb-first lemmatisation with noun fallback, words of 3+ characters);
* ``build_audio_vocabulary``: our reproducible stand-in for the paper's unpublished 417-word list (§3.3.6,
  Appendix C): the words of the sound-event class names under the AudioSet ontology's five top branches,
  normalised by the same pipeline, without the words that name no sound on their own
  (``NON_SOUND_WORDS``) and with alternative names of the same class collapsed through ``SYNONYMS``.

The shipped list (``AUDIO_VOCABULARY_FILE``) is regenerated from the AudioSet ontology (Gemmeke et al. 2017,
CC BY-SA 4.0), which the repository ships as ``tests/data/audioset_ontology.json``; from the repository root::

    python -c "from audioreason.text.lexicon import write_audio_vocabulary; write_audio_vocabulary('tests/data/audioset_ontology.json')"
"""  # noqa: E501 - a command or table kept whole

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from lemminflect import getLemma

# NLTK 3.8 `stopwords.words("english")`, in NLTK's order (179 words). Written out so NLTK is not a dependency.
NLTK_STOPWORDS: tuple[str, ...] = (
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "you're",
    "you've",
    "you'll",
    "you'd",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "she's",
    "her",
    "hers",
    "herself",
    "it",
    "it's",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "that'll",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "don't",
    "should",
    "should've",
    "now",
    "d",
    "ll",
    "m",
    "o",
    "re",
    "ve",
    "y",
    "ain",
    "aren",
    "aren't",
    "couldn",
    "couldn't",
    "didn",
    "didn't",
    "doesn",
    "doesn't",
    "hadn",
    "hadn't",
    "hasn",
    "hasn't",
    "haven",
    "haven't",
    "isn",
    "isn't",
    "ma",
    "mightn",
    "mightn't",
    "mustn",
    "mustn't",
    "needn",
    "needn't",
    "shan",
    "shan't",
    "shouldn",
    "shouldn't",
    "wasn",
    "wasn't",
    "weren",
    "weren't",
    "won",
    "won't",
    "wouldn",
    "wouldn't",
)

# The paper's "30 custom" stopwords are not published. Ours: words of the CoT template itself and the
# hedging/discourse words every CoT repeats; none names a sound. Generic audio words (audio, sound, speech,
# voice, music, song, instrument) are deliberately absent: the paper counts them (its Table 12).
# could/would/might need no entry: they lemmatise to can/will/may, which are already stopwords.
CUSTOM_STOPWORDS: frozenset[str] = frozenset(
    {
        # the four-step template's own words
        "perception",
        "analysis",
        "reasoning",
        "reason",
        "answer",
        "entity",
        "entities",
        "description",
        "step",
        "question",
        "option",
        "choice",
        # discourse and hedging
        "therefore",
        "thus",
        "hence",
        "however",
        "likely",
        "suggest",
        "indicate",
        "based",
        "also",
        "may",
        "must",
        "seem",
        "perhaps",
        "possibly",
        "probably",
        "overall",
        "conclusion",
        "correct",
    }
)

STOPWORDS: frozenset[str] = frozenset(NLTK_STOPWORDS) | CUSTOM_STOPWORDS

MIN_WORD_LENGTH = 3
_TAG_RE = re.compile(r"\[[^\]]*\]")
_THINK_RE = re.compile(r"</?think>", re.IGNORECASE)
# Letters only (any script): digits and underscores split words; a Chinese run stays one token.
_WORD_RE = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=65536)
def lemmatize(word: str) -> str:
    """Verb lemma first (barking -> bark), else noun lemma (children -> child), else the word itself."""
    word = word.lower()
    verb = getLemma(word, upos="VERB", lemmatize_oov=False)
    if verb and verb[0] != word:
        return verb[0]
    noun = getLemma(word, upos="NOUN", lemmatize_oov=False)
    return noun[0] if noun else word


def content_words(text: Any) -> list[str]:
    """The M6 words of one text, in order and with repeats; [] for anything that is not a string."""
    if not isinstance(text, str):
        return []
    # Tags become spaces, not nothing, so "dog[X]bark" cannot fuse into one word.
    text = _THINK_RE.sub(" ", _TAG_RE.sub(" ", text)).lower()
    words = []
    for token in _WORD_RE.findall(text):
        if token in STOPWORDS:
            continue
        lemma = lemmatize(token)
        # Second pass: a lemma can be a stopword although its form was not (was -> be, suggests -> suggest).
        if lemma in STOPWORDS or len(lemma) < MIN_WORD_LENGTH:
            continue
        words.append(lemma)
    return words


# ---------------------------------------------------------------------------------------------
# Audio vocabulary
# ---------------------------------------------------------------------------------------------
AUDIO_ROOTS: tuple[str, ...] = ("Music", "Human sounds", "Animal", "Natural sounds", "Sounds of things")

# The paper keeps the ontology's "audio-related terms, including verbal actions, sound-producing subjects,
# and environmental sounds" (§3.3.6). A class name also carries words that name no sound on their own
# ("Cash register", "Independent music", "Shuffling cards"); left in, they reward filler ("something"
# is near "thing", "change", "work"). Rule for this manual filter: a word stays if, on its own, it names a
# sound, a sound-producing action, a sound source (animal, person, instrument, vehicle, tool, object,
# material) or a musical form; it goes if it is one of the groups below. Each word is a lemma as
# `content_words` returns it.
NON_SOUND_WORD_GROUPS: dict[str, str] = {
    # "Bee, wasp, etc.", "Non-motorized"; lemmatiser artefacts: dove -> dive, leaves -> leave,
    # typing -> type, filing -> file, writing -> write (a CoT word is lemmatised the same way, so these
    # would match the everyday verb), and "saw" (Sawing), whose word vector is the past tense of "see"
    "grammar and lemmatiser leftovers": "etc non dive leave type file write saw",
    "mood, occasion and use of music": "angry happy sad funny scary tender excite birthday christmas wed theme "
    "background dance video game",
    "places, cultures and eras": "africa america asia latin eastern middle french bollywood christian traditional "
    "independent new age oldschool progressive psychedelic carioca",
    "genre names whose everyday sense is not a sound": "house country soul trap grime garage swing blue jungle dub "
    "hip hop",
    # "Children playing", "Keys jangling", "Bird call": the sound is named by the other words of the class
    "everyday words that only name a sound inside a compound": "play key call",
    "qualifiers and parts of compound names that name no sound alone": "air alert battle belly block bowl busy cap "
    "card cash change civil clear close open communication computer "
    "condition cream ice defense dental dentist detector domestic home double duct effect emission otoacoustic "
    "electric emergency farm fastener hook loop fill finger fix flight fork hair hand hat kit land lawn lens "
    "reflex single light heavy medium machine mechanical mechanism motorize pack pass police power race rail "
    "register reverse roadway run section sew signal slide smoke start steel surface synthetic throat tire "
    "toilet tool transport tubular unit vacuum cleaner wheel wild window wing work stomach heart roll bay bow "
    "wow clip doo doodle cock tape",
}
NON_SOUND_WORDS: frozenset[str] = frozenset(w for words in NON_SOUND_WORD_GROUPS.values() for w in words.split())

# Dropped word -> kept word. Rule: only words that the ontology itself gives as alternative names of the
# same class (the comma-separated variants of one class name, as "Baby cry, infant cry"), and only true
# synonyms or near-duplicates; hypernyms (airplane/aircraft, canidae/dog) and distinct things
# (chicken/rooster, marimba/xylophone) stay. Keys and values are lemmas as `content_words` returns them.
SYNONYMS: dict[str, str] = {
    "infant": "baby",  # Baby cry, infant cry
    "kid": "child",  # Child speech, kid speaking
    "woman": "female",  # Female speech, woman speaking
    "man": "male",  # Male speech, man speaking
    "sob": "cry",  # Crying, sobbing
    "chortle": "chuckle",  # Chuckle, chortle
    "eructation": "burp",  # Burping, eructation
    "mastication": "chew",  # Chewing, mastication
    "tweet": "chirp",  # Chirp, tweet
    "whinny": "neigh",  # Neigh, whinny
    "ass": "donkey",  # Donkey, ass
    "seagull": "gull",  # Gull, seagull
    "housefly": "fly",  # Fly, housefly
    "moan": "wail",  # Wail, moan
    "fiddle": "violin",  # Violin, fiddle
    "gunfire": "gunshot",  # Gunshot, gunfire
    "chink": "clink",  # Chink, clink
    "silverware": "cutlery",  # Cutlery, silverware
    "razor": "shaver",  # Electric shaver, electric razor
    "faucet": "tap",  # Water tap, faucet
    "airscrew": "propeller",  # Propeller, airscrew
    "auto": "car",  # Race car, auto racing
    "metro": "subway",  # Subway, metro, underground
    "underground": "subway",  # Subway, metro, underground
    "surf": "wave",  # Waves, surf
    "splatter": "splash",  # Splash, splatter
    "thud": "thump",  # Thump, thud
    "dribble": "trickle",  # Trickle, dribble
    "swoosh": "whoosh",  # Whoosh, swoosh, swish
    "swish": "whoosh",  # Whoosh, swoosh, swish
}

AUDIO_VOCABULARY_FILE: Path = Path(__file__).resolve().parents[1] / "resources" / "aria" / "audio_vocabulary.txt"


def _audio_class_names(ontology: list[dict[str, Any]]) -> list[str]:
    """Names of the sound-event classes under the five audio roots (each class once): every class
    reachable through child_ids except the roots themselves and classes marked "abstract" (headings such
    as "Music genre", "Music mood", "Human voice", "Specific impact sounds"), whose children still count."""
    by_id = {c["id"]: c for c in ontology}
    by_name = {c["name"]: c for c in ontology}
    seen: set[str] = set()
    stack = [by_name[root]["id"] for root in AUDIO_ROOTS]
    while stack:
        class_id = stack.pop()
        if class_id in seen or class_id not in by_id:
            continue
        seen.add(class_id)
        stack.extend(by_id[class_id]["child_ids"])
    events = [
        by_id[i]
        for i in seen
        if by_id[i]["name"] not in AUDIO_ROOTS and "abstract" not in by_id[i].get("restrictions", [])
    ]
    return sorted(c["name"] for c in events)


_QUALIFIER_RE = re.compile(r"\([^)]*\)")


def build_audio_vocabulary(ontology_path: str | Path) -> list[str]:
    """Sorted, unique lemmas of the sound-event class names; parenthesised qualifiers ("Howl (wind)",
    "Tapping (guitar technique)") are not names and are left out, then NON_SOUND_WORDS and the dropped
    synonyms."""
    ontology = json.loads(Path(ontology_path).read_text(encoding="utf-8"))
    words = {w for name in _audio_class_names(ontology) for w in content_words(_QUALIFIER_RE.sub(" ", name))}
    return sorted(words - NON_SOUND_WORDS - SYNONYMS.keys())


def write_audio_vocabulary(ontology_path: str | Path, path: str | Path = AUDIO_VOCABULARY_FILE) -> list[str]:
    """Build the vocabulary and write it, one word per line under a `#` header; returns the words."""
    words = build_audio_vocabulary(ontology_path)
    digest = hashlib.sha256(Path(ontology_path).read_bytes()).hexdigest()
    header = [
        "# ARIA M6 audio vocabulary: lemmas of the sound-event class names (not the roots, not abstract",
        "# headings, not parenthesised qualifiers) under Music, Human sounds, Animal, Natural sounds and",
        "# Sounds of things, normalised by audioreason.text.lexicon.content_words, without lexicon.NON_SOUND_WORDS",
        "# (words that name no sound alone) and the synonyms in lexicon.SYNONYMS.",
        f"# Built by audioreason.text.lexicon.write_audio_vocabulary from {Path(ontology_path).name}",
        f"# (sha256 {digest}); {len(words)} words.",
        "# AudioSet ontology, CC BY-SA 4.0, Gemmeke et al. 2017",
    ]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header + words) + "\n", encoding="utf-8")
    return words


def load_audio_vocabulary(path: str | Path | None = None) -> list[str]:
    """The shipped (or given) vocabulary file's words, skipping `#` comments and blank lines."""
    lines = Path(path or AUDIO_VOCABULARY_FILE).read_text(encoding="utf-8").splitlines()
    return [s for s in (line.strip() for line in lines) if s and not s.startswith("#")]
