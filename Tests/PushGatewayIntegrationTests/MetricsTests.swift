import Foundation
import MarmotIngress
import PushAPNs
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

@Suite("Metrics on a running gateway", .serialized, .tags(.postgres), .testBodyThreads)
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
                // Exported without series: no webpush profile is enabled (docs/decisions/0840).
                "push_gateway_webpush_requests_total": "counter",
                "push_gateway_webpush_responses_total": "counter",
                "push_gateway_webpush_refusing_origins": "gauge",
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
                .union(PushProviderModules.standard.all.map { GatewayMetrics.requestStage($0.service) })
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
