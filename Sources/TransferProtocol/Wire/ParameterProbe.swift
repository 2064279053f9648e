import Foundation

/// A JSON value read without a target type, so that what the typed decoding would only call
/// "not valid JSON" (a number no Swift type holds, a string that is not UTF-8, 1.5 where a whole
/// number belongs) can be located and named.
///
/// Foundation's `JSONDecoder` reports such values with an empty coding path; reading each member
/// separately, and catching where it fails, recovers the path.
indirect enum ProbeValue: Decodable, Sendable {
    case null
    case bool(Bool)
    /// A number and whether it is a whole number that an Int64 holds.
    case number(Double, whole: Int64?)
    /// A whole number above Int64's range that a UInt64 holds.
    case unsigned(UInt64)
    case string
    case array([ProbeValue])
    case object([(String, ProbeValue)])
    /// A value that cannot be read, and why.
    case unreadable(String)

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        // Strings first: most parameters are strings, and each failed attempt below costs a thrown
        // error. A value that is not a string fails with a type mismatch and is tried as the rest.
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
            return
        }
        do {
            _ = try single.decode(String.self)
            self = .string
            return
        } catch DecodingError.typeMismatch {
            // Not a string: one of the kinds below.
        } catch {
            self = .unreadable("is not valid UTF-8 text")
            return
        }
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [(String, ProbeValue)] = []
            for key in keyed.allKeys {
                members.append((key.stringValue, (try? keyed.decode(ProbeValue.self, forKey: key)) ?? .unreadable("cannot be read")))
            }
            self = .object(members)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [ProbeValue] = []
            while !unkeyed.isAtEnd {
                guard let element = try? unkeyed.decode(ProbeValue.self) else {
                    elements.append(.unreadable("cannot be read"))
                    break
                }
                elements.append(element)
            }
            self = .array(elements)
            return
        }
        if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let whole = try? single.decode(Int64.self) {
            self = .number(Double(whole), whole: whole)
        } else if let large = try? single.decode(UInt64.self) {
            self = .unsigned(large)
        } else if let double = try? single.decode(Double.self) {
            self = .number(double, whole: nil)
        } else {
            // Not a string, and neither Double nor Int64 could hold it: a number out of range.
            self = .unreadable("is a number too large to read")
        }
    }

    /// The first way this value does not fit `shape`, as a message naming `path`; nil if it fits.
    func problem(against shape: ParameterShape, at path: String, method: String) -> String? {
        if case .unreadable(let reason) = self { return "parameter '\(path)' \(reason)" }
        if case .null = self { return nil }  // left out; the typed decoding decides whether that is allowed
        switch (shape, self) {
        case (.string, .string), (.bool, .bool), (.number, .number):
            return nil
        case (.integer(let minimum), .number(_, let whole)):
            guard let whole, whole >= minimum else { return "parameter '\(path)' must be \(shape.expectation)" }
            return nil
        case (.unsigned64, .number(_, let whole)):
            guard let whole, whole >= 0 else { return "parameter '\(path)' must be \(shape.expectation)" }
            return nil
        case (.unsigned64, .unsigned), (.number, .unsigned):
            return nil
        case (.list(let element), .array(let values)):
            for (index, value) in values.enumerated() {
                if let problem = value.problem(against: element, at: "\(path)[\(index)]", method: method) { return problem }
            }
            return nil
        case (.map(let valueShape), .object(let members)):
            for (name, value) in members {
                if let problem = value.problem(against: valueShape, at: "\(path).\(name)", method: method) { return problem }
            }
            return nil
        case (.object(let known), .object(let members)):
            return Self.problem(members: members, known: known, path: path, method: method)
        default:
            return "parameter '\(path)' must be \(shape.expectation)"
        }
    }

    /// The first unknown or misfitting member of an object whose members are `known`.
    static func problem(members: [(String, ProbeValue)], known: [String: ParameterShape], path: String?, method: String) -> String? {
        for (name, value) in members.sorted(by: { $0.0 < $1.0 }) {
            let qualified = path.map { "\($0).\(name)" } ?? name
            guard let shape = known[name] else {
                let names = known.keys.sorted()
                let suggestion = ParameterSuggestion.closest(to: name, among: names).map { "did you mean '\($0)'? " } ?? ""
                let listed = names.isEmpty ? "\(method) takes no parameters" : "the parameters are \(names.joined(separator: ", "))"
                return "unknown parameter '\(qualified.prefix(100))': \(suggestion)\(listed)"
            }
            if let problem = value.problem(against: shape, at: qualified, method: method) { return problem }
        }
        return nil
    }
}

/// The known name a misspelt one was most likely meant to be.
public enum ParameterSuggestion {
    /// The name among `names` within a small edit distance of `name`, if one is.
    public static func closest(to name: String, among names: [String]) -> String? {
        let target = Array(name.lowercased().utf8.prefix(64))
        var best: (name: String, distance: Int)?
        for candidate in names {
            let distance = editDistance(target, Array(candidate.utf8))
            if distance <= max(1, candidate.utf8.count / 3), distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.name
    }

    /// Levenshtein distance of two byte strings.
    public static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

/// The `params` member read as a `ProbeValue`, with the request's other members ignored.
struct ProbeEnvelope: Decodable {
    var params: ProbeValue
}
