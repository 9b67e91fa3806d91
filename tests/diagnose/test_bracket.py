"""The capacity search the load curve and the plan share: the answer is the highest load that fits below the first
that misses, and a round places two loads at the bracket's thirds."""
from __future__ import annotations

from reader.diagnose.bracket import narrow, split, thirds


def test_the_answer_is_the_highest_fit_below_the_first_miss_even_if_a_heavier_load_fits_again():
    assert split({1.0: True, 2.0: True, 4.0: False, 8.0: True}) == (2.0, 4.0)
    assert split({1.0: True, 2.0: True}) == (2.0, None)
    assert split({1.0: False, 2.0: True}) == (None, 1.0)


def test_clients_come_in_whole_numbers_strictly_inside_the_bracket():
    assert thirds(3.0, 9.0, integral=False) == [5.0, 7.0]
    assert thirds(3.0, 9.0, integral=True) == [5.0, 7.0]
    assert thirds(3.0, 4.0, integral=True) == []


def test_a_round_runs_the_thirds_and_answers_from_every_load_tried():
    tried = {10.0: True, 40.0: False}
    asked = []

    def run(loads):
        asked.append(loads)
        tried.update({x: x < 25.0 for x in loads})
        return tried

    assert narrow(dict(tried), run, rounds=1, integral=False) == (20.0, 30.0)
    assert asked == [[20.0, 30.0]]


def test_without_a_fit_the_floor_is_the_bottom_and_without_one_nothing_runs():
    def run(loads):
        return {x: True for x in loads} | {9.0: False}

    assert narrow({9.0: False}, run, rounds=1, integral=False, floor=3.0) == (7.0, 9.0)
    assert narrow({9.0: False}, lambda loads: 1 / 0, rounds=1, integral=False) == (None, 9.0)
