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
        guard SocketAddress.isNumeric(host, family: family == .ipv6 ? AF_INET6 : AF_INET) else { throw .invalidHost }
        self.init(family: family, host: host, port: UInt16(number))
    }

    public var description: String {
        family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func isNumeric(_ host: String, family: Int32) -> Bool {
        var storage = in6_addr()
        return inet_pton(family, host, &storage) == 1
    }

    /// Calls `body` with this address as a C `sockaddr`.
    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            _ = inet_pton(AF_INET, host, &address.sin_addr)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            _ = inet_pton(AF_INET6, host, &address.sin6_addr)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }

    /// Reads a C `sockaddr_storage` filled by `accept`/`getsockname`.
    static func from(storage: inout sockaddr_storage) -> SocketAddress? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin_addr
                    guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { return nil }
                    let host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                    return SocketAddress(family: .ipv4, host: host, port: UInt16(bigEndian: pointer.pointee.sin_port))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var address = pointer.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return nil }
                    let host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                    return SocketAddress(
                        family: .ipv6, host: host, port: UInt16(bigEndian: pointer.pointee.sin6_port))
                }
            }
        default:
            return nil
        }
    }
}
