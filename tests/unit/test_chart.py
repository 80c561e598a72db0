"""deploy/helm/memory-portal rendered by helm 3.17.3 (`./dev` sets it up and names it in
PORTAL_HELM): `helm lint --strict`, `helm template` with the documented AKS values
(ci/aks-values.yaml) and a Container Apps-like set (ci/container-apps-values.yaml), every
rendered object validated against the Kubernetes 1.30 and 1.33 schemas (strict:
unknown fields are errors), and what the chart promises checked on the rendered objects."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "memory-portal"
AKS = CHART / "ci" / "aks-values.yaml"
CONTAINER_APPS = CHART / "ci" / "container-apps-values.yaml"
KUBERNETES = ("1.30.0", "1.33.0")
# Custom resources, not in Kubernetes' schemas: checked by their own tests below.
CUSTOM_KINDS = {"SecretProviderClass"}


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    binary = os.environ.get("PORTAL_HELM", "")
    assert binary and Path(binary).is_file(), "PORTAL_HELM names no helm: run ./dev test"
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, check=False)


def render(*values: Path, release: str = "memory-portal", **settings: str) -> list[dict]:
    args = ["template", release, str(CHART)]
    for path in values:
        args += ["-f", str(path)]
    for name, value in settings.items():
        args += ["--set", f"{name}={value}"]
    result = helm(*args)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def refused(*values: Path, **settings: str) -> str:
    args = ["template", "memory-portal", str(CHART)]
    for path in values:
        args += ["-f", str(path)]
    for name, value in settings.items():
        args += ["--set", f"{name}={value}"]
    result = helm(*args)
    assert result.returncode != 0, result.stdout
    return result.stderr


def of_kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


def pod_templates(objects: list[dict]) -> dict[str, dict]:
    """Every pod the chart runs, by its workload's kind."""
    pods = {}
    for o in objects:
        if o["kind"] in ("Deployment", "Job"):
            pods[o["kind"]] = o["spec"]["template"]
        elif o["kind"] == "CronJob":
            pods["CronJob"] = o["spec"]["jobTemplate"]["spec"]["template"]
    return pods


def test_helm_lint_strict_with_each_value_set():
    for values in (AKS, CONTAINER_APPS):
        result = helm("lint", "--strict", str(CHART), "-f", str(values))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


@pytest.mark.parametrize("values", [AKS, CONTAINER_APPS], ids=["aks", "container-apps"])
@pytest.mark.parametrize("version", KUBERNETES)
def test_rendered_objects_are_valid_kubernetes(values: Path, version: str):
    objects = render(values)
    assert {"Deployment", "Service", "ConfigMap", "Job", "CronJob"} <= {o["kind"] for o in objects}
    for o in objects:
        if o["kind"] in CUSTOM_KINDS:
            continue
        kubernetes_validate.validate(o, version, strict=True)


@pytest.mark.parametrize("values", [AKS, CONTAINER_APPS], ids=["aks", "container-apps"])
def test_every_workload_that_runs_manage_py_gets_what_settings_need(values: Path):
    """The clearsessions CronJob lacked workload identity's label (issue 19): settings
    refused to load there. Every pod: the same environment, secrets, identity, /tmp."""
    objects = render(values)
    pods = pod_templates(objects)
    assert set(pods) == {"Deployment", "Job", "CronJob"}
    reference = pods["Deployment"]["spec"]["containers"][0]
    wi = yaml.safe_load(values.read_text())["workloadIdentity"]["enabled"]
    for kind, pod in pods.items():
        labels = pod["metadata"]["labels"]
        assert (labels.get("azure.workload.identity/use") == "true") is wi, kind
        assert pod["spec"]["serviceAccountName"] == pods["Deployment"]["spec"]["serviceAccountName"]
        assert pod["spec"]["volumes"] == pods["Deployment"]["spec"]["volumes"], kind
        for container in pod["spec"]["containers"] + pod["spec"].get("initContainers", []):
            assert container["envFrom"] == reference["envFrom"], kind
            assert container["env"] == reference["env"], kind
            assert container["volumeMounts"] == reference["volumeMounts"], kind
            assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert pod["metadata"]["annotations"] == pods["Deployment"]["metadata"]["annotations"]


