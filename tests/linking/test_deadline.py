"""The deadline of a call's work (elquery.linking.deadline): TAGME's loops stop once it has passed,
an enclosing earlier deadline holds within a later one, and a deadline holds only in the thread
(context) it was set in."""

from __future__ import annotations

import threading
import time

import pytest

from elquery.linking.deadline import OutOfTime, check_deadline, deadline, within
from elquery.linking.tagme import TagmeLinker

TOKENS = "new york pizza manhattan".split() * 50


def test_tagme_stops_at_a_passed_deadline(demo_tagme: TagmeLinker) -> None:
    assert demo_tagme.spots(TOKENS)  # no deadline: the work is done
    with deadline(time.monotonic() - 1), pytest.raises(OutOfTime):
        demo_tagme.spots(TOKENS)
    with pytest.raises(OutOfTime):
        within(time.monotonic() - 1, demo_tagme.annotate_tokens, TOKENS)
    assert within(time.monotonic() + 60, demo_tagme.annotate_tokens, TOKENS) == demo_tagme.annotate_tokens(TOKENS)


def test_an_earlier_enclosing_deadline_holds() -> None:
    with deadline(time.monotonic() - 1):
        with deadline(time.monotonic() + 60), pytest.raises(OutOfTime):
            check_deadline()
    check_deadline()  # none after the block


def test_a_deadline_holds_in_its_own_thread_only() -> None:
    raised: list[bool] = []

    def other() -> None:
        try:
            check_deadline()
            raised.append(False)
        except OutOfTime:
            raised.append(True)
    with deadline(time.monotonic() - 1):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert raised == [False]
