from headroom_plot.runs import instances_text, label_adds


def test_instances_text():
    assert instances_text(None) is None
    assert instances_text(1) == "1 instance"
    assert instances_text(4) == "4 instances"


def test_label_that_repeats_the_count_is_not_shown_twice():
    assert not label_adds("2-instances", 2)
    assert not label_adds("1-instance", 1)
    assert not label_adds("", 3)


def test_label_with_information_is_kept():
    assert label_adds("2-instances", 4)      # disagrees with meta: keep it visible
    assert label_adds("prod-like", 2)
    assert label_adds("2-instances", None)
