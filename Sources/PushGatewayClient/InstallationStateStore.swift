import Foundation

#if canImport(Security)
    import Security
#endif

/// Where the client keeps its ``InstallationState``. `load` answers an empty state when nothing is
/// stored.
public protocol InstallationStateStore: Sendable {
    func load() throws -> InstallationState
    func save(_ state: InstallationState) throws
}

/// A state kept in memory only: for tests and previews (an app that forgets its state must enroll
/// again on every launch).
public final class InMemoryInstallationStateStore: InstallationStateStore, @unchecked Sendable {
    private let lock = NSLock()
    private var state: InstallationState

    public init(_ state: InstallationState = InstallationState()) { self.state = state }

    public func load() throws -> InstallationState {
        lock.lock()
        defer { lock.unlock() }
        return state
    }

    public func save(_ state: InstallationState) throws {
        lock.lock()
        defer { lock.unlock() }
        self.state = state
    }
}

#if canImport(Security)
    /// A state kept in the Keychain as one generic-password item, readable after the first unlock and
    /// never migrated to another device (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), so a
    /// background launch can read it and a backup cannot carry it away.
    public struct KeychainInstallationStateStore: InstallationStateStore {
        /// A failed Keychain call, with its `OSStatus`.
        public struct KeychainError: Error, Sendable, Equatable {
            public let status: Int32
        }

        public let service: String
        public let account: String
        /// A keychain access group shared with an app extension, if any.
        public let accessGroup: String?

        /// `account` tells apart the state of several gateways (or profiles) in one app.
        public init(
            service: String = "push-gateway-client", account: String = "installation", accessGroup: String? = nil
        ) {
            self.service = service
            self.account = account
            self.accessGroup = accessGroup
        }

        private var itemQuery: [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        public func load() throws -> InstallationState {
            var query = itemQuery
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return InstallationState() }
            guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
            return try JSONDecoder().decode(InstallationState.self, from: data)
        }

        public func save(_ state: InstallationState) throws {
            let data = try JSONEncoder().encode(state)
            let update: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(itemQuery as CFDictionary, update as CFDictionary)
            if status == errSecItemNotFound {
                status = SecItemAdd(itemQuery.merging(update) { _, new in new } as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw KeychainError(status: status) }
        }
    }
#endif
