import Foundation
import MarmotIngress
import PushDelivery
import PushHTTP
import PushMarmot
import PushMetrics
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayConfiguration
@testable import GatewayMetrics
@testable import PushGateway
@testable import PushPostgres

/// One parsed exposition: family types and sample lines, checked against the 0.0.4 grammar.
struct ScrapedMetrics {
    var types: [String: String] = [:]
    var helps: Set<String> = []
    /// Sample name with its label text exactly as rendered (`name{a="b"}`) → value.
    var samples: [String: Double] = [:]

    init(_ text: String) throws {
        #expect(text.hasSuffix("\n"))
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            if line.hasPrefix("# HELP ") {
                try #require(parts.count == 4)
                helps.insert(String(parts[2]))
            } else if line.hasPrefix("# TYPE ") {
                try #require(parts.count == 4 && ["counter", "gauge", "histogram"].contains(parts[3]))
                #expect(helps.contains(String(parts[2])), "HELP precedes TYPE")
                #expect(types[String(parts[2])] == nil, "each family appears once")
                types[String(parts[2])] = String(parts[3])
            } else {
                let separator = try #require(line.lastIndex(of: " "))
                let series = String(line[..<separator])
                let value = try #require(Double(line[line.index(after: separator)...].replacing("+Inf", with: "inf")))
                let name = String(series.prefix { $0 != "{" })
                #expect(name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" })
                let family = try #require(
                    types.keys.first { family in
                        types[family] == "histogram"
                            ? ["_bucket", "_sum", "_count"].contains { name == family + $0 } : name == family
                    }, "sample \(name) belongs to a family declared before it")
                _ = family
                #expect(samples[series] == nil, "series \(series) appears once")
                samples[series] = value
            }
        }
    }
}

@Suite("Metrics: the Prometheus text format and its families")
struct MetricsFormatTests {
    @Test("HELP text and label values are escaped as the text format requires")
    func escaping() {
        #expect(PrometheusText.escapeHelp("a\\b\nc\"d") == #"a\\b\nc"d"#)
        #expect(PrometheusText.escapeLabelValue("a\\b\nc\"d") == #"a\\b\nc\"d"#)
        var output = ""
        PrometheusText.sample(name: "x", labels: [("k", "v\"1"), ("j", "w")], value: "2", into: &output)
        #expect(output == "x{k=\"v\\\"1\",j=\"w\"} 2\n")
    }

    @Test("sample values: integers plain, fractions as decimals, infinities and NaN spelled as Prometheus does")
    func values() {
        #expect(PrometheusText.value(3.0) == "3")
        #expect(PrometheusText.value(0.25) == "0.25")
        #expect(PrometheusText.value(Double.infinity) == "+Inf")
        #expect(PrometheusText.value(-Double.infinity) == "-Inf")
        #expect(PrometheusText.value(Double.nan) == "NaN")
    }

    @Test("a histogram renders cumulative buckets, +Inf, _sum and _count per series")
    func histogram() throws {
        let family = HistogramFamily(
            name: "h_seconds", help: "h", labelNames: ["stage"], bounds: [0.1, 1], series: [["a"], ["b"]])
        family.observe(0.05, labelValues: ["a"])
        family.observe(0.5, labelValues: ["a"])
        family.observe(7, labelValues: ["a"])
        family.observe(1, labelValues: ["zzz"])
        var output = ""
        family.render(into: &output)
        let scraped = try ScrapedMetrics(output)
        #expect(scraped.types == ["h_seconds": "histogram"])
        #expect(scraped.samples[#"h_seconds_bucket{stage="a",le="0.1"}"#] == 1)
        #expect(scraped.samples[#"h_seconds_bucket{stage="a",le="1"}"#] == 2)
        #expect(scraped.samples[#"h_seconds_bucket{stage="a",le="+Inf"}"#] == 3)
        #expect(scraped.samples[#"h_seconds_sum{stage="a"}"#] == 7.55)
        #expect(scraped.samples[#"h_seconds_count{stage="a"}"#] == 3)
        #expect(scraped.samples[#"h_seconds_count{stage="b"}"#] == 0)
        #expect(!output.contains("zzz"), "an unregistered label value never becomes a series")
    }

