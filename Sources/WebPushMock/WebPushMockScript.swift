import APNsMock
import PushJSON

/// How `webpush-mock` answers one push message that passed every check (docs/decisions/0800).
public struct WebPushMockReply: Sendable, Equatable {
    /// `respond` answers; `stall` never answers (a push service that hangs); `close` drops the
    /// connection.
    public var action: MockAction
    public var status: Int
    /// The raw `Retry-After` value (seconds or an HTTP date), e.g. with a 429.
    public var retryAfter: String?
    /// The `Location` of a redirect (a 301): the gateway must not follow it (docs/protocol.md §8b).
    public var location: String?

    public init(action: MockAction = .respond, status: Int = 201, retryAfter: String? = nil, location: String? = nil) {
        self.action = action
        self.status = status
        self.retryAfter = retryAfter
        self.location = location
    }

    /// RFC 8030 §5: the push service accepted the message.
    public static let created = WebPushMockReply()
}

/// One subscription's answers: `replies` are used one per accepted message, in order, then
/// `defaultReply` for every later one.
public struct WebPushMockScript: Sendable, Equatable {
    public var replies: [WebPushMockReply]
    public var defaultReply: WebPushMockReply

    public init(replies: [WebPushMockReply] = [], defaultReply: WebPushMockReply = .created) {
        self.replies = replies
        self.defaultReply = defaultReply
    }

    /// Takes the next reply.
    mutating func next() -> WebPushMockReply { replies.isEmpty ? defaultReply : replies.removeFirst() }

    /// The script of a `POST /subscribe` body: `{"replies":[REPLY,…],"default":REPLY}`, both optional,
    /// REPLY being `{"status":N,"retry_after":"…"|N,"location":"…","action":"respond|stall|close"}`
    /// (every member optional; `status` 201 and `action` respond by default).
    public static func parse(_ value: JSONValue) throws(MockError) -> WebPushMockScript {
        guard let object = try? JSONObject.closed(value, keys: [], optionalKeys: ["replies", "default"]) else {
            throw MockError(description: "the script is not {\"replies\":[…],\"default\":{…}}")
        }
        var script = WebPushMockScript()
        if object.contains("replies") {
            guard let replies = try? object.array("replies") else {
                throw MockError(description: "script: replies must be an array")
            }
            for reply in replies { script.replies.append(try Self.reply(reply)) }
        }
        if let value = try? object.value("default") { script.defaultReply = try Self.reply(value) }
        return script
    }

    private static func reply(_ value: JSONValue) throws(MockError) -> WebPushMockReply {
        guard
            let object = try? JSONObject.closed(
                value, keys: [], optionalKeys: ["status", "retry_after", "location", "action"])
        else { throw MockError(description: "script: a reply is an object of status, retry_after, location, action") }
        var reply = WebPushMockReply()
        if object.contains("status") {
            guard let status = try? object.int64("status"), (100...599).contains(status) else {
                throw MockError(description: "script: status must be an integer 100..599")
            }
            reply.status = Int(status)
        }
        if object.contains("retry_after") {
            if let seconds = try? object.int64("retry_after") {
                reply.retryAfter = String(seconds)
            } else if let text = try? object.string("retry_after") {
                reply.retryAfter = text
            } else {
                throw MockError(description: "script: retry_after must be a string or an integer")
            }
        }
        if object.contains("location") {
            guard let location = try? object.string("location") else {
                throw MockError(description: "script: location must be a string")
            }
            reply.location = location
        }
        if object.contains("action") {
            guard let name = try? object.string("action"), let action = MockAction(rawValue: name),
                [.respond, .stall, .close].contains(action)
            else { throw MockError(description: "script: action must be respond, stall or close") }
            reply.action = action
        }
        return reply
    }
}
