import CNghttp2

/// Builds nghttp2's `nghttp2_nv` array over byte buffers that live for the duration of `body`
/// (nghttp2 copies names and values when a frame is submitted).
enum HTTP2HeaderBlock {
    static func withNameValues<R>(
        _ fields: [(String, String)], _ body: (UnsafeMutableBufferPointer<nghttp2_nv>) -> R
    )
        -> R
    {
        var storage: [UInt8] = []
        var ranges: [(Int, Int, Int, Int)] = []
        for (name, value) in fields {
            let nameStart = storage.count
            storage.append(contentsOf: name.utf8)
            let valueStart = storage.count
            storage.append(contentsOf: value.utf8)
            ranges.append((nameStart, name.utf8.count, valueStart, value.utf8.count))
        }
        // One extra byte so the base address is valid even when every name and value is empty.
        storage.append(0)
        return storage.withUnsafeMutableBufferPointer { bytes in
            var nameValues = ranges.map { range in
                nghttp2_nv(
                    name: bytes.baseAddress! + range.0, value: bytes.baseAddress! + range.2, namelen: range.1,
                    valuelen: range.3, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            return nameValues.withUnsafeMutableBufferPointer { body($0) }
        }
    }

    static func string(_ pointer: UnsafePointer<UInt8>?, _ length: Int) -> String {
        guard let pointer else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
    }
}
