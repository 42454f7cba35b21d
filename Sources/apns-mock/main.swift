import Glibc

// apns-mock: a scripted TLS + HTTP/2 stand-in for Apple's provider API (issue 5).
let message = Array("apns-mock: not yet implemented\n".utf8)
_ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
exit(2)
