"""deploy/helm/memory-portal read as text, without helm: Chart.yaml and values.yaml parse;
every `.Values` path a template reads exists in values.yaml; every `include` names a
`define`; template blocks open and close; and the chart keeps what the deployment relies
on (probes, read-only root, non-root user, the migration Job, entry point commands that
exist). tests/unit/test_chart.py renders it with helm and validates the objects against
Kubernetes' schemas."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "memory-portal"
ENTRYPOINT = CHART.parents[1] / "entrypoint.sh"
TEMPLATES = sorted((CHART / "templates").glob("*"))
ACTION = re.compile(r"{{-?\s*(.*?)\s*-?}}", re.DOTALL)


def values() -> dict:
    return yaml.safe_load((CHART / "values.yaml").read_text())


def actions(path: Path) -> list[str]:
    return ACTION.findall(path.read_text())


def test_chart_and_values_parse():
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2" and chart["name"] == "memory-portal"
    assert isinstance(values()["config"], dict)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda path: path.name)
def test_every_values_path_exists(template: Path):
    known = values()
    for action in actions(template):
        for path in re.findall(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)", action):
            node = known
            for part in path.strip(".").split("."):
                assert isinstance(node, dict) and part in node, f"{template.name}: .Values{path}"
                node = node[part]


def test_every_include_is_defined():
    defined = {
        name
        for template in TEMPLATES
        for action in actions(template)
        for name in re.findall(r'^define "([^"]+)"', action)
    }
    for template in TEMPLATES:
        for action in actions(template):
            for name in re.findall(r'include "([^"]+)"', action):
                assert name in defined, f"{template.name}: include {name!r}"


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda path: path.name)
def test_blocks_open_and_close(template: Path):
    text = template.read_text()
    assert text.count("{{") == text.count("}}")
    depth = 0
    for action in actions(template):
        if re.match(r"(if|range|with|define)\b", action):
            depth += 1
        elif action == "end":
            depth -= 1
            assert depth >= 0, template.name
    assert depth == 0, template.name


def test_the_chart_keeps_what_the_deployment_relies_on():
    helpers = (CHART / "templates" / "_helpers.tpl").read_text()
    deployment = (CHART / "templates" / "deployment.yaml").read_text()
    migration = (CHART / "templates" / "migration-job.yaml").read_text()
    assert "readOnlyRootFilesystem: true" in helpers
    assert "runAsNonRoot: true" in helpers
    assert "mountPath: /tmp" in helpers
    assert re.search(r"livenessProbe:\s+httpGet:\s+path: /livez", deployment)
    assert re.search(r"readinessProbe:\s+httpGet:\s+path: /readyz", deployment)
    assert "terminationGracePeriodSeconds" in deployment
    # An ordinary Job of the release (issue 19: hooks are not restored by a rollback), and
    # the portal's pods wait for its migrations.
    assert "kind: Job" in migration and "helm.sh/hook" not in migration
    assert '"wait-for-migrations"' in deployment
    # Workload identity's label, shared by every pod (rendered: tests/unit/test_chart.py).
    assert "azure.workload.identity/use" in helpers
    assert 'include "memory-portal.podLabels"' in deployment


def test_containers_run_entry_point_commands_that_exist():
    script = ENTRYPOINT.read_text()
    for template in TEMPLATES:
        for command in re.findall(r'args: \["([a-z-]+)"', template.read_text()):
            assert re.search(rf"^\s+{command}\)", script, re.MULTILINE), command
