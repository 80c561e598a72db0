"""A target's rows (web/item_rows.py) say an item's age as Django's `timesince` does, though
they work it out once per minute of age: the words must be the same for every age, also
at the boundaries of minutes, hours, days and the four weeks past which calendar months
count, and two ages a minute apart must never share them."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils.timesince import timesince

from memory_ui.web.item_rows import _ago

AT = dt.datetime(2026, 3, 31, 12, 0, 30, 500_000, tzinfo=dt.UTC)
AGES = [
    dt.timedelta(minutes=-5),
    dt.timedelta(0),
    dt.timedelta(seconds=59, microseconds=999_999),
    dt.timedelta(minutes=1),
    dt.timedelta(minutes=1, seconds=59),
    dt.timedelta(minutes=59, seconds=30),
    dt.timedelta(hours=1),
    dt.timedelta(hours=1, minutes=1),
    dt.timedelta(days=1, hours=3, minutes=7),
    dt.timedelta(days=6, hours=23, minutes=59),
    dt.timedelta(days=7),
    dt.timedelta(days=27, hours=23, minutes=59, seconds=59),
    dt.timedelta(days=28),
    dt.timedelta(days=31, minutes=1),
    dt.timedelta(days=45),
    dt.timedelta(days=400),
]


@pytest.mark.parametrize("age", AGES, ids=str)
def test_an_age_is_said_as_timesince_says_it(age: dt.timedelta) -> None:
    updated = AT - age
    assert _ago(updated, AT, {}) == f"{timesince(updated, AT)} ago"


def test_rows_of_one_page_share_the_words_only_within_a_minute() -> None:
    said: dict[int, str] = {}
    ages = [*AGES, dt.timedelta(seconds=30), dt.timedelta(minutes=1, seconds=30)]
    for age in ages + ages[::-1]:  # each age again, once its minute's words are kept
        updated = AT - age
        assert _ago(updated, AT, said) == f"{timesince(updated, AT)} ago"
    assert _ago(AT - dt.timedelta(seconds=1), AT, said) == "0\xa0minutes ago"
    assert _ago(AT - dt.timedelta(seconds=61), AT, said) == "1\xa0minute ago"