    @Test("the typed counters render every closed label value, zero until incremented")
    func typedCounters() throws {
        let metrics = GatewayMetrics(insecureSettingsInUse: true) { PostgresPool.Statistics(open: 3, idle: 1) }
        metrics.deliveryAdmissions.increment(.invalidGrant)
        metrics.deliveryAdmissions.increment(.invalidGrant)
        metrics.apnsOutcomes.increment(.accepted)
        metrics.stageDurations.observe(.admissionTransaction, seconds: 0.003)
        metrics.reaperDeletedRows.increment(.installations, by: 5)
        let recorder = metrics.registerRoutes(listener: .publicListener, labels: ["/registered"])
        recorder.record(route: "never-registered", status: 404, durationSeconds: 0.01)
        recorder.record(route: "/registered", status: 503, durationSeconds: 0.01)
        let scraped = try ScrapedMetrics(metrics.render())
        for result in DeliveryAdmissionResult.allCases {
            let expected: Double = result == .invalidGrant ? 2 : 0
            #expect(
                scraped.samples["push_gateway_delivery_admissions_total{result=\"\(result.rawValue)\"}"] == expected)
        }
        for outcome in PushRequestOutcome.allCases {
            #expect(scraped.samples["push_gateway_apns_requests_total{outcome=\"\(outcome.rawValue)\"}"] != nil)
        }
        for stage in RequestStage.allCases {
            #expect(scraped.samples["push_gateway_stage_duration_seconds_count{stage=\"\(stage.rawValue)\"}"] != nil)
        }
        #expect(scraped.samples[#"push_gateway_stage_duration_seconds_count{stage="admission_transaction"}"#] == 1)
        #expect(scraped.samples[#"push_gateway_reaper_deleted_rows_total{table="installations"}"#] == 5)
        #expect(scraped.samples["push_gateway_insecure_settings"] == 1)
        #expect(scraped.samples[#"push_gateway_db_pool_connections{state="in_use"}"#] == 2)
        #expect(scraped.samples[#"push_gateway_db_pool_connections{state="idle"}"#] == 1)
        #expect(
            scraped.samples[#"push_gateway_http_requests_total{listener="public",route="unknown",status_class="4xx"}"#]
                == 1)
        #expect(
            scraped.samples[
                #"push_gateway_http_requests_total{listener="public",route="/registered",status_class="5xx"}"#] == 1)
        #expect(
            scraped.samples[#"push_gateway_http_request_duration_seconds_count{listener="public",route="unknown"}"#]
                == 1)
        #expect(!metrics.render().contains("never-registered"))
    }

    @Test("requests counted through a route's resolved series render the same text as counting by label values")
    func recorderMatchesLabelValues() throws {
        let resolved = GatewayMetrics(insecureSettingsInUse: false) { PostgresPool.Statistics(open: 0, idle: 0) }
        let byLabels = GatewayMetrics(insecureSettingsInUse: false) { PostgresPool.Statistics(open: 0, idle: 0) }
        let routes = ["/v1/installations/challenges", "/v1/deliveries", "/_liveness"]
        let publicRecorder = resolved.registerRoutes(listener: .publicListener, labels: routes)
        let privateRecorder = resolved.registerRoutes(listener: .privateListener, labels: ["/metrics"])
        byLabels.registerRoutes(listener: .publicListener, labels: routes)
        byLabels.registerRoutes(listener: .privateListener, labels: ["/metrics"])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let isPublic = Bool.random(using: &generator)
            let known = isPublic ? routes : ["/metrics"]
            let route = try #require(
                (known + [Router.unknownLabel, "never-registered"]).randomElement(using: &generator))
            let status = try #require([200, 204, 400, 404, 429, 500, 503, 599].randomElement(using: &generator))
            let seconds = Double.random(in: 0...25, using: &generator)
            (isPublic ? publicRecorder : privateRecorder).record(route: route, status: status, durationSeconds: seconds)
            let listener = (isPublic ? HTTPListener.publicListener : .privateListener).rawValue
            let label = known.contains(route) ? route : Router.unknownLabel
            byLabels.httpRequests.add(
                1, labelValues: [listener, label, HTTPStatusClass(status: status).rawValue])
            byLabels.httpRequestDurations.observe(seconds, labelValues: [listener, label])
        }
        func requestFamilies(_ metrics: GatewayMetrics) -> String {
            var text = ""
            metrics.httpRequests.render(into: &text)
            metrics.httpRequestDurations.render(into: &text)
            return text
        }
        #expect(requestFamilies(resolved) == requestFamilies(byLabels))
    }
}

