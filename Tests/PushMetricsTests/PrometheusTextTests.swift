import PushMetrics
import PushTestSupport
import Testing

@Suite("Metrics: the Prometheus text format and its families", .testBodyThreads)
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
}

@Suite("PushMetrics: the registry and the labeled families", .testBodyThreads)
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
}
