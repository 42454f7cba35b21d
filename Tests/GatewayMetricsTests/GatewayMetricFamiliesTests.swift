import GatewayAPI
import PushDelivery
import PushHTTP
import PushMetrics
import PushTestSupport
import Testing

@testable import GatewayMetrics
@testable import PushPostgres

@Suite(
    "GatewayMetrics: the gateway's families and the requests recorder, rendered (docs/protocol.md §9)", .testBodyThreads
)
struct GatewayMetricFamiliesTests {
    @Test("the typed counters render every closed label value, zero until incremented")
    func typedCounters() throws {
        let metrics = GatewayMetrics(insecureSettingsInUse: true) { PostgresPool.Statistics(open: 3, idle: 1) }
        metrics.deliveryAdmissions.increment(.invalidGrant)
        metrics.deliveryAdmissions.increment(.invalidGrant)
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

    @Test("a timed stage is recorded whether its body returns or throws")
    func timedStageRecordsThrows() {
        let histogram = LabeledHistogram<RequestStage>(
            name: "h_seconds", help: "h", labelName: "stage", bounds: GatewayMetrics.requestDurationBounds)
        #expect(histogram.time(.lifecycleTransaction) { 7 } == 7)
        #expect(throws: TestSupportError.self) {
            try histogram.time(.lifecycleTransaction) { throw TestSupportError("refused") }
        }
        #expect(histogram.count(.lifecycleTransaction) == 2)
        #expect(histogram.count(.nip98Authentication) == 0)
    }
}
