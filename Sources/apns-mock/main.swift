import Glibc

// apns-mock: a scripted TLS + HTTP/2 stand-in for Apple's provider API (issue 5).
let standardError = FileHandleDescriptor.standardError
standardError.write("apns-mock: not yet implemented\n")
exit(2)

private struct FileHandleDescriptor {
    static let standardError = FileHandleDescriptor(descriptor: 2)
    let descriptor: Int32
    func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }
}
