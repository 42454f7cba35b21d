#!/usr/bin/env python3
"""Lints the push-gateway chart and renders every template offline with Helm's own engine (the
helm-python-sdk package, which also checks values against values.schema.json) for several value
sets, validates every manifest against the Kubernetes JSON schemas shipped in the
kubernetes-validate package (strict: unknown fields are errors), and checks the chart's own rules
(non-root, read-only root FS, no capabilities, the same pod security context for the Deployment and
the migration Job, probes on the private port, secrets only as files, migration hook). Prints one
JSON object: the kinds rendered per value set, the Deployment's environment (defaults, everything
enabled, an android profile with its status list, a Web Push profile) and rollout strategy, the pod checksums for the defaults and for one change of
the configuration and of the Secret revision, the optional Ingress with and without TLS, and the
migration Job's pod. Exit 0 when everything holds, 1 otherwise."""

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

# An android profile (docs/protocol.md §12) beside the default iOS one.
ANDROID_PROFILE = {
    "id": "example-android", "platform": "android", "androidPackage": "com.example.app",
    "androidSigningCertSha256": ["0123456789abcdef" * 4, "fedcba9876543210" * 4],
    "androidMinSecurityLevel": "strongbox", "androidVerifiedBootKeys": ["0f" * 32, "F0" * 32],
    "fcmProjectId": "example-app-1"}

# An android profile woken through Web Push (docs/protocol.md §8b), and the global Web Push values.
WEBPUSH_PROFILE = {
    "id": "example-unifiedpush", "platform": "android", "provider": "webpush", "androidPackage": "com.example.app",
    "androidSigningCertSha256": ["0123456789abcdef" * 4], "webpushVapidSubject": "mailto:ops@example.com",
    "webpushAllowedHosts": ["ntfy.sh", "*.unifiedpush.example"]}
WEBPUSH_VALUES = {
    "originRatePerSecond": 50, "maxConnections": 256, "nat64Prefixes": ["2001:db8:64::/96"],
    "denyCidrs": ["198.51.100.0/24", "2001:db8:1::/48"]}

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
    kinds, pods = [], {}
    for document in documents:
        kind = document["kind"]
        kinds.append(kind)
        if kind == "ServiceMonitor":
            # A CRD: no schema in kubernetes-validate; check the fields Prometheus Operator needs.
            endpoint = document["spec"]["endpoints"][0]
            check(endpoint == {"port": "private", "path": "/metrics", "interval": endpoint.get("interval")},
                  f"{scenario}: ServiceMonitor endpoint")
            # The alert rules select job="push-gateway": the private Service's name label.
            check(document["spec"].get("jobLabel") == "app.kubernetes.io/name", f"{scenario}: ServiceMonitor jobLabel")
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
            pods[kind] = pod
            for container in pod["containers"]:
                check_container(container, f"{scenario}: {kind}/{container['name']}")
    if "Job" in pods:
        # The Job reads a 0440 secret volume as uid 10001 exactly as the replicas do: only through fsGroup.
        check(pods["Job"]["securityContext"] == pods["Deployment"]["securityContext"],
              f"{scenario}: the Job's pod security context differs from the Deployment's")
        check(pods["Job"].get("imagePullSecrets") == pods["Deployment"].get("imagePullSecrets"),
              f"{scenario}: the Job pulls the image with other secrets than the Deployment")
    return kinds


def must_fail(chart, values, scenario):
    try:
        chart.render(values, name="push", namespace="push", is_install=True)
        problems.append(f"{scenario}: rendered although it must fail")
    except helm_python.HelmError:
        pass