def test_configuration_and_secrets_are_release_objects_rolled_by_a_checksum():
    base = dict(
        **{"image.repository": "r.example/p"},
        **{"secrets.values.django-secret-key": "k", "secrets.values.database-url": "d"},
        **{"secrets.values.redis-url": "r", "secrets.csi.enabled": "false"},
        **{"secrets.values.receipt-signing-key": "e"},
        **{"secrets.values.resurfacing-key": "h", "secrets.values.history-keys": "f"},
        **{
            "secrets.values.metrics-token": "m",
            "secrets.values.appinsights-connection-string": "a",
        },
    )
    objects = render(AKS, **base)
    for o in objects:
        # Hooks are not restored by `helm rollback` and are recreated by every upgrade.
        assert "helm.sh/hook" not in o["metadata"].get("annotations", {}), o["kind"]
    assert of_kind(objects, "Secret") and of_kind(objects, "ConfigMap")
    before = pod_templates(objects)["Deployment"]["metadata"]["annotations"]
    changed = render(AKS, **base, **{"config.PORTAL_LOG_LEVEL": "DEBUG"})
    after = pod_templates(changed)["Deployment"]["metadata"]["annotations"]
    assert before["checksum/config"] != after["checksum/config"]
    assert before["checksum/secret"] == after["checksum/secret"]
    rotated = render(AKS, **{**base, "secrets.values.database-url": "d2"})
    assert (
        pod_templates(rotated)["Deployment"]["metadata"]["annotations"]["checksum/secret"]
        != (before["checksum/secret"])
    )


def test_key_vault_through_the_csi_driver_needs_no_synced_secret():
    objects = render(AKS)
    (spc,) = of_kind(objects, "SecretProviderClass")
    assert spc["apiVersion"] == "secrets-store.csi.x-k8s.io/v1"
    params = spc["spec"]["parameters"]
    assert params["keyvaultName"] == "contoso-memory-kv"
    assert params["clientID"] == "22222222-3333-4444-5555-666666666666"
    assert "objectName: database-url" in params["objects"]
    assert not of_kind(objects, "Secret")
    for kind, pod in pod_templates(objects).items():
        (volume,) = [v for v in pod["spec"]["volumes"] if v["name"] == "secrets"]
        assert volume["csi"]["driver"] == "secrets-store.csi.k8s.io", kind
        assert volume["csi"]["volumeAttributes"]["secretProviderClass"] == spc["metadata"]["name"]
    # The first install's migration is an ordinary Job: it starts with the class in place.
    (job,) = of_kind(objects, "Job")
    assert "helm.sh/hook" not in job["metadata"].get("annotations", {})


def test_migrations_job_has_a_deadline_and_a_ttl_and_pods_wait_for_it():
    objects = render(AKS)
    (job,) = of_kind(objects, "Job")
    assert job["spec"]["activeDeadlineSeconds"] > 0
    assert job["spec"]["ttlSecondsAfterFinished"] > 0
    assert job["metadata"]["name"] == "memory-portal-migrate-1"  # one per revision
    (deployment,) = of_kind(objects, "Deployment")
    (init,) = deployment["spec"]["template"]["spec"]["initContainers"]
    assert init["args"][0] == "wait-for-migrations"
    (cron,) = of_kind(objects, "CronJob")
    assert cron["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"] > 0


def test_the_daily_job_runs_the_entry_points_clean_up():
    """`clearsessions` runs `manage.py purge_expired` (expired sessions and submission
    claims; tests/unit/test_deploy.py runs it on a database with expired and live rows)."""
    (cron,) = of_kind(render(AKS), "CronJob")
    (container,) = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["args"] == ["clearsessions"]
    assert cron["spec"]["schedule"] == "17 3 * * *"  # daily
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"


def test_tmp_is_sized_and_ingress_takes_the_portals_largest_request():
    objects = render(AKS)
    (deployment,) = of_kind(objects, "Deployment")
    (tmp,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "tmp"]
    assert tmp["emptyDir"]["sizeLimit"] == "256Mi" and "medium" not in tmp["emptyDir"]
    (ingress,) = of_kind(objects, "Ingress")
    size = ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/proxy-body-size"]
    # Defaults: a 6 x 2 MiB (+ 64 KiB) form, above a 10 x 1 MiB restore; plus framing.
    assert size == "14m"
    bigger = render(AKS, **{"config.PORTAL_UPLOAD_MAX_BYTES": "4194304"})
    (ingress,) = of_kind(bigger, "Ingress")
    assert (
        ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/proxy-body-size"]
        == "41m"  # 10 x 4 MiB restore + framing
    )


