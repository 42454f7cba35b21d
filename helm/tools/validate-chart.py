#!/usr/bin/env python3
"""Renders the push-gateway chart offline with Helm's own engine (the helm-python-sdk package) for
several value sets, validates every manifest against the Kubernetes JSON schemas shipped in the
kubernetes-validate package (strict: unknown fields are errors), and checks the chart's own rules
(non-root, read-only root FS, no capabilities, probes on the private port, secrets only as files,
migration hook). Prints one JSON object: the kinds rendered per value set, the Deployment's
environment and rollout strategy for the default values, the pod checksums for the defaults and for
one change of the configuration and of the Secret revision, and the optional Ingress. Exit 0 when everything holds, 1 otherwise."""

import copy
import json
import pathlib
import sys

import helm_python
import kubernetes_validate
import yaml

KUBERNETES_VERSION = "1.30.0"
RULES_FILE = pathlib.Path(__file__).resolve().parents[2] / "deploy/prometheus/push-gateway-rules.yml"
SECRET_VARIABLES = {
    "DATABASE_URL", "PUSH_GATEWAY_GRANT_KEYS", "PUSH_GATEWAY_TOKEN_KEYS", "PUSH_GATEWAY_CHALLENGE_KEYS",
    "PUSH_GATEWAY_FINGERPRINT_KEY",
}

problems = []


def check(condition, message):
    if not condition:
        problems.append(message)


def render(chart, values, upgrade=False):
    manifests = chart.render(values, name="push", namespace="push", is_install=not upgrade, is_upgrade=upgrade)
    documents = []
    for path, text in sorted(manifests.items()):
        if not path.endswith(".yaml"):
            continue
        documents.extend(document for document in yaml.safe_load_all(text) if document)
    return documents


