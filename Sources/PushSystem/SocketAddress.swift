import Glibc

/// Why a `host:port` string was rejected. Carries no part of the input: listen addresses are
/// configuration values, which never appear in messages (house rule).
public enum SocketAddressError: Error, Equatable, Sendable {
    case missingPort
    case invalidPort
    case invalidHost
}

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
    public init(parsing text: String) throws(SocketAddressError) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .invalidHost }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .missingPort }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .missingPort }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !portPart.isEmpty, portPart.count <= 5, portPart.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let number = Int(portPart), number <= 65535
        else { throw .invalidPort }
        let host = hostPart == "localhost" ? "127.0.0.1" : String(hostPart)
        // Brackets mean IPv6 and only IPv6 (RFC 3986 §3.2.2).
        let family: Family = text.hasPrefix("[") ? .ipv6 : .ipv4
        guard SocketAddress.numericFamily(of: host) == family else { throw .invalidHost }
        self.init(family: family, host: host, port: UInt16(number))
    }

    public var description: String {
        family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The family of a numeric host (`127.0.0.1`, `::1`, no brackets); nil for anything else, such as
    /// a DNS name.
    public static func numericFamily(of host: String) -> Family? {
        var storage = in6_addr()
        if inet_pton(AF_INET, host, &storage) == 1 { return .ipv4 }
        if inet_pton(AF_INET6, host, &storage) == 1 { return .ipv6 }
        return nil
    }

    /// Calls `body` with this address as a C `sockaddr`.
    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            _ = inet_pton(AF_INET, host, &address.sin_addr)
            return Self.withGeneric(&address, body)
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            _ = inet_pton(AF_INET6, host, &address.sin6_addr)
            return Self.withGeneric(&address, body)
        }
    }

    private static func withGeneric<Address, Result>(
        _ address: inout Address, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    /// Reads a C `sockaddr_storage` filled by `accept`/`getsockname`.
    static func from(storage: inout sockaddr_storage) -> SocketAddress? {
        switch Int32(storage.ss_family) {
        case AF_INET:
            return from(&storage, as: sockaddr_in.self, family: .ipv4, AF_INET) { ($0.sin_addr, $0.sin_port) }
        case AF_INET6:
            return from(&storage, as: sockaddr_in6.self, family: .ipv6, AF_INET6) { ($0.sin6_addr, $0.sin6_port) }
        default:
            return nil
        }
    }

    private static func from<Address, Host: BitwiseCopyable>(
        _ storage: inout sockaddr_storage, as _: Address.Type, family: Family, _ cFamily: Int32,
        _ parts: (Address) -> (Host, in_port_t)
    ) -> SocketAddress? {
        var (address, port) = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: Address.self, capacity: 1) { parts($0.pointee) }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(cFamily, &address, &text, socklen_t(text.count)) != nil else { return nil }
        let host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return SocketAddress(family: family, host: host, port: UInt16(bigEndian: port))
    }
}
