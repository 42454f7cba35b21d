/// Where an HTTP/1.1 message head ends, for the clients that read one off a byte stream: a proxy's
/// answer to `CONNECT`, a WebSocket handshake response, a bench's responses.
public enum HTTPHead {
    /// The index of the `\r\n\r\n` that ends the head; nil while it has not all arrived.
    public static func end(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
