public import PushCurl
public import PushDelivery
public import PushSystem
import Synchronization

/// `…_WEBPUSH_ALLOWED_HOSTS` (docs/protocol.md §12): exact host names and `*.suffix` patterns,
/// lowercase A-labels. A pattern matches any host ending in `.suffix`, never `suffix` itself.
public struct WebPushAllowedHosts: Sendable, Equatable {
    public let exactHosts: Set<String>
    /// Each stored with its leading dot (`.example.org`).
    public let suffixes: [String]

    /// Parses a comma list; nil when any item is not a lowercase DNS name or `*.` and one, or the
    /// list is empty or names an item twice.
    public init?(_ text: String) {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard !items.isEmpty, Set(items).count == items.count else { return nil }
        var exact = Set<String>()
        var suffixes: [String] = []
        for item in items {
            if item.hasPrefix("*.") {
                let suffix = item.dropFirst(2)
                guard PushResourceURL.isDNSName(suffix) else { return nil }
                suffixes.append("." + suffix)
            } else {
                guard PushResourceURL.isDNSName(item) else { return nil }
                exact.insert(String(item))
            }
        }
        exactHosts = exact
        self.suffixes = suffixes
    }

    /// Whether an endpoint's host (as `WebPushEndpoint.host` holds it) is on the list. An IP literal
    /// matches only when the list names it, which a list of DNS names never does.
    public func permits(_ host: String) -> Bool {
        exactHosts.contains(host) || suffixes.contains { host.hasSuffix($0) }
    }
}

/// One `webpush` profile as its provider sends for it (docs/protocol.md §8b, §12).
public struct WebPushProfile: Sendable {
    /// The profile's VAPID key and `sub`.
    public let vapid: VAPIDSigner
    /// nil: any host the address rule allows.
    public let allowedHosts: WebPushAllowedHosts?

    public init(vapid: VAPIDSigner, allowedHosts: WebPushAllowedHosts?) {
        self.vapid = vapid
        self.allowedHosts = allowedHosts
    }
}

/// Web Push as a `PushProvider` (docs/protocol.md §8b, classification §4.7): every `webpush` profile
/// sends through one shared `WebPushSender`, so the per-origin buckets and the in-flight caps bound
/// the replica, not each profile.
public final class WebPushPushProvider: PushProvider {
    public var service: PushService { .webpush }
    /// The TTL of a background wake (a Marmot trigger, docs/protocol.md §13 step 7), as for FCM.
    static let backgroundTimeToLiveSeconds: Int64 = 3600

    private let sender: WebPushSender
    private let profiles: [String: WebPushProfile]
    private let clock: any WallClock
    private let stopped = Atomic<Bool>(false)

    public init(sender: WebPushSender, profiles: [String: WebPushProfile], clock: any WallClock = SystemWallClock()) {
        self.sender = sender
        self.profiles = profiles
        self.clock = clock
    }

    /// A provider whose client runs on `loop` and resolves names on `workers`, both the
    /// application's runtime's (docs/decisions/0870): resolution blocks (getaddrinfo), so it never
    /// runs on the loop (§8b "Bounds").
    public convenience init(
        profiles: [String: WebPushProfile], settings: WebPushSender.Settings,
        client configuration: CurlMultiClient.Configuration, resolver: any HostResolver = SystemHostResolver(),
        on loop: EventLoop, workers: WorkerPool, clock: any WallClock = SystemWallClock()
    ) {
        let client = CurlMultiClient(eventLoop: loop, configuration: configuration)
        let sender = WebPushSender(client: client, resolver: resolver, resolverWorkers: workers, settings: settings)
        self.init(sender: sender, profiles: profiles, clock: clock)
    }

    public func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        guard let profile = profiles[wake.profileID] else {
            completion(.notSent(.configurationFault(.missingCredentials), service: .webpush))
            return
        }
        // The stored bytes are the §8b string enrollment accepted; one that no longer parses can
        // never be sent to.
        guard let endpoint = WebPushEndpoint(String(decoding: wake.deviceToken, as: UTF8.self)) else {
            completion(.webPushNotSent(.endpointDead(invalidAtSeconds: nil), .endpointRefused))
            return
        }
        // §12: the allowed hosts apply at send time too, so narrowing the list retires endpoints
        // outside it as dead (410) rather than sending to them.
        if let allowed = profile.allowedHosts, !allowed.permits(endpoint.host) {
            completion(.webPushNotSent(.endpointDead(invalidAtSeconds: nil), .hostNotAllowed))
            return
        }
        let now = clock.unixSeconds()
        let expiresAt =
            switch wake.style {
            case .reconnect: wake.expiresAt
            case .background: now + Self.backgroundTimeToLiveSeconds
            }
        sender.send(endpoint: endpoint, vapid: profile.vapid, expiresAt: expiresAt, now: now, completion: completion)
    }

    /// The distinct push-service origins that answered 401 or 403 within `RefusingOrigins.window`
    /// (docs/protocol.md §4.7; `push_gateway_webpush_refusing_origins`, docs/decisions/0856).
    public var refusingOriginCount: Int { sender.refusingOrigins.count() }

    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // The loop and the workers are the runtime's: they keep running for their other users.
        sender.client.shutdown()
    }
}
