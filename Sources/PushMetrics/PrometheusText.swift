/// Writers for the Prometheus text exposition format 0.0.4 (prometheus.io "Exposition formats":
/// `# HELP` / `# TYPE` lines, then one `name{label="value",…} value` line per series).
public enum PrometheusText {
    /// The `Content-Type` of a scrape response.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// `# HELP` and `# TYPE` lines of one family.
    public static func header(name: String, help: String, type: String, into output: inout String) {
        output += "# HELP \(name) \(escapeHelp(help))\n# TYPE \(name) \(type)\n"
    }

    /// One sample line. `labels` are name/value pairs in output order.
    public static func sample(name: String, labels: [(String, String)], value: String, into output: inout String) {
        output += name
        if !labels.isEmpty {
            output += "{"
            output += labels.map { "\($0.0)=\"\(escapeLabelValue($0.1))\"" }.joined(separator: ",")
            output += "}"
        }
        output += " \(value)\n"
    }

    /// HELP text escapes backslash and line feed.
    public static func escapeHelp(_ text: String) -> String { escape(text, quotes: false) }

    /// Label values escape backslash, double quote and line feed.
    public static func escapeLabelValue(_ text: String) -> String { escape(text, quotes: true) }

    private static func escape(_ text: String, quotes: Bool) -> String {
        var escaped = ""
        for character in text.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"" where quotes: escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A sample value: integers without a fraction, `+Inf`/`-Inf`/`NaN` as the format spells them.
    public static func value(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number > 0 ? "+Inf" : "-Inf" }
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    public static func value(_ number: UInt64) -> String { String(number) }
}
