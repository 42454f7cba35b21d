import PushCrypto

extension TLSConnection {
    /// Reads what the session has into `buffer`, handing each chunk to `consume`, until a read would
    /// block (true) or the peer is gone, the read fails or `consume` refuses a chunk (false): the read
    /// loop both the HTTP/1.1 and the HTTP/2 server connection of the mocks run.
    func readAvailable(into buffer: inout [UInt8], consume: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        while true {
            let result: TLSTransfer
            do {
                result = try buffer.withUnsafeMutableBytes { bytes throws(CryptoError) in try read(into: bytes) }
            } catch {
                return false
            }
            switch result {
            case .transferred(let count):
                let accepted = buffer.withUnsafeBytes { consume(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                guard accepted else { return false }
            case .wantRead, .wantWrite:
                return true
            case .closed:
                return false
            }
        }
    }
}