def check_container(container, where):
    context = container.get("securityContext", {})
    check(context.get("runAsNonRoot") is True, f"{where}: runAsNonRoot")
    check(context.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem")
    check(context.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation")
    check(context.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities not all dropped")
    names = [variable["name"] for variable in container.get("env", [])]
    check(len(names) == len(set(names)), f"{where}: duplicate environment variable")
    for variable in container.get("env", []):
        check(variable["name"] not in SECRET_VARIABLES, f"{where}: secret {variable['name']} given as a value")


def validate(documents, scenario):
    kinds = []
    for document in documents:
        kind = document["kind"]
        kinds.append(kind)
        if kind == "ServiceMonitor":
            # A CRD: no schema in kubernetes-validate; check the fields Prometheus Operator needs.
            endpoint = document["spec"]["endpoints"][0]
            check(endpoint == {"port": "private", "path": "/metrics", "interval": endpoint.get("interval")},
                  f"{scenario}: ServiceMonitor endpoint")
            continue
        if kind == "PrometheusRule":
            # A CRD too: its groups must be exactly the rules file Prometheus and promtool check.
            with open(RULES_FILE) as rules:
                check(document["spec"] == yaml.safe_load(rules), f"{scenario}: PrometheusRule differs from the rules file")
            continue
        try:
            kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            problems.append(f"{scenario}: {kind} {document['metadata']['name']}: {error.message} at {list(error.path)}")
        pod = None
        if kind == "Deployment":
            pod = document["spec"]["template"]["spec"]
            container = pod["containers"][0]
            for probe, path in (("livenessProbe", "/_liveness"), ("readinessProbe", "/_readiness")):
                check(container[probe]["httpGet"] == {"path": path, "port": "private"}, f"{scenario}: {probe}")
        if kind == "Job":
            pod = document["spec"]["template"]["spec"]
            hooks = document["metadata"]["annotations"]["helm.sh/hook"]
            check(hooks == "pre-install,pre-upgrade", f"{scenario}: migration hook")
            check(pod["containers"][0]["args"][:2] == ["migrate", "--runtime-role"], f"{scenario}: migrate args")
        if pod is not None:
            check(pod["securityContext"].get("runAsNonRoot") is True, f"{scenario}: pod runAsNonRoot")
            check(pod.get("automountServiceAccountToken") is False, f"{scenario}: service account token mounted")
            for container in pod["containers"]:
                check_container(container, f"{scenario}: {kind}/{container['name']}")
    return kinds


def must_fail(chart, values, scenario):
    try:
        chart.render(values, name="push", namespace="push", is_install=True)
        problems.append(f"{scenario}: rendered although it must fail")
    except helm_python.HelmError:
        pass


def main():
    chart = helm_python.Chart.load(sys.argv[1])
    defaults = chart.values
    everything = copy.deepcopy(defaults)
    everything["autoscaling"]["enabled"] = True
    everything["networkPolicy"].update(
        enabled=True, publicFrom=[{"namespaceSelector": {"matchLabels": {"name": "ingress"}}}],
        privateFrom=[{"podSelector": {"matchLabels": {"app": "prometheus"}}}])
    everything["serviceMonitor"]["enabled"] = True
    everything["prometheusRule"]["enabled"] = True
    everything["publicOrigins"] = ["https://push.example.com"]
    everything["trustedProxies"] = ["10.0.0.0/8"]
    everything["limits"] = {"endpointQuotaMax": 20, "reaperIntervalSeconds": 30, "maxConnections": 4096, "maxConnectionsPerPeer": 512,
                            "lifecycleRatePerMinute": 300}
    everything["profiles"].append({
        "id": "example-ios-sandbox", "appId": "ABCDE12345.com.example.app", "apnsTopic": "com.example.app",
        "apnsEnvironment": "sandbox", "appAttestEnvironment": "development", "auth": "certificate"})
    without_migration = copy.deepcopy(defaults)
    without_migration["migration"]["enabled"] = False
    without_migration["podDisruptionBudget"]["enabled"] = False
    with_ingress = copy.deepcopy(defaults)
    with_ingress["ingress"].update(enabled=True, className="nginx", tlsSecret="push-example-com-tls")

    summary = {"kinds": {}}
    for scenario, values, upgrade in (("defaults", defaults, False), ("everything", everything, True),
                                      ("without-migration", without_migration, False),
                                      ("with-ingress", with_ingress, True)):
        summary["kinds"][scenario] = sorted(validate(render(chart, values, upgrade), scenario))
    deployment = next(d for d in render(chart, defaults) if d["kind"] == "Deployment")
    summary["environment"] = {v["name"]: v["value"] for v in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    summary["strategy"] = deployment["spec"]["strategy"]

    # The pod template's checksums, for the defaults and for one change of each input.
    changed_config = copy.deepcopy(defaults)
    changed_config["limits"] = {"endpointQuotaMax": 11}
    changed_secret = copy.deepcopy(defaults)
    changed_secret["secretRevision"] = defaults["secretRevision"] + 1
    summary["checksums"] = {}
    for scenario, values in (("defaults", defaults), ("config-changed", changed_config),
                             ("secret-revision-bumped", changed_secret)):
        pod = next(d for d in render(chart, values) if d["kind"] == "Deployment")["spec"]["template"]
        summary["checksums"][scenario] = {
            name: value for name, value in pod["metadata"].get("annotations", {}).items() if name.startswith("checksum/")}
    ingress = next(d for d in render(chart, with_ingress, True) if d["kind"] == "Ingress")
    summary["ingress"] = {
        "className": ingress["spec"].get("ingressClassName"), "tls": ingress["spec"]["tls"],
        "rules": ingress["spec"]["rules"]}
    no_tls = copy.deepcopy(with_ingress)
    no_tls["ingress"]["tlsSecret"] = ""
    must_fail(chart, no_tls, "ingress without a TLS secret")

    bad_auth = copy.deepcopy(defaults)
    bad_auth["profiles"][0]["auth"] = "password"
    must_fail(chart, bad_auth, "unknown profile auth")
    bad_limit = copy.deepcopy(defaults)
    bad_limit["limits"] = {"notALimit": 1}
    must_fail(chart, bad_limit, "unknown limit")
    no_profiles = copy.deepcopy(defaults)
    no_profiles["profiles"] = []
    must_fail(chart, no_profiles, "no profiles")

    summary["problems"] = problems
    print(json.dumps(summary, sort_keys=True))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
