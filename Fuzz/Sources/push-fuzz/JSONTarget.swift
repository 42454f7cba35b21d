import PushJSON

/// Strict JSON: a document that parses re-serializes (canonical writer) to bytes that parse to the
/// same value, and the writer is idempotent; object access through `JSONObject` never traps.
enum JSONTarget {
    static func run(_ input: [UInt8]) {
        guard let value = try? JSONReader.parse(input) else { return }
        let written = JSONWriter.serialize(value)
        let reparsed: JSONValue
        do {
            reparsed = try JSONReader.parse(written)
        } catch {
            FuzzCheck.require(false, "the writer's output does not parse: \(error)")
            return
        }
        FuzzCheck.require(reparsed == value, "value changed through the writer")
        FuzzCheck.require(JSONWriter.serialize(reparsed) == written, "the writer is not idempotent")
        FuzzCheck.require(written.count <= input.count * 6 + 2, "serialization grew beyond escaping")
        exerciseObject(value)
    }

    /// Typed getters on every member, and `closed` with the document's own names: the reader keeps
    /// names unique as bytes, so `closed` must accept them all and refuse when one is left out.
    private static func exerciseObject(_ value: JSONValue) {
        guard let object = try? JSONObject(value) else { return }
        let names = object.members.map(\.name)
        for name in names {
            _ = try? object.string(name)
            _ = try? object.int64(name)
            _ = try? object.bool(name)
            _ = try? object.array(name)
            _ = try? object.object(name)
        }
        FuzzCheck.require((try? JSONObject.closed(value, keys: names)) != nil, "closed() refuses its own names")
        if !names.isEmpty {
            let missingOne = (try? JSONObject.closed(value, keys: Array(names.dropLast()))) == nil
            FuzzCheck.require(missingOne, "closed() accepts a member it was not given")
        }
    }
}
