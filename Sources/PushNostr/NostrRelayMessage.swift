import PushJSON

/// A message from a relay to a client (NIP-01, NIP-42), read strictly: a JSON array whose first
/// element names the type and whose other elements have that type's shapes. Anything else is nil
/// (the caller ignores it: relays add types over time). Trailing elements NIP-01 does not define are
/// tolerated, as relays add them.
public enum NostrRelayMessage: Sendable, Equatable {
    /// `["EVENT", <subscription id>, <event object>]`: the event still to be read strictly.
    case event(subscriptionID: String, event: JSONValue)
    /// `["EOSE", <subscription id>]`: stored events are over; what follows is live.
    case endOfStoredEvents(subscriptionID: String)
    /// `["CLOSED", <subscription id>, <message>]`: the relay ended the subscription.
    case closed(subscriptionID: String, message: String)
    /// `["NOTICE", <message>]`.
    case notice(String)
    /// `["OK", <event id>, <accepted>, <message>]`: the answer to an `EVENT` or `AUTH`.
    case ok(eventID: String, accepted: Bool, message: String)
    /// `["AUTH", <challenge>]` (NIP-42).
    case authChallenge(String)

    /// A relay message is bounded by the WebSocket message limit; nesting beyond an event's is refused.
    static let maximumDepth = 8

    public init?(json: [UInt8]) {
        guard case .array(let elements)? = try? JSONReader.parse(json, maximumDepth: Self.maximumDepth),
            case .string(let type)? = elements.first
        else { return nil }
        func string(_ index: Int) -> String? {
            guard index < elements.count, case .string(let text) = elements[index] else { return nil }
            return text
        }
        switch type {
        case "EVENT":
            guard let subscriptionID = string(1), elements.count >= 3, case .object = elements[2] else { return nil }
            self = .event(subscriptionID: subscriptionID, event: elements[2])
        case "EOSE":
            guard let subscriptionID = string(1) else { return nil }
            self = .endOfStoredEvents(subscriptionID: subscriptionID)
        case "CLOSED":
            guard let subscriptionID = string(1) else { return nil }
            self = .closed(subscriptionID: subscriptionID, message: string(2) ?? "")
        case "NOTICE":
            guard let message = string(1) else { return nil }
            self = .notice(message)
        case "OK":
            guard let eventID = string(1), elements.count >= 3, case .bool(let accepted) = elements[2] else {
                return nil
            }
            self = .ok(eventID: eventID, accepted: accepted, message: string(3) ?? "")
        case "AUTH":
            guard let challenge = string(1) else { return nil }
            self = .authChallenge(challenge)
        default:
            return nil
        }
    }
}

/// Messages from a client to a relay (NIP-01, NIP-42), as compact JSON text.
public enum NostrClientMessage {
    /// `["REQ", <subscription id>, <filter>]` with one filter given as a JSON object.
    public static func request(subscriptionID: String, filter: JSONValue) -> String {
        text(.array([.string("REQ"), .string(subscriptionID), filter]))
    }

    /// `["EVENT", <event>]`.
    public static func event(_ event: NostrEvent) -> String {
        "[\"EVENT\"," + String(decoding: event.json, as: UTF8.self) + "]"
    }

    /// `["AUTH", <signed kind 22242 event>]`.
    public static func auth(_ event: NostrEvent) -> String {
        "[\"AUTH\"," + String(decoding: event.json, as: UTF8.self) + "]"
    }

    /// `["CLOSE", <subscription id>]`.
    public static func close(subscriptionID: String) -> String {
        text(.array([.string("CLOSE"), .string(subscriptionID)]))
    }

    private static func text(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.serialize(value), as: UTF8.self)
    }
}
