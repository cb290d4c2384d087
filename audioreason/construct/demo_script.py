"""The script of the demo recording: a short community radio programme read by espeak-ng voices, with sound
events at fixed places (``audioreason.construct.demo_audio`` renders it).

It is written so that AudioSpan-style questions have something to hold on to (AudioSpan (arXiv:2608.26431)
§4.2-4.3): several segments on distinct topics, four voices, non-speech events that the speech comments on, a
cause in one segment with its effect in another (Thursday's rain moves the market indoors), a later reference to
an earlier segment (the host repeats the reporter's warning) and a contrast (the old bakery against the new
cafe).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Speaker:
    id: str
    voice: str  # espeak-ng voice and variant, e.g. "en-us+m3"
    speed: int  # espeak-ng words per minute
    description: str
    role: str


@dataclass(frozen=True)
class Line:
    speaker: str
    text: str


@dataclass(frozen=True)
class Sound:
    label: str  # one of demo_audio's sound makers: doorbell, knock, rain, phone


@dataclass(frozen=True)
class Section:
    title: str
    items: tuple  # Line and Sound, in order


SPEAKERS = {
    "host": Speaker("host", "en-us+m3", 160, "male voice, American accent, even pace", "programme host"),
    "reporter": Speaker("reporter", "en-us+f2", 178, "female voice, American accent, brisk pace", "weather reporter"),
    "baker": Speaker("baker", "en+f4", 140, "female voice, British accent, slow pace", "interviewed baker"),
    "announcer": Speaker("announcer", "en+m7", 185, "male voice, British accent, fast pace", "announcer"),
}


def _lines(speaker: str, *texts: str) -> tuple:
    return tuple(Line(speaker, text) for text in texts)


SECTIONS = (
    Section(
        "Opening",
        _lines(
            "host",
            "Good morning, and welcome to Riverside Morning, the community programme for the town of Millbrook.",
            "I am your host, Daniel Hayes, and today is Tuesday, the fourteenth of March.",
            "In this programme we have the weather for the week, a visit to the oldest bakery in town, "
            "and the community announcements.",
            "Let us start with the weather. Here is Clara Jensen.",
        ),
    ),
    Section(
        "Weather for the week",
        _lines("reporter", "Thank you, Daniel. First, a sound from last week's storm, sent in by a listener.")
        + (Sound("rain"),)
        + _lines(
            "reporter",
            "Today will stay dry and bright, with a high of fourteen degrees.",
            "Tomorrow, clouds move in from the west, and the wind turns to the north.",
            "On Thursday afternoon, heavy rain is expected, up to thirty millimetres in a few hours.",
            "The river may rise close to the footpath by the old mill, so please avoid it on Thursday evening.",
            "By Friday the rain clears, and the weekend looks cool but sunny, around eleven degrees.",
            "That is the weather. Back to you, Daniel.",
        ),
    ),
    Section(
        "A visit to the Corner Loaf bakery",
        _lines(
            "host",
            "This week I visited the Corner Loaf, the bakery on Station Road.",
            "Maria Lopez, thank you for having me. How long has the bakery been here?",
        )
        + _lines("baker", "My grandmother opened it in nineteen sixty two, so it is more than sixty years old now.")
        + _lines("host", "Which bread do people ask for most?")
        + _lines("baker", "The rye sourdough. It takes two full days, because the dough has to rest overnight twice.")
        + (Sound("doorbell"),)
        + _lines(
            "baker",
            "Excuse me, that is the shop bell. We have a customer at the front.",
            "Sorry about that. It was Mister Grant, he comes every morning for two croissants.",
        )
        + _lines("host", "I heard that your oven broke last winter. What happened?")
        + _lines(
            "baker",
            "The old oven cracked in January, so for three weeks we baked at the Italian restaurant next door.",
            "Because of that, we bought a new electric oven, and now the bread is ready an hour earlier.",
        )
        + (Sound("knock"),)
        + _lines("baker", "And that knocking is the flour delivery at the back door.")
        + _lines("host", "Thank you, Maria. The Corner Loaf opens at six every morning, except on Sundays."),
    ),
    Section(
        "Community announcements",
        _lines(
            "announcer",
            "Here are this week's community announcements.",
            "Because of the heavy rain expected on Thursday, the farmers market moves indoors, to the school gym.",
            "The public library will close early on Thursday, at four in the afternoon.",
            "The town choir is looking for new singers. Rehearsals are on Monday evenings in the church hall.",
            "And finally, a small brown terrier with a red collar was found near the station.",
            "If he is yours, please call the radio station.",
        ),
    ),
    Section(
        "Closing",
        (Sound("phone"),)
        + _lines(
            "host",
            "The phone is ringing already. Perhaps that is the terrier's owner.",
            "Before we go, a reminder of what Clara told us earlier: take an umbrella on Thursday, "
            "and stay away from the footpath by the old mill.",
            "The Corner Loaf has been baking for more than sixty years, "
            "while the new cafe on Main Street opened only last month.",
            "That is all for today. Thank you for listening to Riverside Morning, and see you next Tuesday.",
        ),
    ),
)

# The links between sections that questions can test (indices into SECTIONS).
DEPENDENCIES = (
    {
        "kind": "causal",
        "from_segment": 1,
        "to_segment": 3,
        "description": "The heavy rain forecast for Thursday is why the farmers market moves indoors and the "
        "library closes early.",
    },
    {
        "kind": "reference",
        "from_segment": 4,
        "to_segment": 1,
        "description": "The host repeats the weather reporter's advice: an umbrella on Thursday, and avoid the "
        "footpath by the old mill.",
    },
    {
        "kind": "contrast",
        "from_segment": 4,
        "to_segment": 2,
        "description": "The bakery has been open for more than sixty years; the new cafe on Main Street opened "
        "only last month.",
    },
)
