/// Byte equality of two strings' UTF-8, never Swift's `==` (which also accepts canonically
/// equivalent Unicode): JSON member names, and the NIP-98 tag values compared with the request.
package enum UTF8Equality {
    /// Whether `lhs` and `rhs` have the same UTF-8 bytes; the O(1) length check rejects most pairs
    /// before any byte is read.
    package static func equal(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        // Native strings expose their UTF-8 bytes contiguously: an index loop over the two buffers
        // avoids the generic iterators of `elementsEqual` (about 230 instructions for a short name);
        // other strings take that path.
        let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in equal(left, right) }
        }
        return compared.flatMap { $0 } ?? lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Whether two buffers hold the same bytes.
    package static func equal(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        var index = 0
        while index < left.count {
            guard left[index] == right[index] else { return false }
            index += 1
        }
        return true
    }
}