@Suite("Metrics on a running gateway", .serialized, .tags(.postgres))
struct MetricsLiveTests {
    /// Values a client sends that must never appear in a scrape (docs/protocol.md §9).
    static let secrets = [
        "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90",  // device token
        "k1.c2VjcmV0LWdyYW50LWJ5dGVz",  // grant
        "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",  // relay pubkey
        "4f1c2a7e-0b3d-4e5f-8a9b-0c1d2e3f4a5b",  // request id
        "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a",  // installation handle
    ]

    @Test("GET /metrics renders the expected series with the right types and none of the values clients sent")
    func scrapeAfterTraffic() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            #expect(MigrateTestSupport.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let gateway = try TestGateway(database: .url(database.url(for: role))) {
                $0.with("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", "6")
            }
            let (token, grant, relay, requestID, handle) = (
                Self.secrets[0], Self.secrets[1], Self.secrets[2], Self.secrets[3], Self.secrets[4]
            )
            #expect(try gateway.post("/v1/installations/challenges", #"{"v":1}"#).status == 200)
            #expect(try gateway.post("/v1/installations/challenges", #"{"v":1}"#).status == 429)
            let delivery =
                #"{"v":1,"endpoint_grant":"\#(grant)","request_id":"\#(requestID)","expires_at":1}"#
            _ = try gateway.post("/v1/deliveries/apns", delivery, headers: "Authorization: Nostr \(relay)\r\n")
            _ = try gateway.post("/v1/installations/endpoint?handle=\(handle)", #"{"endpoint":"\#(token)"}"#)
            _ = try gateway.post("/\(token)", "{}")
            #expect(try gateway.get("/_readiness").status == 200)

            let response = try gateway.get("/metrics")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let text = response.bodyText
            for secret in Self.secrets { #expect(!text.contains(secret)) }
            let scraped = try ScrapedMetrics(text)
            let expectedTypes = [
                "push_gateway_build_info": "gauge",
                "push_gateway_http_open_connections": "gauge",
                "push_gateway_db_pool_max_connections": "gauge",
                "push_gateway_readiness": "gauge",
                "push_gateway_apns_responses_total": "counter",
                "push_gateway_apns_certificate_expiry_timestamp_seconds": "gauge",
                "process_cpu_seconds_total": "counter",
                "process_resident_memory_bytes": "gauge",
                "process_open_fds": "gauge",
                "process_max_fds": "gauge",
                "process_start_time_seconds": "gauge",
                "push_gateway_http_requests_total": "counter",
                "push_gateway_http_request_duration_seconds": "histogram",
                "push_gateway_http_queued_requests": "gauge",
                "push_gateway_db_pool_connections": "gauge",
                "push_gateway_challenge_rate_limited_total": "counter",
                "push_gateway_lifecycle_rate_limited_total": "counter",
                "push_gateway_android_attestations_total": "counter",
                "push_gateway_delivery_admissions_total": "counter",
                "push_gateway_apns_requests_total": "counter",
                // Exported without series: no android profile is enabled (docs/decisions/0440).
                "push_gateway_fcm_requests_total": "counter",
                "push_gateway_fcm_responses_total": "counter",
                "push_gateway_fcm_token_refreshes_total": "counter",
                "push_gateway_stage_duration_seconds": "histogram",
                "push_gateway_reaper_runs_total": "counter",
                "push_gateway_reaper_deleted_rows_total": "counter",
                "push_gateway_insecure_settings": "gauge",
                "push_gateway_android_status_list_age_seconds": "gauge",
                "push_gateway_marmot_triggers_total": "counter",
                "push_gateway_marmot_tokens_total": "counter",
                "push_gateway_marmot_relay_connections": "gauge",
            ]
            #expect(scraped.types == expectedTypes)
            let requests = "push_gateway_http_requests_total"
            #expect(scraped.samples[#"\#(requests){listener="public",route="challenges",status_class="2xx"}"#] == 1)
            #expect(scraped.samples[#"\#(requests){listener="public",route="challenges",status_class="4xx"}"#] == 1)
            // The delivery and rotation posts hit their routes (401 and 400); only `/<token>` is unknown.
            #expect(scraped.samples[#"\#(requests){listener="public",route="deliveries",status_class="4xx"}"#] == 1)
            #expect(
                scraped.samples[#"\#(requests){listener="public",route="rotate_endpoint",status_class="4xx"}"#] == 1)
            #expect(scraped.samples[#"\#(requests){listener="public",route="unknown",status_class="4xx"}"#] == 1)
            #expect(scraped.samples[#"\#(requests){listener="private",route="readiness",status_class="2xx"}"#] == 1)
            #expect(
                scraped.samples[
                    #"push_gateway_http_request_duration_seconds_count{listener="public",route="challenges"}"#]
                    == 2)
            #expect(scraped.samples["push_gateway_challenge_rate_limited_total"] == 1)
            #expect(scraped.samples["push_gateway_insecure_settings"] == 0)
            #expect((scraped.samples[#"push_gateway_db_pool_connections{state="idle"}"#] ?? 0) >= 1)
            for result in ReaperRunResult.allCases {
                #expect(scraped.samples["push_gateway_reaper_runs_total{result=\"\(result.rawValue)\"}"] == 0)
            }
            let labelValues = Set(
                scraped.samples.keys.flatMap { series in
                    series.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
                })
            let closed =
                Set(["public", "private", "unknown"])
                .union(gateway.server.application.routes(on: .publicListener).map(\.label))
                .union(gateway.server.application.routes(on: .privateListener).map(\.label))
                .union(HTTPStatusClass.allCases.map(\.rawValue)).union(DeliveryAdmissionResult.allCases.map(\.rawValue))
                .union(PushRequestOutcome.allCases.map(\.rawValue)).union(RequestStage.allCases.map(\.rawValue))
                .union(ReaperRunResult.allCases.map(\.rawValue)).union(ReaperTable.allCases.map(\.rawValue))
                .union(AndroidAttestationResult.allCases.map(\.rawValue))
                .union(["in_use", "idle", "+Inf", GatewayVersion.current]).union(APNsReasonLabel.allValues)
                .union(ReadinessTracker.states).union(gateway.server.application.configuration.profiles.map(\.id))
                .union(MarmotTriggerResult.allCases.map(\.rawValue)).union(MarmotTokenResult.allCases.map(\.rawValue))
                .union(MarmotTokenPlatform.allCases.map(\.rawValue))
                .union(NostrRelayConnectionState.allCases.map(\.rawValue))
                .union(
                    GatewayMetrics.requestDurationBounds.map(PrometheusText.value))
            #expect(labelValues.subtracting(closed).isEmpty, "label values outside the closed sets")
        }
    }

    @Test("push_gateway_insecure_settings is 1 when a test/development variable is set")
    func insecureSettingsGauge() throws {
        let gateway = try TestGateway {
            $0.with("PUSH_GATEWAY_APNS_URL_SANDBOX", "https://127.0.0.1:8443")
        }
        let scraped = try ScrapedMetrics(try gateway.get("/metrics").bodyText)
        #expect(scraped.samples["push_gateway_insecure_settings"] == 1)
    }
}

