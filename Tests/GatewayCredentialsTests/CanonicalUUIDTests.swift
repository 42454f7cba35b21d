import PushTestSupport
import Testing

@testable import GatewayCredentials

@Suite("Canonical UUIDs", .testBodyThreads)
struct CanonicalUUIDTests {
    @Test("the canonical lowercase form round-trips through its bytes")
    func roundTrip() throws {
        let text = "0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b"
        let uuid = try #require(CanonicalUUID(text))
        #expect(uuid.bytes.first == 0x01 && uuid.bytes.last == 0x7b)
        #expect(uuid.text == text)
    }

    @Test(
        "every other spelling is refused",
        arguments: [
            "0190A5B2-7C3D-7E4F-8A1B-2C3D4E5F6A7B", "{0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b}",
            "0190a5b27c3d7e4f8a1b2c3d4e5f6a7b", "urn:uuid:0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b",
            "0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7", "0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7bb",
            "0190a5b2+7c3d-7e4f-8a1b-2c3d4e5f6a7b", "0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7g", "",
            "0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7\u{e9}",
        ])
    func refusesNonCanonical(text: String) {
        #expect(CanonicalUUID(text) == nil)
    }

    @Test("version 7 carries the millisecond timestamp, version and variant")
    func version7Layout() throws {
        let milliseconds: UInt64 = 1_764_421_234_567
        let uuid = try CanonicalUUID.version7(unixMilliseconds: milliseconds)
        #expect(uuid.unixMilliseconds == milliseconds)
        #expect(uuid.version == 7)
        #expect(uuid.bytes[8] & 0xc0 == 0x80)
        #expect(CanonicalUUID(uuid.text) == uuid)
    }

    @Test("version 7 from given random bytes keeps them outside the timestamp, version and variant")
    func version7FromRandomBytes() {
        let random = [UInt8](repeating: 0xff, count: 16)
        let uuid = CanonicalUUID.version7(unixMilliseconds: 0x0102_0304_0506, randomBytes: random[...])
        #expect(uuid.text == "01020304-0506-7fff-bfff-ffffffffffff")
        let zeros = CanonicalUUID.version7(unixMilliseconds: 0, randomBytes: [UInt8](repeating: 0, count: 16))
        #expect(zeros.text == "00000000-0000-7000-8000-000000000000")
    }

    @Test("version 4 identifiers are random and well-formed")
    func version4() throws {
        let first = try CanonicalUUID.version4()
        let second = try CanonicalUUID.version4()
        #expect(first != second)
        #expect(first.version == 4 && first.bytes[8] & 0xc0 == 0x80)
    }
}
