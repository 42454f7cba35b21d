/// Apple's `reason` as a label: one of the reasons Apple documents ("Handling notification
/// responses from APNs"), `none` for a 200, `other` for anything else Apple might send.
public enum APNsReasonLabel {
    public static let documented = [
        "BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic",
        "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken",
        "MissingTopic", "PayloadEmpty", "TopicDisallowed", "BadCertificate", "BadCertificateEnvironment",
        "ExpiredProviderToken", "Forbidden", "InvalidProviderToken", "MissingProviderToken", "UnrelatedKeyIdInToken",
        "BadEnvironmentKeyIdInToken", "BadPath", "MethodNotAllowed", "ExpiredToken", "Unregistered",
        "PayloadTooLarge", "TooManyProviderTokenUpdates", "TooManyRequests", "InternalServerError",
        "ServiceUnavailable", "Shutdown",
    ]
    private static let documentedSet = Set(documented)

    /// Every label value, in exposition order.
    public static let allValues = ["none"] + documented + ["other"]

    /// The label of one answer: `none` for a 200 without a reason.
    public static func label(status: Int, reason: String?) -> String {
        guard let reason else { return status == 200 ? "none" : "other" }
        return documentedSet.contains(reason) ? reason : "other"
    }
}
