import GatewayMetrics
import PushHTTP
import PushMetrics
import PushSystem

/// `GET /metrics` on the private listener (docs/protocol.md §9): the Prometheus text exposition.
struct MetricsRoute: Sendable {
    let metrics: GatewayMetrics

    func handle(_ request: Request) -> Response {
        Response(
            status: 200, headers: [HTTPField("Content-Type", PrometheusText.contentType)],
            body: Array(metrics.render().utf8))
    }
}
