"""The level rules file: parsing, errors that name file, line and key, group matching and the
clearance precedence (flag > own property > [[pair]] > groups > defaults)."""

import math

import numpy as np
import pytest

from convex_tools.core.rules import EntryInfo, Rules, RulesError

EXAMPLE = """\
[defaults]
clearance = 0.1
touch_tolerance = 0.0002
floating = 0.02
support_angle = 30
severity = "warning"

[severity]
floating = "error"

[groups.props]
names = ["Crate*", "Barrel*"]
collections = ["Props"]
must_rest = true
embed = 0.02
clearance = 0.05
severity = "warning"

[groups.doors]
names = ["Door*"]
clearance = 0.6

[groups.decals]
property = "decal=true"

[groups.walls]
collections = ["Walls"]
static = true

[[pair]]
groups = ["props", "props"]
clearance = 0.0

[[pair]]
groups = ["decals", "*"]
ignore = true
"""


def info(name, collections=(), **properties):
    return EntryInfo(name, name, tuple(collections), dict(properties), mover=name)


def test_the_issue_example_parses_with_every_key():
    rules = Rules.from_text(EXAMPLE, "level.toml")
    d = rules.defaults
    assert (d["clearance"], d["touch_tolerance"], d["floating"], d["support_angle"],
            d["severity"]) == (0.1, 0.0002, 0.02, 30.0, "warning")
    assert rules.severity_by_kind == {"floating": "error"}
    assert [g.name for g in rules.groups] == ["props", "doors", "decals", "walls"]
    props = rules.groups[0]
    assert props.names == ("Crate*", "Barrel*") and props.collections == ("Props",)
    assert (props.must_rest, props.embed, props.clearance, props.severity) == \
        (True, 0.02, 0.05, "warning")
    assert rules.groups[2].property == ("decal", "true")
    assert [(p.groups, p.clearance, p.ignore) for p in rules.pairs] == \
        [(("props", "props"), 0.0, None), (("decals", "*"), None, True)]
    assert rules.warnings == [] and len(rules.sha256) == 64


def test_an_object_belongs_to_the_first_group_that_matches_it():
    rules = Rules.from_text(EXAMPLE)
    assign = rules.assign([info("Crate.001"), info("Door.001", ["Props"]),
                           info("Sticker", decal=True), info("Wall", ["Walls"]),
                           info("Lamp")])
    assert [g.name if g else None for g in assign.group_of] == \
        ["props", "props", "decals", "walls", None]


def test_static_is_the_group_setting_a_passive_body_or_a_triangle_mesh():
    rules = Rules.from_text(EXAMPLE)
    infos = [info("Wall", ["Walls"]), EntryInfo("Ramp", passive=True),
             EntryInfo("Terrain", is_mesh=True), info("Crate")]
    assign = rules.assign(infos)
    assert assign.static.tolist() == [True, True, True, False]
    # A static object never must rest, even in a must-rest group.
    assert assign.must_rest.tolist() == [False, False, False, True]


def test_a_group_matches_by_property_value_or_presence():
    rules = Rules.from_text('[groups.a]\nproperty = "kind=3"\n[groups.b]\nproperty = "tag"\n')
    assign = rules.assign([info("x", kind=3), info("y", kind="3"), info("z", kind=4),
                           info("w", tag="anything")])
    assert [g.name if g else None for g in assign.group_of] == ["a", "a", None, "b"]


def pair_clearance(rules, infos, flag=None, own=None):
    assign = rules.assign(infos)
    n = len(infos)
    assign.clearance_levels(np.full(n, np.nan) if flag is None else flag,
                            np.full(n, np.nan) if own is None else own)
    pairs = np.array([[0, 1]])
    value, which, labels = assign.pair_clearance(pairs)
    return float(value[0]), labels[int(which[0])]


def test_precedence_defaults():
    rules = Rules.from_text("[defaults]\nclearance = 0.1\n")
    assert pair_clearance(rules, [info("A"), info("B")]) == (0.1, "defaults")


def test_precedence_groups_beat_defaults_and_the_larger_group_value_wins():
    rules = Rules.from_text(EXAMPLE)
    assert pair_clearance(rules, [info("Crate"), info("Door")]) == (0.6, "groups")
    # One group without a clearance: the other group's value.
    assert pair_clearance(rules, [info("Door"), info("Lamp")]) == (0.6, "groups")


def test_precedence_a_pair_rule_beats_the_groups():
    rules = Rules.from_text(EXAMPLE)
    assert pair_clearance(rules, [info("Crate"), info("Barrel")]) == (0.0, "pair props/props")


def test_precedence_named_pairs_before_star_and_later_before_earlier():
    text = EXAMPLE + """
[[pair]]
groups = ["props", "*"]
clearance = 0.3
[[pair]]
groups = ["props", "*"]
clearance = 0.2
"""
    rules = Rules.from_text(text)
    # props/props is more specific than props/* (even though it comes earlier).
    assert pair_clearance(rules, [info("Crate"), info("Barrel")]) == (0.0, "pair props/props")
    # Of two props/* rules the later wins.
    assert pair_clearance(rules, [info("Crate"), info("Lamp")]) == (0.2, "pair props/*")


