"""How the portal says when something happened (`{{ when|ago }}`)."""

from datetime import UTC, datetime, timedelta

import pytest

from memory_ui.templatetags.memory_time import ago

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("before", "said"),
    [
        (timedelta(0), "just now"),
        (timedelta(seconds=59), "just now"),
        (timedelta(seconds=-30), "just now"),  # another clock a little ahead
        (timedelta(minutes=1), "1\xa0minute ago"),
        (timedelta(days=3, hours=2), "3\xa0days, 2\xa0hours ago"),
    ],
)
def test_ago(before: timedelta, said: str):
    assert ago(NOW - before, NOW) == said
