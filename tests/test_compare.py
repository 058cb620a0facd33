"""Signal or noise in `report`: Wilson intervals, the exact sign test and the paired interval, on known figures, and
the report's comparison of every configuration with Direct on the same problems."""

from __future__ import annotations

import pytest

from solidcoder.bench.compare import paired, sign_test, wilson
from solidcoder.store import ResultRow, ResultStore


def test_wilson_matches_the_published_interval_for_30_of_40():
    low, high = wilson(30, 40)  # Wilson (1927) score interval, z = 1.96: [0.5981, 0.8581]
    assert (round(low, 4), round(high, 4)) == (0.5981, 0.8581)


def test_wilson_stays_inside_zero_and_one_at_the_extremes():
    assert wilson(40, 40)[1] == 1.0 and wilson(0, 40)[0] == 0.0 and wilson(40, 40)[0] > 0.9
    assert wilson(0, 0) == (0.0, 1.0)  # no problems: no information


@pytest.mark.parametrize(("wins", "losses", "p"), [(6, 1, 16 / 128), (5, 0, 2 / 32), (3, 3, 1.0), (0, 0, 1.0),
                                                   (10, 2, 2 * (1 + 12 + 66) / 4096)])
def test_the_sign_test_is_exact_and_two_sided(wins, losses, p):
    assert sign_test(wins, losses) == pytest.approx(p) and sign_test(losses, wins) == pytest.approx(p)


def test_paired_counts_wins_and_losses_on_the_common_problems_only():
    first = {"a": 1.0, "b": 1.0, "c": 0.0, "d": 1.0, "only-first": 1.0}
    second = {"a": 0.0, "b": 1.0, "c": 1.0, "d": 0.0, "only-second": 0.0}
    found = paired(first, second)
    assert (found.problems, found.wins, found.losses) == (4, 2, 1) and found.difference == pytest.approx(0.25)
    # differences 1, 0, -1, 1: sample sd 0.9574, half width 1.96 * 0.9574 / 2
    assert found.difference - found.low == pytest.approx(1.959964 * 0.957427 / 2, rel=1e-4)  # high: clamped at 1
    assert found.p_sign == pytest.approx(1.0) and found.line().startswith("+25.0 points [")


def test_the_paired_interval_of_a_few_problems_stays_inside_a_hundred_points():
    found = paired({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 0.0, "b": 0.0, "c": 1.0})  # +66.7, sd 0.577, n = 3
    assert (found.low, found.high) == (pytest.approx(2 / 3 - 1.959964 * 0.57735 / 3 ** 0.5, rel=1e-4), 1.0)


def test_report_compares_each_configuration_with_direct_on_the_problems_both_finished(tmp_path):
    from solidcoder.bench.report import comparison_lines, interval_lines, load_summaries

    store = ResultStore(tmp_path)
    outcomes = {"direct": "1100000000", "solidcoder-routed": "1111111011"}
    for strategy, passes in outcomes.items():
        for i, flag in enumerate(passes):
            store.add_result(ResultRow(key=f"{strategy}{i}", id=f"p{i}", passed=flag == "1", dataset="d",
                                       strategy=strategy, model="m", config_hash=strategy))
    store.close()
    summaries = load_summaries([tmp_path])
    # differences: seven 1s, three 0s; sd 0.4830, half width 1.96 * 0.4830 / sqrt(10) = 0.2994
    assert comparison_lines(summaries) == ["d solidcoder-routed (m) against direct (m): +70.0 points [+40.1, +99.9] "
                                           "(paired 95 %), won 7, lost 0 of 10, sign test p = 0.016"]
    assert interval_lines(summaries)[0] == "d direct (m): pass@1 20.0 % [5.7, 51.0] (95 %, 10 problems)"
