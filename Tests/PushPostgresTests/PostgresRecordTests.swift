import PushPostgres
import PushTestSupport
import Testing

/// Builds a binary record (`record_send`'s layout) field by field.
private func record(_ fields: [(type: UInt32, value: [UInt8]?)]) -> [UInt8] {
    func int32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    var bytes = int32(Int32(fields.count))
    for field in fields {
        bytes += int32(Int32(bitPattern: field.type))
        if let value = field.value {
            bytes += int32(Int32(value.count)) + value
        } else {
            bytes += int32(-1)
        }
    }
    return bytes
}

private let uuid: [UInt8] = [
    0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11,
]

/// admit_delivery's four OUT parameters as an admitted call returns them: text, uuid, bytea, NULL bigint.
private let admitted = record([
    (25, Array("admitted".utf8)), (2950, uuid), (17, [0x00, 0xff, 0x2e]), (20, nil),
])

@Suite("PostgresRecord: the binary record format of a function result", .testBodyThreads)
struct PostgresRecordTests {
    @Test("text, uuid, bytea and integers of every width decode; NULL fields read as nil")
    func everyFieldType() throws {
        let decoded = try PostgresRecord(binary: admitted)
        #expect(decoded.fields.count == 4)
        #expect(try decoded.string(0) == "admitted")
        #expect(try decoded.string(1) == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
        #expect(try decoded.bytes(2) == [0x00, 0xff, 0x2e])
        #expect(try decoded.int64(3) == nil)
        #expect(decoded.fields[3].typeOID == 20 && decoded.fields[3].value == nil)

        let integers = try PostgresRecord(
            binary: record([
                (21, [0xff, 0xfe]), (23, [0xff, 0xfe, 0xee, 0x90]), (20, [0x80, 0, 0, 0, 0, 0, 0, 0]),
                (20, [0, 0, 0, 0, 0x69, 0x2d, 0x8a, 0x80]), (25, []), (17, []), (25, nil), (17, nil), (2950, nil),
            ]))
        #expect(try integers.int64(0) == -2)
        #expect(try integers.int64(1) == -70_000)
        #expect(try integers.int64(2) == Int64.min)
        #expect(try integers.int64(3) == 1_764_592_256)
        #expect(try integers.string(4) == "")
        #expect(try integers.bytes(5) == [])
        #expect(try integers.string(6) == nil)
        #expect(try integers.bytes(7) == nil)
        #expect(try integers.string(8) == nil)
        #expect(try PostgresRecord(binary: record([])).fields.isEmpty)
    }

    @Test("every truncation of a record is a decoding error")
    func truncated() {
        for length in 0..<admitted.count {
            #expect(throws: PostgresError(code: .decoding, message: "malformed binary record: truncated")) {
                try PostgresRecord(binary: Array(admitted.prefix(length)))
            }
        }
    }

    @Test("negative counts and lengths, forged sizes and trailing bytes are decoding errors")
    func malformed() {
        let inputs: [[UInt8]] = [
            [0xff, 0xff, 0xff, 0xff],  // count −1
            [0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 25],  // count 2^31 − 1, one half field
            [0, 0, 0, 1, 0, 0, 0, 25, 0xff, 0xff, 0xff, 0xfe],  // length −2
            [0, 0, 0, 1, 0, 0, 0, 17, 0x7f, 0xff, 0xff, 0xff, 0x00],  // length 2^31 − 1, one byte
            admitted + [0x00],
            record([(25, Array("x".utf8))]) + record([]),
        ]
        for input in inputs {
            #expect(decodingFailure(input) == .decoding)
        }
    }

    @Test("a field read as the wrong type, a uuid of the wrong length or a missing field is a decoding error")
    func wrongTypes() throws {
        let decoded = try PostgresRecord(binary: admitted)
        #expect(throws: PostgresError.self) { try decoded.bytes(0) }
        #expect(throws: PostgresError.self) { try decoded.int64(0) }
        #expect(throws: PostgresError.self) { try decoded.string(2) }
        #expect(throws: PostgresError.self) { try decoded.string(4) }
        #expect(throws: PostgresError.self) { try decoded.int64(-1) }
        let odd = try PostgresRecord(
            binary: record([(2950, [1, 2, 3]), (20, [1, 2, 3, 4]), (23, [1, 2, 3, 4, 5, 6, 7, 8])]))
        #expect(throws: PostgresError.self) { try odd.string(0) }
        #expect(throws: PostgresError.self) { try odd.int64(1) }
        #expect(throws: PostgresError.self) { try odd.int64(2) }
    }

    @Test("100,000 seeded random inputs and mutations of a valid record decode or throw, never crash")
    func randomInputs() {
        var generator = SplitMix64(seed: 0x5eed)
        var decodedCount = 0
        var failedCount = 0
        for round in 0..<100_000 {
            var input: [UInt8]
            if round.isMultiple(of: 2) {
                input = (0..<Int(generator.next() % 48)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            } else {
                input = admitted
                let index = Int(generator.next() % UInt64(input.count))
                input[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            do {
                let decoded = try PostgresRecord(binary: input)
                for index in decoded.fields.indices {
                    _ = try? decoded.string(index)
                    _ = try? decoded.bytes(index)
                    _ = try? decoded.int64(index)
                }
                decodedCount += 1
            } catch {
                failedCount += 1
            }
        }
        // Mutating a type OID or a payload byte leaves a valid record; most random bytes are not one.
        #expect(decodedCount > 0)
        #expect(failedCount > 0)
    }
}

/// The error code decoding `input` fails with, nil when it decodes.
private func decodingFailure(_ input: [UInt8]) -> PostgresError.Code? {
    do {
        _ = try PostgresRecord(binary: input)
        return nil
    } catch {
        return error.code
    }
}

/// A small deterministic generator, so a failing input can be reproduced.
private struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var value = state
        value = (value ^ (value >> 30)) &* 0xbf58_476d_1ce4_e5b9
        value = (value ^ (value >> 27)) &* 0x94d0_49bb_1331_11eb
        return value ^ (value >> 31)
    }
}
