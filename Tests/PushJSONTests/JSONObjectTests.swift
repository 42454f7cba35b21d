import Testing

@testable import PushJSON

@Suite("closed JSON objects")
struct JSONObjectTests {
    private let keys = ["v", "name", "count", "flag", "inner"]

    private func closedCode(_ text: String, keys: [String], optionalKeys: [String] = []) -> JSONError.Code? {
        do {
            _ = try JSONObject.closed(try JSONReader.parse(text), keys: keys, optionalKeys: optionalKeys)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("typed getters return the members of a closed object")
    func typedGetters() throws {
        let object = try JSONObject.closed(
            try JSONReader.parse(#"{"inner":{"x":2},"flag":true,"count":9223372036854775807,"name":"n","v":1}"#),
            keys: keys)
        #expect(try object.int64("v") == 1)
        #expect(try object.string("name") == "n")
        #expect(try object.int64("count") == Int64.max)
        #expect(try object.bool("flag"))
        #expect(try object.object("inner", keys: ["x"]).int64("x") == 2)
        #expect(try object.object("inner").members.count == 1)
    }

    @Test("a missing member fails and names the expected key")
    func missingMember() {
        #expect(closedCode(#"{"v":1}"#, keys: ["v", "w"]) == .missingMember)
        do {
            _ = try JSONObject.closed(try JSONReader.parse(#"{"v":1}"#), keys: ["v", "w"])
        } catch {
            #expect(error.member == "w")
        }
    }

    @Test("an unknown member fails without naming it")
    func unknownMember() throws {
        #expect(closedCode(#"{"v":1,"extra":1}"#, keys: ["v"]) == .unknownMember)
        #expect(closedCode(#"{"v":1,"V":1}"#, keys: ["v"]) == .unknownMember)
        #expect(closedCode("{\"v\":1,\"\u{212A}\":1}", keys: ["v", "K"]) == .unknownMember)
    }

    @Test("optional keys may be present or absent")
    func optionalKeys() {
        #expect(closedCode(#"{"v":1}"#, keys: ["v"], optionalKeys: ["o"]) == nil)
        #expect(closedCode(#"{"v":1,"o":null}"#, keys: ["v"], optionalKeys: ["o"]) == nil)
    }

    @Test("a value that is not an object is a wrong type")
    func notAnObject() {
        #expect(closedCode("[]", keys: []) == .wrongType)
        #expect(closedCode("1", keys: []) == .wrongType)
    }

    @Test("int64 refuses non-integers and out-of-range integers")
    func int64Refusals() throws {
        for text in ["1.0", "1e3", "-0", "9223372036854775808", "-9223372036854775809", "\"1\"", "true", "null"] {
            let object = try JSONObject.closed(try JSONReader.parse("{\"v\":\(text)}"), keys: ["v"])
            #expect(throws: JSONError(.wrongType, member: "v"), "\(text)") { try object.int64("v") }
        }
        let edge = try JSONObject.closed(try JSONReader.parse(#"{"v":-9223372036854775808}"#), keys: ["v"])
        #expect(try edge.int64("v") == Int64.min)
    }

    @Test("other getters refuse wrong types")
    func wrongTypes() throws {
        let object = try JSONObject.closed(
            try JSONReader.parse(#"{"s":1,"b":"true","o":[],"a":{}}"#), keys: ["s", "b", "o", "a"])
        #expect(throws: JSONError(.wrongType, member: "s")) { try object.string("s") }
        #expect(throws: JSONError(.wrongType, member: "b")) { try object.bool("b") }
        #expect(throws: JSONError(.wrongType, member: "o")) { try object.object("o") }
        #expect(throws: JSONError(.wrongType, member: "a")) { try object.array("a") }
        #expect(throws: JSONError(.missingMember, member: "zz")) { try object.string("zz") }
    }

    @Test("nested closed objects enforce their own keys")
    func nestedClosed() throws {
        let object = try JSONObject(try JSONReader.parse(#"{"inner":{"x":1,"y":2}}"#))
        #expect(throws: JSONError(.unknownMember)) { try object.object("inner", keys: ["x"]) }
    }
}
