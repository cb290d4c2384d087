"""Native QA's question space: Table 4 of AudioSpan (arXiv:2608.26431) App. B.2 as data.

Each cognitive level has three dimensions, each opening a list of question directions. The generator treats
the directions as inspiration: it decides the actual direction for the audio at hand and may combine several
(§4.3 step 1). The dimension keys are the loader's dimension vocabulary (``text.audiospan_fields.DIMENSIONS``);
the directions are the paper's words.
"""

from __future__ import annotations

LEVEL_ORDER = ("perception", "understanding", "reasoning")
LEVEL_LETTER = {"perception": "P", "understanding": "U", "reasoning": "R"}

QUESTION_SPACE: dict[str, dict[str, tuple[str, ...]]] = {
    "perception": {
        "recognition": (
            "Linguistic recognition",
            "Speaker identification",
            "Sound scene classification",
            "Subtle audio discrimination",
            "Prosodic and paralinguistic recognition",
            "Audio source discrimination",
            "Overlapping speech resolution",
            "Sound event recognition",
            "Music recognition",
        ),
        "localization": (
            "Keyword/phrase localization",
            "Speaker turn localization",
            "Sound event localization",
            "Temporal ordering",
            "Relative temporal localization",
            "Duration estimation",
        ),
        "counting": (
            "Linguistic counting",
            "Speaker counting",
            "Sound event counting",
            "Conditional counting",
            "Comparative counting",
            "Frequency/density judgment",
        ),
    },
    "understanding": {
        "interpretation": (
            "Role/relationship recognition",
            "Emotional atmosphere",
            "Epistemic stance recognition",
            "Subtext and implicit intent",
            "Rhetorical device recognition",
            "Social function recognition",
            "Silence and non-response semantics",
            "Content structure recognition",
            "Quotation and paraphrase recognition",
            "Humor and comedic intent recognition",
        ),
        "tracking": (
            "Topic transition detection",
            "Emotional/stance evolution",
            "Narrative progression",
            "Engagement/dominance shift",
            "Discourse function shift",
            "Information density change",
            "Structural segment transition",
            "Prosodic consistency tracking",
        ),
        "summarization": (
            "Holistic summarization",
            "Key point extraction",
            "Speaker contribution analysis",
            "Surface vs. actual consensus",
            "Selective summarization",
            "Omission detection",
            "Bias detection",
            "Segment importance judgment",
        ),
    },
    "reasoning": {
        "causal": (
            "Attribution",
            "Foreshadowing",
            "Causal chain reconstruction",
            "Competing explanations",
            "Correlation vs. causation",
            "Prosodic causation",
        ),
        "relational": (
            "Long-range reference resolution",
            "Cross-segment information linking",
            "Retrospective reinterpretation",
            "Structural segment contextual relevance",
        ),
        "logical": (
            "Contradiction detection",
            "Stance reversal detection",
            "Argument validity assessment",
            "Information completeness check",
            "Audio atmosphere vs. stated content divergence",
        ),
    },
}


def dimensions(level: str) -> tuple[str, ...]:
    """The three dimensions of a cognitive level, in Table 4's order."""
    if level not in QUESTION_SPACE:
        raise ValueError(f"unknown cognitive level {level!r}; expected one of {', '.join(LEVEL_ORDER)}")
    return tuple(QUESTION_SPACE[level])


def space_text(level: str) -> str:
    """The level's part of Table 4 as prompt text: one line per dimension with its directions."""
    lines = [f"Question space for the {level} level (AudioSpan Table 4; inspiration, not a closed list):"]
    for dimension in dimensions(level):
        lines.append(f"- {dimension}: " + "; ".join(QUESTION_SPACE[level][dimension]))
    return "\n".join(lines)