def main():
    report = helm_python.lint(sys.argv[1], strict=True, kube_version="v" + KUBERNETES_VERSION)
    problems.extend(f"helm lint: {message['path']}: {message['error']}"
                    for message in report["messages"] if message["severity"] >= 2)
    problems.extend(f"helm lint: {error}" for error in report["errors"])
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
    everything["apnsProxy"] = "http://egress-proxy.infra:3128"
    everything["extraEnv"] = [{"name": "TZ", "value": "UTC"}]
    everything["imagePullSecrets"] = [{"name": "regcred"}]
    everything["serviceAccount"]["annotations"] = {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/push"}
    everything["migration"]["serviceAccountName"] = "push-migrator"
    everything["topologySpreadConstraints"] = [{
        "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "push-gateway"}}}]
    everything["profiles"].append({
        "id": "example-ios-sandbox", "appId": "ABCDE12345.com.example.app", "apnsTopic": "com.example.app",
        "apnsEnvironment": "sandbox", "appAttestEnvironment": "development", "auth": "certificate"})
    without_migration = copy.deepcopy(defaults)
    without_migration["migration"]["enabled"] = False
    without_migration["podDisruptionBudget"]["enabled"] = False
    without_migration["serviceAccount"]["create"] = False
    without_migration["spreadAcrossNodes"] = False
    with_android = copy.deepcopy(defaults)
    with_android["profiles"].append(ANDROID_PROFILE)
    with_android["androidAttestationStatus"]["configMap"] = "android-attestation-status"
    with_webpush = copy.deepcopy(with_android)
    with_webpush["profiles"].append(WEBPUSH_PROFILE)
    with_webpush["webPush"] = WEBPUSH_VALUES
    with_marmot = copy.deepcopy(with_android)
    with_marmot["marmot"] = {
        "enabled": True, "relays": ["wss://relay-one.example", "wss://relay-two.example/inbox"],
        "apnsProfile": "example-ios-production", "fcmProfile": "example-android", "tokenRatePerMinute": 120,
        "tokenRatePerHour": 0, "unwrapRatePerMinute": 0}
    with_ingress = copy.deepcopy(defaults)
    with_ingress["ingress"].update(enabled=True, className="nginx", tlsSecret="push-example-com-tls")

    summary = {"kinds": {}}
    for scenario, values, upgrade in (("defaults", defaults, False), ("everything", everything, True),
                                      ("without-migration", without_migration, False),
                                      ("with-ingress", with_ingress, True), ("with-android", with_android, False),
                                      ("with-marmot", with_marmot, False), ("with-webpush", with_webpush, False)):
        summary["kinds"][scenario] = sorted(validate(render(chart, values, upgrade), scenario))
    deployment = next(d for d in render(chart, defaults) if d["kind"] == "Deployment")
    summary["environment"] = {v["name"]: v["value"] for v in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    summary["strategy"] = deployment["spec"]["strategy"]
    rendered = {d["kind"]: d for d in render(chart, everything, True)}
    pod = rendered["Deployment"]["spec"]["template"]["spec"]
    summary["everything"] = {
        "environment": {v["name"]: v["value"] for v in pod["containers"][0]["env"]},
        "imagePullSecrets": pod.get("imagePullSecrets"), "serviceAccountName": pod.get("serviceAccountName"),
        "serviceAccount": rendered["ServiceAccount"]["metadata"]["name"],
        "jobServiceAccountName": rendered["Job"]["spec"]["template"]["spec"].get("serviceAccountName"),
        "topologySpreadConstraints": pod.get("topologySpreadConstraints"),
        "image": pod["containers"][0]["image"]}
    android_pod = next(d for d in render(chart, with_android) if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    summary["android"] = {
        "environment": {v["name"]: v["value"] for v in android_pod["containers"][0]["env"]},
        "volumeMounts": android_pod["containers"][0]["volumeMounts"], "volumes": android_pod["volumes"]}
    mirrored = copy.deepcopy(with_android)
    mirrored["androidAttestationStatus"] = {"url": "https://status-mirror.internal/attestation/status", "configMap": ""}
    pod = next(d for d in render(chart, mirrored) if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    summary["androidMirror"] = {v["name"]: v["value"] for v in pod["containers"][0]["env"]
                                if v["name"].startswith("PUSH_GATEWAY_ANDROID_")}
    pod = next(d for d in render(chart, with_webpush) if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    summary["webPush"] = {v["name"]: v["value"] for v in pod["containers"][0]["env"]
                          if v["name"].startswith(("PUSH_GATEWAY_WEBPUSH_", "PUSH_GATEWAY_PROFILE_EXAMPLE_UNIFIEDPUSH_"))
                          or v["name"] == "PUSH_GATEWAY_PROFILES"}
    summary["webPushEnvironment"] = {v["name"]: v["value"] for v in pod["containers"][0]["env"]}
    pod = next(d for d in render(chart, with_marmot) if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    summary["marmot"] = {v["name"]: v["value"] for v in pod["containers"][0]["env"]
                         if v["name"].startswith("PUSH_GATEWAY_MARMOT_")}
    summary["migrationJob"] = next(d for d in render(chart, defaults) if d["kind"] == "Job")["spec"]["template"]["spec"]

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
    without_tls = copy.deepcopy(with_ingress)
    without_tls["ingress"].update(tls=False, tlsSecret="")
    plain = next(d for d in render(chart, without_tls, True) if d["kind"] == "Ingress")
    validate([plain], "ingress without TLS")
    summary["plainIngress"] = {"tls": plain["spec"].get("tls"), "rules": plain["spec"]["rules"]}
    no_tls = copy.deepcopy(with_ingress)
    no_tls["ingress"]["tlsSecret"] = ""
    must_fail(chart, no_tls, "ingress with TLS but no TLS secret")
    for proxy in ("0.0.0.0/0", "::/0"):
        every_address = copy.deepcopy(defaults)
        every_address["trustedProxies"] = ["10.0.0.0/8", proxy]
        must_fail(chart, every_address, f"trusted proxy {proxy}")
    misspelt = copy.deepcopy(defaults)
    misspelt["trustedProxy"] = ["10.0.0.0/8"]
    must_fail(chart, misspelt, "unknown top-level value")
    bad_proxy = copy.deepcopy(defaults)
    bad_proxy["apnsProxy"] = "https://user:secret@proxy:3128"
    must_fail(chart, bad_proxy, "APNs proxy with user info")
    duplicate = copy.deepcopy(defaults)
    duplicate["extraEnv"] = [{"name": "PUSH_GATEWAY_LOG_LEVEL", "value": "debug"}]
    validate(render(chart, duplicate), "extraEnv repeating a chart variable")
    check(any("duplicate environment variable" in problem for problem in problems),
          "extraEnv repeating a chart variable is not caught")
    problems[:] = [problem for problem in problems if "duplicate environment variable" not in problem]

    bad_auth = copy.deepcopy(defaults)
    bad_auth["profiles"][0]["auth"] = "password"
    must_fail(chart, bad_auth, "unknown profile auth")
    bad_limit = copy.deepcopy(defaults)
    bad_limit["limits"] = {"notALimit": 1}
    must_fail(chart, bad_limit, "unknown limit")
    both_lists = copy.deepcopy(with_android)
    both_lists["androidAttestationStatus"]["url"] = "https://status-mirror.internal/attestation/status"
    must_fail(chart, both_lists, "status list from both a URL and a ConfigMap")
    for missing in ("androidPackage", "androidSigningCertSha256", "fcmProjectId"):
        incomplete = copy.deepcopy(with_android)
        del incomplete["profiles"][1][missing]
        must_fail(chart, incomplete, f"android profile without {missing}")
    mixed = copy.deepcopy(with_android)
    mixed["profiles"][1]["apnsTopic"] = "com.example.app"
    must_fail(chart, mixed, "android profile with an APNs value")
    bad_digest = copy.deepcopy(with_android)
    bad_digest["profiles"][1]["androidSigningCertSha256"] = ["AB:CD"]
    must_fail(chart, bad_digest, "signing digest that is not 64 lowercase hex")
    for change, scenario in ((dict(webpushVapidSubject=None), "webpush profile without a VAPID subject"),
                             (dict(fcmProjectId="example-app-1"), "webpush profile with an FCM value"),
                             (dict(webpushVapidSubject="ops@example.com"), "VAPID subject that is not a URI"),
                             (dict(webpushAllowedHosts=["Push.Example"]), "allowed host that is not lowercase"),
                             (dict(provider="apns"), "android profile with provider apns")):
        values = copy.deepcopy(with_webpush)
        profile = values["profiles"][2]
        for key, value in change.items():
            if value is None:
                del profile[key]
            else:
                profile[key] = value
        must_fail(chart, values, scenario)
    fcm_with_subject = copy.deepcopy(with_android)
    fcm_with_subject["profiles"][1]["webpushVapidSubject"] = "mailto:ops@example.com"
    must_fail(chart, fcm_with_subject, "FCM profile with a Web Push value")
    ios_with_provider = copy.deepcopy(defaults)
    ios_with_provider["profiles"][0]["provider"] = "webpush"
    must_fail(chart, ios_with_provider, "ios profile with provider webpush")
    bad_deny = copy.deepcopy(with_webpush)
    bad_deny["webPush"]["denyCidrs"] = ["10.0.0.0"]
    must_fail(chart, bad_deny, "deny CIDR without a prefix length")
    for broken, scenario in ((dict(relays=[]), "marmot without relays"),
                             (dict(apnsProfile="", fcmProfile=""), "marmot without a profile"),
                             (dict(relays=["ws://relay.example"]), "marmot relay that is not wss://")):
        values = copy.deepcopy(with_marmot)
        values["marmot"].update(broken)
        must_fail(chart, values, scenario)
    no_profiles = copy.deepcopy(defaults)
    no_profiles["profiles"] = []
    must_fail(chart, no_profiles, "no profiles")

    summary["problems"] = problems
    print(json.dumps(summary, sort_keys=True))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