@Suite("PushMetrics: the registry and the labeled families")
struct MetricsRegistryTests {
    @Test("the registry renders its families in registration order and lists them with their types")
    func registryOrder() throws {
        let registry = MetricsRegistry()
        let counter = registry.register(CounterFamily(name: "b_total", help: "b", labelNames: [], series: [[]]))
        registry.register(SampledGaugeFamily(name: "a", help: "a") { [([], 2)] })
        counter.add(3, labelValues: [])
        #expect(registry.catalog.map(\.name) == ["b_total", "a"])
        #expect(registry.catalog.map(\.type) == ["counter", "gauge"])
        #expect(
            registry.render()
                == "# HELP b_total b\n# TYPE b_total counter\nb_total 3\n# HELP a a\n# TYPE a gauge\na 2\n")
    }

    @Test("a timed stage is recorded whether its body returns or throws")
    func timedStageRecordsThrows() {
        let histogram = LabeledHistogram<RequestStage>(
            name: "h_seconds", help: "h", labelName: "stage", bounds: GatewayMetrics.requestDurationBounds)
        #expect(histogram.time(.apnsRequest) { 7 } == 7)
        #expect(throws: TestSupportError.self) {
            try histogram.time(.apnsRequest) { throw TestSupportError("refused") }
        }
        #expect(histogram.count(.apnsRequest) == 2)
        #expect(histogram.count(.nip98Authentication) == 0)
    }
}
