import GatewayConfiguration
import PushFCM

/// An `fcm` profile's settings (docs/protocol.md §8a, §12) from its `…_FCM_*` values: the project
/// and the service account, its file read and parsed here (docs/decisions/0865).
package struct FCMProfileSettings: ProviderProfileSettings {
    let projectID: String
    let account: ServiceAccount

    package init(_ profile: AppProfile) throws(ProviderSettingsRefusal) {
        var reader = EnvironmentReader(profile.providerVariables)
        let projectName = profile.variable("FCM_PROJECT_ID")
        var projectID = reader.required(projectName)
        if let text = projectID, !Self.isFirebaseProjectID(text) {
            reader.fail(projectName, "must be a Firebase project id (6..30 of a-z 0-9 -, starting with a letter)")
            projectID = nil
        }
        let accountName = profile.variable("FCM_SERVICE_ACCOUNT_FILE")
        var account: ServiceAccount?
        if let path = reader.required(accountName), let contents = reader.fileContents(named: accountName, path: path) {
            do {
                account = try ServiceAccount.parse(contents)
            } catch {
                reader.fail(accountName, "is not a usable service-account JSON key (\(error.code))")
            }
        }
        guard let projectID, let account else { throw ProviderSettingsRefusal(reader.problems) }
        self.projectID = projectID
        self.account = account
    }

    /// Firebase (Google Cloud) project ids: 6..30 of lowercase letters, digits and `-`, starting with
    /// a letter and not ending with `-` (the rule ``ServiceAccount`` applies to `project_id` too).
    static func isFirebaseProjectID(_ text: String) -> Bool {
        guard (6...30).contains(text.utf8.count), let first = text.utf8.first, let last = text.utf8.last,
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), last != UInt8(ascii: "-")
        else { return false }
        return text.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "-")
        }
    }
}
