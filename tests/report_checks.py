"""Checks of the level check's reports shared by the core and Blender tests: a JSON Schema
validator for the subset ``docs/report.schema.json`` uses (stdlib only: the project takes no
test dependency for it), and the required fields of JUnit XML and SARIF 2.1.0.

Subset: type (a name or a list), const, enum, properties, required, additionalProperties
(false or a schema), items, minItems, maxItems, minimum, pattern, anyOf, $ref to "#/$defs/...".
A keyword outside it is an error, so that the schema cannot silently say more than is checked.
"""

import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_PATH = os.path.join(ROOT, "docs", "report.schema.json")

KNOWN = {"$schema", "$id", "$defs", "title", "description", "type", "const", "enum",
         "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
         "minimum", "pattern", "anyOf", "$ref"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is(value, name) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def errors(instance, schema, root=None, path="$") -> list:
    """Every way ``instance`` breaks ``schema`` (empty: it is valid)."""
    root = root if root is not None else schema
    unknown = set(schema) - KNOWN
    if unknown:
        raise ValueError(f"schema keyword(s) outside the validated subset at {path}: {unknown}")
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(instance, root["$defs"][name], root, path)
    out = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(instance, n) for n in names):
            return [f"{path}: {instance!r:.60} is not of type {names}"]
    if "const" in schema and instance != schema["const"]:
        out.append(f"{path}: {instance!r:.60} is not {schema['const']!r}")
    if "enum" in schema and instance not in schema["enum"]:
        out.append(f"{path}: {instance!r:.60} is not one of {schema['enum']}")
    if "anyOf" in schema:
        if all(errors(instance, s, root, path) for s in schema["anyOf"]):
            out.append(f"{path}: {instance!r:.60} matches none of anyOf")
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            if key not in instance:
                out.append(f"{path}: missing {key!r}")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in instance.items():
            if key in properties:
                out += errors(value, properties[key], root, f"{path}.{key}")
            elif extra is False:
                out.append(f"{path}: unexpected {key!r}")
            elif isinstance(extra, dict):
                out += errors(value, extra, root, f"{path}.{key}")
    if isinstance(instance, list):
        if len(instance) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            out.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for k, item in enumerate(instance):
                out += errors(item, schema["items"], root, f"{path}[{k}]")
    if _is(instance, "number") and "minimum" in schema and instance < schema["minimum"]:
        out.append(f"{path}: {instance} < {schema['minimum']}")
    if isinstance(instance, str) and "pattern" in schema and \
            not re.search(schema["pattern"], instance):
        out.append(f"{path}: {instance!r} does not match {schema['pattern']}")
    return out


def schema():
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def valid_report(report) -> dict:
    """``report`` (a dict, JSON text or a path) read and checked against the schema."""
    if isinstance(report, os.PathLike) or (isinstance(report, str) and
                                           not report.lstrip().startswith("{")):
        with open(report, encoding="utf-8") as f:
            report = f.read()
    if isinstance(report, str):
        report = json.loads(report)
    problems = errors(report, schema())
    assert not problems, "\n".join(problems[:20])
    return report


def junit_suites(text) -> dict:
    """JUnit XML parsed: {suite name: [(case name, "passed"/"failure"/"error", system-out)]},
    after checking the counts each suite and the root declare."""
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    suites = {}
    totals = [0, 0, 0]
    for suite in root.findall("testsuite"):
        cases = []
        for case in suite.findall("testcase"):
            assert case.get("name") and case.get("classname") == suite.get("name")
            state = "failure" if case.find("failure") is not None else \
                "error" if case.find("error") is not None else "passed"
            out = case.find("system-out")
            cases.append((case.get("name"), state, None if out is None else out.text))
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(c[1] == "failure" for c in cases)
        assert int(suite.get("errors")) == sum(c[1] == "error" for c in cases)
        totals = [totals[0] + len(cases), totals[1] + int(suite.get("failures")),
                  totals[2] + int(suite.get("errors"))]
        suites[suite.get("name")] = cases
    assert [int(root.get(k)) for k in ("tests", "failures", "errors")] == totals
    return suites


def sarif_results(text) -> list:
    """SARIF 2.1.0 checked for the fields the standard requires and code scanning reads:
    version, runs[].tool.driver.name, each result's message.text, ruleId naming a rule of the
    driver, ruleIndex pointing at it, level, and locations with an artifact URI."""
    log = json.loads(text)
    assert log["version"] == "2.1.0" and "sarif" in log["$schema"]
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "convex_tools" and driver["version"]
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(set(rule_ids)) == len(rule_ids)
    for r in driver["rules"]:
        assert r["shortDescription"]["text"]
    for result in sarif_run["results"]:
        assert result["message"]["text"]
        assert result["ruleId"] in rule_ids
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in ("none", "note", "warning", "error")
        for location in result["locations"]:
            assert location["physicalLocation"]["artifactLocation"]["uri"]
            for logical in location.get("logicalLocations", []):
                assert logical["name"]
        for suppression in result.get("suppressions", []):
            assert suppression["kind"] in ("inSource", "external")
    assert isinstance(sarif_run["invocations"][0]["executionSuccessful"], bool)
    return sarif_run["results"]


def check_every_report(folder) -> int:
    """Check every report a test left in ``folder``: JSON reports (those with a
    ``schema_version``) against the schema, JUnit XML (``*.xml``) and SARIF (``*.sarif``) for
    their required fields. The number checked."""
    checked = 0
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                continue
            if name.endswith(".json") and '"schema_version"' in text:
                valid_report(json.loads(text))
            elif name.endswith(".xml") and text.lstrip().startswith("<?xml"):
                junit_suites(text)
            elif name.endswith(".sarif"):
                sarif_results(text)
            else:
                continue
            checked += 1
    return checked


@pytest.fixture(autouse=True)
def every_report_is_valid(tmp_path):
    """Imported into a test module: after each of its tests, every report the test wrote is
    checked (``check_every_report``)."""
    yield
    check_every_report(tmp_path)
