import PushDelivery

extension PushService {
    /// Firebase Cloud Messaging HTTP v1 (docs/protocol.md §8a), the default provider of `android` profiles.
    public static let fcm = PushService(rawValue: "fcm")
}
