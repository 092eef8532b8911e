"""TAGME's parsing (methods.md §6, step 1) costs time linear in the query's length: the spots of
random token sequences over the demo knowledge base's vocabulary equal those of the definition
(every dictionary span with lp >= min_lp, less those inside a longer spot of higher lp), and the
Python calls made to spot a text 8 times as long are at most about 8 times as many (a quadratic
containment check makes them about 50 times as many at these lengths). No timing: calls are
counted with :func:`sys.setprofile`."""

from __future__ import annotations

import random
import sys
from typing import Any

import pytest

from elquery.linking.tagme import TagmeLinker
from elquery.linking.tagme.annotator import Spot
from elquery.linking.types import Mention

PHRASES = ("new york", "new york pizza", "new york city", "manhattan", "the music man", "total recall",
           "arnold schwarzenegger", "greenwich village", "cafe wha", "nyc", "obama", "barack obama", "mother",
           "hawaii", "honolulu", "pizza", "style", "klm", "of", "the")
"""Phrases of the demo's anchor texts (several nest: "new york" in "new york pizza") and others."""


def spots_by_definition(linker: TagmeLinker, tokens: list[str]) -> list[Spot]:
    """Step 1 of methods.md §6 as written: all spans, then the containment rule over all pairs."""
    dictionary, params = linker.artefact.dictionary, linker.params
    found = []
    for start in range(len(tokens)):
        for end in range(start + 1, min(start + params.max_tokens, len(tokens)) + 1):
            stats = dictionary.form(" ".join(tokens[start:end]))
            if stats is not None and stats.link_probability >= params.min_lp:
                senses = tuple(dictionary.senses(stats, params.min_commonness))
                found.append(Spot(Mention(stats.form, start, end), stats.link_probability, senses))
    return [s for s in found if not any(
        o.mention.start <= s.mention.start and s.mention.end <= o.mention.end and o.mention.length > s.mention.length
        and o.link_probability > s.link_probability for o in found)]


def calls(function: Any, *args: Any) -> int:
    """The Python and C function calls (and generator resumptions) ``function(*args)`` makes."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1
    sys.setprofile(profile)
    try:
        function(*args)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("seed", range(6))
def test_spots_are_those_of_the_definition(demo_tagme: TagmeLinker, seed: int) -> None:
    chooser = random.Random(seed)
    tokens = [token for _ in range(chooser.randint(20, 150)) for token in chooser.choice(PHRASES).split()]
    expected = spots_by_definition(demo_tagme, tokens)
    assert demo_tagme.spots(tokens) == expected
    assert any(s.mention.length > 1 for s in expected)  # multi-token spots are found, so the rule is exercised


def test_nested_spots_follow_the_containment_rule(demo_tagme: TagmeLinker) -> None:
    tokens = "new york pizza in manhattan new york".split()
    spans = {(s.mention.start, s.mention.end): s for s in demo_tagme.spots(tokens)}
    assert spans.keys() == {(s.mention.start, s.mention.end) for s in spots_by_definition(demo_tagme, tokens)}
    assert (0, 3) in spans  # "new york pizza"


def test_the_spots_of_a_text_8_times_as_long_cost_at_most_about_8_times_the_calls(demo_tagme: TagmeLinker) -> None:
    # a text dense in spots: "new york pizza manhattan" repeated gives every token a spot
    text = "new york pizza manhattan".split()
    short, long = (text * (n // len(text)) for n in (200, 1600))
    assert len(demo_tagme.spots(long)) == 8 * len(demo_tagme.spots(short)) > 0
    ratio = calls(demo_tagme.spots, long) / calls(demo_tagme.spots, short)
    assert ratio <= 9, f"spotting 8x the tokens made {ratio:.1f}x the calls"


def test_a_long_text_of_no_spots_is_parsed_in_calls_linear_in_its_length(demo_tagme: TagmeLinker) -> None:
    short, long = ["klm"] * 500, ["klm"] * 4000
    assert demo_tagme.spots(long) == []
    assert calls(demo_tagme.spots, long) / calls(demo_tagme.spots, short) <= 9

