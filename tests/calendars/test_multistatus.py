"""The one rule for a multistatus answer's status (multistatus.answered), for every request the reader sends."""
from __future__ import annotations

import pytest

from resolver.calendars.caldav.http import Answer
from resolver.calendars.caldav.multistatus import Multistatus, answered
from resolver.domain.errors import CalendarUnavailable

FOUND = Multistatus(responses=[])


def reason(answer: Answer, *, required: bool) -> str:
    with pytest.raises(CalendarUnavailable) as err:
        answered(answer, required=required)
    return str(err.value.details["reason"])


@pytest.mark.parametrize("required", [True, False])
def test_multistatus_rule__401_is_the_credentials_whatever_was_asked(required: bool) -> None:
    assert reason(Answer(401), required=required) == "unauthorized"


def test_multistatus_rule__a_required_answer_must_be_a_multistatus() -> None:
    assert answered(Answer(207, FOUND)) is FOUND and answered(Answer(200, FOUND)) is FOUND
    assert reason(Answer(403), required=True) == "forbidden"
    assert reason(Answer(500), required=True) == "http_500"
    assert reason(Answer(207), required=True) == "http_207"  # a body that did not parse as one


def test_multistatus_rule__an_optional_answer_is_a_207_multistatus_or_nothing() -> None:
    assert answered(Answer(207, FOUND), required=False) is FOUND
    assert answered(Answer(200, FOUND), required=False) is None
    assert answered(Answer(403), required=False) is None
    assert answered(Answer(409), required=False) is None