def test_precedence_an_own_property_beats_the_rules_for_its_object():
    rules = Rules.from_text(EXAMPLE)
    # The crate's own 0.4 replaces props/props' 0 for it: the pair keeps the larger, 0.4.
    value = pair_clearance(rules, [info("Crate"), info("Barrel")], own=np.array([0.4, np.nan]))
    assert value == (0.4, "property convex_clearance")
    # An own 0 does not lower what the other object needs (a door keeps its 0.6).
    value = pair_clearance(rules, [info("Crate"), info("Door")], own=np.array([0.0, np.nan]))
    assert value == (0.6, "groups")


def test_precedence_a_flag_beats_the_own_property():
    rules = Rules.from_text(EXAMPLE)
    value = pair_clearance(rules, [info("Crate"), info("Barrel")],
                           flag=np.array([0.25, np.nan]), own=np.array([0.4, np.nan]))
    assert value == (0.25, "flag --object-clearance")


def test_the_clearance_flag_replaces_the_defaults():
    rules = Rules.from_text(EXAMPLE).with_flags(clearance=0.3)
    assert pair_clearance(rules, [info("A"), info("B")]) == (0.3, "flag --clearance")


def test_ignore_pairs_by_group_and_star():
    rules = Rules.from_text(EXAMPLE)
    assign = rules.assign([info("Sticker", decal=True), info("Crate"), info("Lamp")])
    pairs = np.array([[0, 1], [1, 2], [2, 0]])
    assert assign.ignored_pairs(pairs).tolist() == [True, False, True]


def test_severity_pair_then_group_then_kind_then_defaults():
    rules = Rules.from_text(EXAMPLE + '[[pair]]\ngroups = ["doors", "*"]\nseverity = "error"\n')
    props, doors = rules.groups[0], rules.groups[1]
    assert rules.severity_for("overlap", (props, None)) == ("warning", "group props")
    assert rules.severity_for("floating", (None, None)) == ("error", "severity.floating")
    assert rules.severity_for("overlap", (None, None)) == ("warning", "defaults")
    pair = rules.pairs[-1]
    assert rules.severity_for("overlap", (props, doors), pair) == ("error", "pair doors/*")


@pytest.mark.parametrize("text,line,key", [
    ("[defaults]\nclearance = -1\n", 2, "defaults.clearance"),
    ("[defaults]\nclearance = 'wide'\n", 2, "defaults.clearance"),
    ("[defaults]\nsupport_angle = 95\n", 2, "defaults.support_angle"),
    ("[defaults]\nseverity = 'fatal'\n", 2, "defaults.severity"),
    ("[defaults]\nengine = 'unity'\n", 2, "defaults.engine"),
    ("\n[groups.props]\nnames = ['A*']\nembed = true\n", 4, "groups.props.embed"),
    ("[groups.props]\nmust_rest = 1\nnames = ['A']\n", 2, "groups.props.must_rest"),
    ("[groups.props]\nclearance = 0.1\n", 1, "groups.props"),
    ("[groups.a]\nnames = ['A']\n[[pair]]\ngroups = ['a', 'b']\n", 4, "pair.groups"),
    ("[groups.a]\nnames = ['A']\n[[pair]]\ngroups = ['a']\n", 4, "pair.groups"),
    ("[[pair]]\ngroups = ['*', '*']\nignore = 'yes'\n", 3, "pair.ignore"),
    ("[traversal]\nagent_radius = -0.3\n", 2, "traversal.agent_radius"),
])
def test_a_rules_error_names_file_line_and_key(text, line, key):
    with pytest.raises(RulesError) as error:
        Rules.from_text(text, "level.toml")
    message = str(error.value)
    assert message.startswith(f"level.toml:{line}: {key}: "), message


def test_bad_toml_names_the_file_and_line():
    with pytest.raises(RulesError, match=r"level.toml: .*line 2"):
        Rules.from_text("[defaults]\nclearance = = 1\n", "level.toml")


def test_a_missing_file_is_a_rules_error(tmp_path):
    with pytest.raises(RulesError, match="cannot read the rules file"):
        Rules.from_file(tmp_path / "nope.toml")


def test_unknown_keys_are_warnings_with_their_line():
    rules = Rules.from_text("[defaults]\nclearence = 0.1\n[groups.a]\nnames = ['A']\n"
                            "colour = 'red'\n[extras]\n", "level.toml")
    assert rules.warnings == ["level.toml:2: unknown key defaults.clearence (ignored)",
                              "level.toml:5: unknown key groups.a.colour (ignored)",
                              "level.toml:6: unknown key extras (ignored)"]


def test_a_group_that_matches_nothing_is_reported():
    rules = Rules.from_text(EXAMPLE)
    assign = rules.assign([info("Crate"), info("Door")])
    assert rules.unmatched_groups(assign) == ["decals", "walls"]


def test_traversal_keys_are_read():
    rules = Rules.from_text("[traversal]\nagent_radius = 0.4\nstart = ['PlayerStart', "
                            "[1, 2, 3]]\nmin_area = 2\n")
    assert rules.traversal == {"agent_radius": 0.4, "start": ["PlayerStart", [1, 2, 3]],
                               "min_area": 2.0}


def test_flags_replace_defaults_and_are_remembered():
    rules = Rules.from_text(EXAMPLE).with_flags(touch_tolerance=0.001, clearance=None)
    assert rules.defaults["touch_tolerance"] == 0.001 and rules.flagged == {"touch_tolerance"}
    assert rules.defaults["clearance"] == 0.1
    with pytest.raises(ValueError):
        Rules().with_flags(touch_tolerance=math.nan)
