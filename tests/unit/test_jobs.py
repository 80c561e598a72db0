"""Shards of a tenant-wide job's list (memory_ui/jobs.py): disjoint, complete, stable."""

from __future__ import annotations

import pytest

from memory_ui.jobs import Shard, job_digest, shard_parse, shard_people

PEOPLE = [f"person{n:05d}@contoso.com" for n in range(10_000)]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 16])
def test_shards_of_one_list_never_share_a_person_and_cover_everyone(count: int):
    shards = [shard_people(PEOPLE, Shard(index, count)) for index in range(count)]

    assert sorted(upn for shard in shards for upn in shard) == sorted(PEOPLE)
    assert sum(len(shard) for shard in shards) == len(PEOPLE)
    # Even enough that N pods take about as long as each other.
    assert max(map(len, shards)) < 1.1 * len(PEOPLE) / count


def test_a_person_keeps_their_shard_whatever_the_list_around_them():
    shard = Shard(1, 4)
    mine = shard_people(PEOPLE, shard)

    assert shard_people(list(reversed(PEOPLE)), shard) == list(reversed(mine))
    assert set(shard_people(PEOPLE[::2], shard)) == set(mine) & set(PEOPLE[::2])
    assert shard.takes(mine[0].upper())


def test_shard_is_index_of_count():
    assert shard_parse("3/4") == Shard(3, 4) and str(Shard(3, 4)) == "3/4"
    for bad in ("4/4", "-1/4", "1/0", "1", "a/b", "1/2/3"):
        with pytest.raises(ValueError, match="is not a shard"):
            shard_parse(bad)


def test_the_job_is_its_list_and_options_not_its_shard():
    assert job_digest("move", "store", "a@x") == job_digest("move", "store", "a@x")
    assert job_digest("move", "store", "a@x") != job_digest("move", "store", "b@x")
