import PushMetrics

/// Which listener served a request.
public enum HTTPListener: String, MetricLabel {
    case publicListener = "public"
    case privateListener = "private"
}
