import PushDelivery

extension PushService {
    /// Apple Push Notification service (docs/protocol.md §8), the provider of `ios` profiles.
    public static let apns = PushService(rawValue: "apns")
}