def test_a_disruption_budget_only_with_more_than_one_replica():
    assert of_kind(render(AKS), "PodDisruptionBudget")
    assert not of_kind(render(CONTAINER_APPS), "PodDisruptionBudget")
    assert not of_kind(render(AKS, replicaCount="1"), "PodDisruptionBudget")


def test_no_autoscaler_unless_asked():
    for values in (AKS, CONTAINER_APPS):
        objects = render(values)
        assert not of_kind(objects, "HorizontalPodAutoscaler")
        assert of_kind(objects, "Deployment")[0]["spec"]["replicas"] >= 1


@pytest.mark.parametrize("version", KUBERNETES)
def test_the_autoscaler_owns_the_replica_count_and_the_budget_follows_it(version: str):
    objects = render(AKS, **{"autoscaling.enabled": "true", "autoscaling.minReplicas": "3"})
    (hpa,) = of_kind(objects, "HorizontalPodAutoscaler")
    kubernetes_validate.validate(hpa, version, strict=True)
    (deployment,) = of_kind(objects, "Deployment")
    assert "replicas" not in deployment["spec"]  # an upgrade must not reset what it chose
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": deployment["metadata"]["name"],
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 6)
    assert [m["type"] for m in hpa["spec"]["metrics"]] == ["Resource"]  # CPU only by default
    assert deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    (pdb,) = of_kind(objects, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    # The budget follows minReplicas, not replicaCount: none where one pod may be all.
    assert not of_kind(
        render(AKS, **{"autoscaling.enabled": "true", "autoscaling.minReplicas": "1"}),
        "PodDisruptionBudget",
    )
    assert of_kind(
        render(AKS, replicaCount="1", **{"autoscaling.enabled": "true"}), "PodDisruptionBudget"
    )


@pytest.mark.parametrize("version", KUBERNETES)
def test_the_autoscaler_takes_requests_per_second_where_the_cluster_has_it(version: str):
    objects = render(
        AKS,
        **{
            "autoscaling.enabled": "true",
            "autoscaling.requestsPerSecond.metricName": "portal_requests_per_second",
        },
    )
    (hpa,) = of_kind(objects, "HorizontalPodAutoscaler")
    kubernetes_validate.validate(hpa, version, strict=True)
    pods = [m["pods"] for m in hpa["spec"]["metrics"] if m["type"] == "Pods"]
    assert pods == [
        {
            "metric": {"name": "portal_requests_per_second"},
            "target": {"type": "AverageValue", "averageValue": "20"},
        }
    ]


def test_an_autoscaler_that_could_not_work_is_refused():
    on = {"autoscaling.enabled": "true"}
    assert "minReplicas must be at least 1 and at most maxReplicas" in refused(
        AKS, **on, **{"autoscaling.minReplicas": "7"}
    )
    assert "minReplicas must be at least 1" in refused(
        AKS, **on, **{"autoscaling.minReplicas": "0"}
    )
    assert "no node could ever be drained" in refused(
        AKS, **on, **{"podDisruptionBudget.minAvailable": "2"}
    )


def test_a_budget_that_would_block_every_drain_is_refused_without_the_autoscaler_too():
    assert "must be below replicaCount, or no node could ever be drained" in refused(
        AKS, replicaCount="2", **{"podDisruptionBudget.minAvailable": "2"}
    )
    (pdb,) = of_kind(
        render(AKS, replicaCount="3", **{"podDisruptionBudget.minAvailable": "2"}),
        "PodDisruptionBudget",
    )
    assert pdb["spec"]["minAvailable"] == 2


@pytest.mark.parametrize("release", ["memory-portal", "prod"])
def test_names_are_not_doubled(release: str):
    names = {o["metadata"]["name"] for o in render(AKS, release=release)}
    assert not any("memory-portal-memory-portal" in name for name in names)
    assert ("memory-portal" if release == "memory-portal" else "prod-memory-portal") in names


def test_defaults_fail_with_messages_naming_what_to_set():
    message = refused()
    assert "image.repository is required" in message
    message = refused(**{"image.repository": "r.example/p"})
    assert "config.DJANGO_ALLOWED_HOSTS is required" in message
    message = refused(AKS, **{"secrets.csi.enabled": "false"})
    assert "secrets: set exactly one of" in message
    message = refused(AKS, **{"config.ENTRA_MANAGED_IDENTITY_CLIENT_ID": "m"})
    assert "ENTRA_MANAGED_IDENTITY_CLIENT_ID contradicts workloadIdentity.enabled" in message
    message = refused(
        CONTAINER_APPS,
        **{"secrets.existingSecret": "", "secrets.values.django-secret-key": "k"},
    )
    assert "secrets.values.database-url is required" in message


def test_the_memory_api_gets_a_projected_token_and_its_settings_in_every_pod():
    objects = render(CONTAINER_APPS)
    (config,) = of_kind(objects, "ConfigMap")
    assert config["data"]["MEMORY_API_BASE_URL"].startswith("http://memory-api.")
    assert config["data"]["MEMORY_API_WORKSPACE_UID"] == "7f3c2a10-5b4d-4e6f-8a9b-0c1d2e3f4a5b"
    assert config["data"]["MEMORY_API_SUBJECT_RULE"] == "hmac-sha256"
    assert config["data"]["MEMORY_API_TOKEN_FILE"] == "/var/run/secrets/tokens/memory-api"
    for kind, pod in pod_templates(objects).items():
        (volume,) = [v for v in pod["spec"]["volumes"] if v["name"] == "memory-api-token"]
        assert volume["projected"]["sources"] == [
            {
                "serviceAccountToken": {
                    "path": "memory-api",
                    "audience": "memory-api",
                    "expirationSeconds": 3600,
                }
            }
        ], kind
        (container,) = pod["spec"]["containers"]
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        assert mounts["memory-api-token"] == {
            "name": "memory-api-token",
            "mountPath": "/var/run/secrets/tokens",
            "readOnly": True,
        }
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env["MEMORY_API_PSEUDONYM_KEY_FILE"] == "/mnt/secrets/memory-api-pseudonym-key"


def test_without_the_memory_api_no_token_is_mounted_and_no_setting_is_made():
    objects = render(AKS)
    (config,) = of_kind(objects, "ConfigMap")
    assert not [name for name in config["data"] if name.startswith("MEMORY_API_")]
    for pod in pod_templates(objects).values():
        assert "memory-api-token" not in {v["name"] for v in pod["spec"]["volumes"]}


def test_a_memory_api_set_up_that_could_not_work_is_refused():
    on = {"memoryApi.enabled": "true", "memoryApi.baseUrl": "http://m"}
    message = refused(AKS, **on, **{"memoryApi.workspaceUid": "contoso-agents"})
    assert "memoryApi.workspaceUid must be the Workspace's UID (a UUID)" in message
    uid = {"memoryApi.workspaceUid": "7f3c2a10-5b4d-4e6f-8a9b-0c1d2e3f4a5b"}
    message = refused(AKS, **on, **uid, **{"memoryApi.token.expirationSeconds": "300"})
    assert "expirationSeconds must be at least 600" in message
    message = refused(AKS, **on, **uid, **{"memoryApi.subjectRule": "hmac-sha256"})
    assert "needs secrets.files.MEMORY_API_PSEUDONYM_KEY" in message
    message = refused(AKS, **{"memoryApi.enabled": "true"}, **uid)
    assert "memoryApi.baseUrl is required" in message


MOVE = {
    "legacyMove.enabled": "true",
    "legacyMove.store": "main.agents.it_helpdesk_memory",
    "legacyMove.usersVolume.configMap.name": "memory-portal-people",
    "legacyMove.completions": "8",
    "legacyMove.parallelism": "3",
}


def legacy_move(objects: list[dict]) -> dict:
    (job,) = [o for o in of_kind(objects, "Job") if "-legacy-move-" in o["metadata"]["name"]]
    return job


def test_no_legacy_move_unless_asked():
    for values in (AKS, CONTAINER_APPS):
        assert not [o for o in render(values) if "legacy-move" in o["metadata"]["name"]]


@pytest.mark.parametrize("values", [AKS, CONTAINER_APPS], ids=["aks", "container-apps"])
@pytest.mark.parametrize("version", KUBERNETES)
def test_the_legacy_move_is_an_indexed_job_of_shards_with_the_portals_pod(
    values: Path, version: str
):
    """Issue 31: one pod per shard, its shard from JOB_COMPLETION_INDEX and `completions`,
    with everything settings need (the Deployment's environment, secrets, identity, /tmp)
    and the list of people mounted from the volume named in the values."""
    objects = render(values, **MOVE)
    for o in objects:
        if o["kind"] not in CUSTOM_KINDS:
            kubernetes_validate.validate(o, version, strict=True)
    job = legacy_move(objects)
    (deployment,) = of_kind(objects, "Deployment")
    spec, pod, reference = job["spec"], job["spec"]["template"], deployment["spec"]["template"]
    assert spec["completionMode"] == "Indexed"
    assert (spec["completions"], spec["parallelism"]) == (8, 3)
    assert spec["activeDeadlineSeconds"] > 0 and spec["ttlSecondsAfterFinished"] > 0
    assert pod["spec"]["restartPolicy"] == "Never"
    wi = yaml.safe_load(values.read_text())["workloadIdentity"]["enabled"]
    assert (pod["metadata"]["labels"].get("azure.workload.identity/use") == "true") is wi
    assert pod["metadata"]["labels"]["app.kubernetes.io/name"] == "memory-portal-legacy-move"
    assert pod["metadata"]["annotations"] == reference["metadata"]["annotations"]
    assert pod["spec"]["serviceAccountName"] == reference["spec"]["serviceAccountName"]
    people = {"name": "people", "configMap": {"name": "memory-portal-people"}}
    assert pod["spec"]["volumes"] == [*reference["spec"]["volumes"], people]
    (container,) = pod["spec"]["containers"]
    portal = reference["spec"]["containers"][0]
    index = {
        "name": "JOB_COMPLETION_INDEX",
        "valueFrom": {
            "fieldRef": {
                "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
            }
        },
    }
    assert container["envFrom"] == portal["envFrom"]
    assert container["env"] == [*portal["env"], index]
    mount = {"name": "people", "mountPath": "/mnt/people", "readOnly": True}
    assert container["volumeMounts"] == [*portal["volumeMounts"], mount]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["args"] == [
        "manage",
        "move_legacy_memory",
        "--store=main.agents.it_helpdesk_memory",
        "--users=/mnt/people/users.txt",
        "--shard=$(JOB_COMPLETION_INDEX)/8",
        "--metrics-port=9100",
    ]
    assert container["ports"] == [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"}]
    (init,) = pod["spec"]["initContainers"]  # the progress table's migration first
    assert init["args"][0] == "wait-for-migrations" and init["env"] == portal["env"]


@pytest.mark.parametrize("version", KUBERNETES)
def test_an_evicted_legacy_move_pod_ends_before_its_replacement_and_costs_no_retry(
    version: str,
):
    """An evicted pod finishes its person after SIGTERM: no second pod on its shard until
    it has ended, and evictions (DisruptionTarget) do not count against backoffLimit."""
    job = legacy_move(render(AKS, **MOVE))
    kubernetes_validate.validate(job, version, strict=True)
    spec = job["spec"]

    assert spec["podReplacementPolicy"] == "Failed"
    # Time for the person being moved when SIGTERM comes (the default 30 s may cut one).
    assert spec["template"]["spec"]["terminationGracePeriodSeconds"] == 300
    assert spec["podFailurePolicy"] == {
        "rules": [
            {
                "action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            }
        ]
    }
    assert spec["template"]["spec"]["restartPolicy"] == "Never"  # what podFailurePolicy needs


def test_the_legacy_move_deletes_only_when_asked_and_is_renamed_to_run_again():
    job = legacy_move(render(AKS, **MOVE))
    assert "--delete-verified" not in job["spec"]["template"]["spec"]["containers"][0]["args"]
    again = legacy_move(render(AKS, **MOVE, **{"legacyMove.deleteVerified": "true"}))
    assert "--delete-verified" in again["spec"]["template"]["spec"]["containers"][0]["args"]
    second = legacy_move(render(AKS, **MOVE, **{"legacyMove.run": "2"}))
    assert (job["metadata"]["name"], second["metadata"]["name"]) == (
        "memory-portal-legacy-move-1",
        "memory-portal-legacy-move-2",
    )


def test_a_legacy_move_without_its_store_or_list_is_refused():
    on = {"legacyMove.enabled": "true"}
    assert "legacyMove.store is required" in refused(
        AKS, **on, **{"legacyMove.usersVolume.configMap.name": "p"}
    )
    assert "legacyMove.usersVolume is required" in refused(
        AKS, **on, **{"legacyMove.store": "it-helpdesk"}
    )
    assert "completions (the number of shards) must be at least 1" in refused(
        AKS, **{**MOVE, "legacyMove.completions": "0"}
    )
