import Glibc

/// An IPv4 or IPv6 TCP address parsed from `host:port` (`0.0.0.0:8080`, `127.0.0.1:0`,
/// `[::1]:8080`, `localhost:8080`). Port 0 asks the kernel for an ephemeral port.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable, Hashable {
        case ipv4
        case ipv6
    }

    public let family: Family
    /// Numeric host in text form, e.g. `127.0.0.1` or `::1`.
    public let host: String
    public let port: UInt16

    public init(family: Family, host: String, port: UInt16) {
        self.family = family
        self.host = host
        self.port = port
    }

    /// Parses `host:port`; IPv6 hosts are bracketed. Only numeric hosts and `localhost` are accepted,
    /// so start-up never depends on a name resolver.
    public init(parsing text: String) throws(SystemError) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw SystemError(.invalidHost) }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw SystemError(.missingPort) }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw SystemError(.missingPort) }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !portPart.isEmpty, portPart.count <= 5, portPart.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let number = Int(portPart), number <= 65535
        else { throw SystemError(.invalidPort) }
        let host = hostPart == "localhost" ? "127.0.0.1" : String(hostPart)
        // Brackets mean IPv6 and only IPv6 (RFC 3986 §3.2.2).
        let family: Family = text.hasPrefix("[") ? .ipv6 : .ipv4
        guard SocketAddress.numericFamily(of: host) == family else { throw SystemError(.invalidHost) }
        self.init(family: family, host: host, port: UInt16(number))
    }

    public var description: String {
        family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The family of a numeric host (`127.0.0.1`, `::1`, no brackets); nil for anything else, such as
    /// a DNS name.
    public static func numericFamily(of host: String) -> Family? {
        switch numericBytes(of: host)?.count {
        case 4: .ipv4
        case 16: .ipv6
        default: nil
        }
    }

    /// The address bytes of a numeric host (4 for IPv4, 16 for IPv6, network order); nil for
    /// anything else. The one parser behind `numericFamily(of:)` (docs/decisions/0251).
    public static func numericBytes(of host: String) -> [UInt8]? {
        var storage = in6_addr()
        if inet_pton(AF_INET, host, &storage) == 1 { return withUnsafeBytes(of: storage) { Array($0.prefix(4)) } }
        if inet_pton(AF_INET6, host, &storage) == 1 { return withUnsafeBytes(of: storage) { Array($0) } }
        return nil
    }

    /// Where `sockaddr_in` or `sockaddr_in6` keeps the family, the port and the address.
    private struct Layout<Address, Host> {
        let family: Family
        let cFamily: Int32
        let empty: Address
        let familyField: WritableKeyPath<Address, sa_family_t>
        let portField: WritableKeyPath<Address, in_port_t>
        let hostField: WritableKeyPath<Address, Host>
    }

    private static var ipv4: Layout<sockaddr_in, in_addr> {
        Layout(
            family: .ipv4, cFamily: AF_INET, empty: sockaddr_in(), familyField: \sockaddr_in.sin_family,
            portField: \.sin_port, hostField: \.sin_addr)
    }

    private static var ipv6: Layout<sockaddr_in6, in6_addr> {
        Layout(
            family: .ipv6, cFamily: AF_INET6, empty: sockaddr_in6(), familyField: \sockaddr_in6.sin6_family,
            portField: \.sin6_port, hostField: \.sin6_addr)
    }

    /// Calls `body` with this address as a C `sockaddr`.
    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch family {
        case .ipv4: return withSockaddr(Self.ipv4, body)
        case .ipv6: return withSockaddr(Self.ipv6, body)
        }
    }

    private func withSockaddr<Address, Host, Result>(
        _ layout: Layout<Address, Host>, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        var address = layout.empty
        address[keyPath: layout.familyField] = sa_family_t(layout.cFamily)
        address[keyPath: layout.portField] = port.bigEndian
        _ = withUnsafeMutableBytes(of: &address[keyPath: layout.hostField]) {
            inet_pton(layout.cFamily, host, $0.baseAddress)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    /// Reads a C `sockaddr_storage` filled by `accept`/`getsockname`.
    static func from(storage: inout sockaddr_storage) -> SocketAddress? {
        switch Int32(storage.ss_family) {
        case AF_INET: return from(&storage, ipv4)
        case AF_INET6: return from(&storage, ipv6)
        default: return nil
        }
    }

    private static func from<Address, Host>(
        _ storage: inout sockaddr_storage, _ layout: Layout<Address, Host>
    ) -> SocketAddress? {
        let address = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: Address.self, capacity: 1) { $0.pointee }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written = withUnsafeBytes(of: address[keyPath: layout.hostField]) {
            inet_ntop(layout.cFamily, $0.baseAddress, &text, socklen_t(text.count))
        }
        guard written != nil else { return nil }
        let host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return SocketAddress(
            family: layout.family, host: host, port: UInt16(bigEndian: address[keyPath: layout.portField]))
    }
}
