import PushJSON

/// How `apns-mock` answers one request that passed validation.
public struct APNsMockReply: Sendable, Equatable {
    /// `respond` answers with `status` (and `reason`, `timestamp`, `Retry-After`) after `delayMilliseconds`.
    public var action: MockAction
    public var status: Int
    public var reason: String?
    public var timestampMilliseconds: Int64?
    /// The raw `Retry-After` value, so tests can send dates and fractions.
    public var retryAfter: String?
    public var delayMilliseconds: Int

    public init(
        action: MockAction = .respond, status: Int = 200, reason: String? = nil, timestampMilliseconds: Int64? = nil,
        retryAfter: String? = nil, delayMilliseconds: Int = 0
    ) {
        self.action = action
        self.status = status
        self.reason = reason
        self.timestampMilliseconds = timestampMilliseconds
        self.retryAfter = retryAfter
        self.delayMilliseconds = delayMilliseconds
    }
}

/// The answers `apns-mock` gives, in this order of precedence: the next unused reply listed for
/// the request's device token, else the next unused reply of `sequence`, else `defaultReply`.
public struct APNsMockScript: Sendable, Equatable {
    public var defaultReply: APNsMockReply
    public var sequence: [APNsMockReply]
    /// Keyed by lowercase hex device token.
    public var perToken: [String: [APNsMockReply]]
    /// Each of the first `goAwayConnections` connections sends GOAWAY after processing this many
    /// requests; later streams on it stay unprocessed.
    public var goAwayAfterStreams: Int?
    public var goAwayConnections: Int

    public init(
        defaultReply: APNsMockReply = APNsMockReply(), sequence: [APNsMockReply] = [],
        perToken: [String: [APNsMockReply]] = [:], goAwayAfterStreams: Int? = nil, goAwayConnections: Int = Int.max
    ) {
        self.defaultReply = defaultReply
        self.sequence = sequence
        self.perToken = perToken
        self.goAwayAfterStreams = goAwayAfterStreams
        self.goAwayConnections = goAwayConnections
    }

    /// Reads the script file format:
    /// `{"default":{…},"sequence":[{…}],"tokens":{"<hex>":[{…}]},"goaway_after_streams":N,
    /// "goaway_connections":N}` where each reply is `{"action":"respond|stall|refuse|close|goaway",
    /// "status":N,"reason":"…","timestamp":N,"retry_after":"…"|N,"delay_ms":N}` (all optional).
    public static func parse(_ bytes: [UInt8]) throws(MockError) -> APNsMockScript {
        guard let value = try? JSONReader.parse(bytes), case .object(let members) = value else {
            throw MockError(description: "the script is not a JSON object")
        }
        var script = APNsMockScript()
        for (name, member) in members.map({ ($0.name, $0.value) }) {
            switch name {
            case "default": script.defaultReply = try reply(member)
            case "sequence":
                guard case .array(let elements) = member else {
                    throw MockError(description: "sequence must be an array")
                }
                script.sequence = try elements.map { (element) throws(MockError) in try reply(element) }
            case "tokens":
                guard case .object(let tokens) = member else {
                    throw MockError(description: "tokens must be an object")
                }
                for (token, list) in tokens.map({ ($0.name, $0.value) }) {
                    guard case .array(let elements) = list else {
                        throw MockError(description: "token replies must be an array")
                    }
                    script.perToken[token.lowercased()] = try elements.map { (element) throws(MockError) in
                        try reply(element)
                    }
                }
            case "goaway_after_streams":
                guard case .integer(let count) = member, count > 0 else {
                    throw MockError(description: "bad goaway_after_streams")
                }
                script.goAwayAfterStreams = Int(count)
            case "goaway_connections":
                guard case .integer(let count) = member, count > 0 else {
                    throw MockError(description: "bad goaway_connections")
                }
                script.goAwayConnections = Int(count)
            default:
                throw MockError(description: "unknown script member \(name)")
            }
        }
        return script
    }

    private static func reply(_ value: JSONValue) throws(MockError) -> APNsMockReply {
        guard case .object(let members) = value else { throw MockError(description: "a reply must be an object") }
        var reply = APNsMockReply()
        for (name, member) in members.map({ ($0.name, $0.value) }) {
            switch name {
            case "action":
                guard case .string(let text) = member, let action = MockAction(rawValue: text) else {
                    throw MockError(description: "unknown action")
                }
                reply.action = action
            case "status":
                guard case .integer(let status) = member, (100...599).contains(status) else {
                    throw MockError(description: "bad status")
                }
                reply.status = Int(status)
            case "reason":
                guard case .string(let reason) = member else {
                    throw MockError(description: "reason must be a string")
                }
                reply.reason = reason
            case "timestamp":
                guard case .integer(let timestamp) = member else { throw MockError(description: "bad timestamp") }
                reply.timestampMilliseconds = timestamp
            case "retry_after":
                switch member {
                case .string(let text): reply.retryAfter = text
                case .integer(let number): reply.retryAfter = String(number)
                case .number(let number): reply.retryAfter = number.text
                default:
                    throw MockError(description: "retry_after must be a string or a number")
                }
            case "delay_ms":
                guard case .integer(let delay) = member, delay >= 0 else {
                    throw MockError(description: "bad delay_ms")
                }
                reply.delayMilliseconds = Int(delay)
            default:
                throw MockError(description: "unknown reply member \(name)")
            }
        }
        return reply
    }
}

/// Hands out replies from a script; one instance is shared by every connection of a mock.
struct APNsMockScriptCursor {
    private var script: APNsMockScript
    private var sequenceIndex = 0
    private var tokenIndex: [String: Int] = [:]

    init(script: APNsMockScript) { self.script = script }

    var goAwayAfterStreams: Int? { script.goAwayAfterStreams }
    var goAwayConnections: Int { script.goAwayConnections }

    mutating func nextReply(forToken token: String) -> APNsMockReply {
        if let replies = script.perToken[token] {
            let index = tokenIndex[token, default: 0]
            if index < replies.count {
                tokenIndex[token] = index + 1
                return replies[index]
            }
        }
        if sequenceIndex < script.sequence.count {
            sequenceIndex += 1
            return script.sequence[sequenceIndex - 1]
        }
        return script.defaultReply
    }
}
