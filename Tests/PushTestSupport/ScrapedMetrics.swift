import Testing

/// One parsed exposition: family types and sample lines, checked against the 0.0.4 grammar.
public struct ScrapedMetrics {
    public var types: [String: String] = [:]
    public var helps: Set<String> = []
    /// Sample name with its label text exactly as rendered (`name{a="b"}`) → value.
    public var samples: [String: Double] = [:]

    public init(_ text: String) throws {
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
