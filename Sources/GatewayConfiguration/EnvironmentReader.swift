import Foundation

/// Reads variables from an environment dictionary and collects every problem instead of stopping
/// at the first (so an operator fixes them in one go). Problems name the variable, never the value.
package struct EnvironmentReader {
    package let environment: [String: String]
    package private(set) var problems: [ConfigurationError.Problem] = []

    package init(_ environment: [String: String]) {
        self.environment = environment
    }

    package mutating func fail(_ variable: String, _ problem: String) {
        problems.append(ConfigurationError.Problem(variable: variable, problem: problem))
    }

    /// A set, non-empty value; nil (and a problem) when unset or empty.
    package mutating func required(_ name: String) -> String? {
        guard let value = environment[name] else {
            fail(name, "is required")
            return nil
        }
        guard !value.isEmpty else {
            fail(name, "is empty")
            return nil
        }
        return value
    }

    /// The value when set; an empty value is a problem (unset the variable to get its default).
    package mutating func optional(_ name: String) -> String? {
        guard let value = environment[name] else { return nil }
        guard !value.isEmpty else {
            fail(name, "is set but empty; unset it to use the default")
            return nil
        }
        return value
    }

    /// A required secret given directly or through `<name>_FILE` (docs/protocol.md §12).
    package mutating func requiredSecret(_ name: String) -> String? {
        let value: String?
        do {
            value = try SecretVariable.value(name, in: environment)
        } catch {
            problems += error.problems
            return nil
        }
        guard let value else {
            fail(name, "is required (or \(name)_FILE)")
            return nil
        }
        guard !value.isEmpty else {
            fail(environment[name] == nil ? name + "_FILE" : name, "is empty")
            return nil
        }
        return value
    }

    /// A decimal integer in `range`, `defaultValue` when unset.
    package mutating func integer(_ name: String, in range: ClosedRange<Int64>, default defaultValue: Int64) -> Int64? {
        guard let text = optional(name) else { return environment[name] == nil ? defaultValue : nil }
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            fail(name, "must be decimal digits only (no sign, spaces or units)")
            return nil
        }
        guard let value = Int64(text), range.contains(value) else {
            fail(name, "must be in \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        return value
    }

    /// `true` or `false`, false when unset; nil (and a problem) for anything else.
    package mutating func boolean(_ name: String) -> Bool? {
        switch optional(name) {
        case nil where environment[name] == nil: return false
        case "true": return true
        case "false": return false
        case nil: return nil
        default:
            fail(name, "must be true or false")
            return nil
        }
    }

    /// An allow flag that means something only when `companion` is set: true only when set to
    /// `true`, and then a problem without `companion`.
    package mutating func allowFlag(_ name: String, onlyWith companion: String) -> Bool {
        let allows = boolean(name) ?? false
        if allows && environment[companion] == nil { fail(name, "is only meaningful with \(companion)") }
        return allows
    }

    /// One value of a closed set, `defaultValue` when unset (nil default: required).
    package mutating func choice<Choice: RawRepresentable>(_ name: String, default defaultValue: Choice?) -> Choice?
    where Choice.RawValue == String, Choice: CaseIterable {
        let text: String?
        if defaultValue == nil {
            text = required(name)
        } else {
            text = optional(name)
            if text == nil && environment[name] == nil { return defaultValue }
        }
        guard let text else { return nil }
        guard let value = Choice(rawValue: text) else {
            fail(name, "must be one of " + Choice.allCases.map(\.rawValue).joined(separator: ", "))
            return nil
        }
        return value
    }

    /// The contents of the file named by variable `name` (read now, so a missing or unreadable
    /// file is a configuration error, not a failure at the first request).
    package mutating func fileContents(named name: String, path: String) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else {
            fail(name, "names a file that cannot be read")
            return nil
        }
        guard !data.isEmpty else {
            fail(name, "names an empty file")
            return nil
        }
        return Array(data)
    }

    /// `parse` of variable `name`'s `text`; nil (and `problem`) when it does not parse.
    package mutating func parsed<Value>(
        _ name: String, _ text: String, _ problem: String, _ parse: (String) -> Value?
    )
        -> Value?
    {
        guard let value = parse(text) else {
            fail(name, problem)
            return nil
        }
        return value
    }

    /// The file variable `name` names, when set, if it holds a PEM block labelled `label`; nil (and
    /// `problem`) when it does not.
    package mutating func pemFile(_ name: String, label: String, problem: String) -> (pem: [UInt8], path: String)? {
        guard let path = optional(name), let contents = fileContents(named: name, path: path) else { return nil }
        return parsed(name, path, problem) { path in PEMLabels.contains(contents, label: label) ? (contents, path) : nil
        }
    }

    /// A comma list with no empty items, no whitespace and no repeated item.
    package mutating func commaList(_ name: String, _ text: String) -> [Substring]? {
        guard !text.contains(where: { $0.isWhitespace }) else {
            fail(name, "must not contain spaces (write item,item)")
            return nil
        }
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard !items.contains(where: \.isEmpty) else {
            fail(name, "has an empty item")
            return nil
        }
        guard Set(items).count == items.count else {
            fail(name, "lists an item twice")
            return nil
        }
        return items
    }
}
