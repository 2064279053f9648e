import Foundation
import Synchronization

/// A request line read in one pass: its header and, for `submit`, its params.
///
/// Reading the header, checking the params' shape (`ParameterFit`) and decoding them were three
/// passes over the line. The shape check costs more than the decoding: it reads each member again,
/// by itself. Here the decoding does the check's work: the key strategy (`OnePassKeys`) knows the
/// names each object of `Submit.parameters` may hold, gives them their Swift names, and notes any
/// other name; the types refuse values of the wrong kind; and `OnePassKeys.keepsMinimums` checks
/// the one bound a Swift integer does not.
///
/// Params with an unknown member, or that do not decode, are left to the slow path
/// (`RequestDecoder.decodeParams`), which reads the line again to name the problem: only refused
/// requests pay for it. `RequestLineTests` checks that this never accepts what the slow path refuses.
struct RequestLine: Decodable {
    var header: RPCRequestHeader
    var submit: Submit.Params?

    init(from decoder: any Decoder) throws {
        header = try RPCRequestHeader(from: decoder)
        guard header.method == Submit.name, header.hasParams else { return }
        submit = try? decoder.container(keyedBy: WireKey.self).decode(Submit.Params.self, forKey: WireKey("params"))
    }

    /// Reads `line`; the submit's params are kept only when every member was known and they keep
    /// their bounds. Throws what the header's decoding throws.
    static func read(_ line: Data) throws -> RequestLine {
        let unknown = OnePassKeys.UnknownNames()
        let decoder = WireCoding.decoder()
        decoder.keyDecodingStrategy = OnePassKeys.strategy(noting: unknown)
        var read = try decoder.decode(RequestLine.self, from: line)
        if let submit = read.submit, unknown.seen.load(ordering: .relaxed) || !OnePassKeys.keepsMinimums(submit) {
            read.submit = nil
        }
        return read
    }
}

/// The names a request and `submit`'s params may hold, as sent and as Swift names them.
enum OnePassKeys {
    /// Set when a name no object of the params knows was read.
    final class UnknownNames: Sendable {
        let seen = Atomic<Bool>(false)
    }

    /// For each object of `Submit.parameters`, by its path of Swift names from the params (`params`,
    /// `params/retry`, `params/form`): its members' names, as sent and as Swift names them. Lists
    /// are looked through (`form` holds objects, and a path skips indexes); maps are not: a
    /// dictionary's keys never meet the key strategy, and an object inside a map, whose path would
    /// hold a name the client chose, is left to the slow path.
    static let objects: [String: [String: String]] = {
        var objects: [String: [String: String]] = [:]
        func add(_ shape: ParameterShape, at path: String) {
            switch shape {
            case .object(let members):
                objects[path] = Dictionary(uniqueKeysWithValues: members.keys.map { ($0, SnakeCaseKeys.camel($0)) })
                for (name, member) in members { add(member, at: path + "/" + SnakeCaseKeys.camel(name)) }
            case .list(let element):
                add(element, at: path)
            case .map, .string, .bool, .integer, .unsigned64, .number:
                break
            }
        }
        add(.object(Submit.parameters ?? [:]), at: "params")
        return objects
    }()

    /// The request's own members keep their names (one word each, the same in Swift; others are
    /// ignored). Below them, a known name becomes its Swift name, and any other is noted in
    /// `unknown` and becomes one no type has (it starts with a NUL), so it cannot stand in for a
    /// known one. Nothing is remembered, so a client sending new names every time grows nothing.
    static func strategy(noting unknown: UnknownNames) -> JSONDecoder.KeyDecodingStrategy {
        .custom { path in
            guard let last = path.last, path.count > 1, last.intValue == nil else { return path.last ?? WireKey("") }
            // The params' own members, most of them, without building the path.
            let holder =
                path.count == 2 ? path[0].stringValue : path.dropLast().lazy.filter { $0.intValue == nil }.map(\.stringValue).joined(separator: "/")
            if let name = objects[holder]?[last.stringValue] { return WireKey(name) }
            unknown.seen.store(true, ordering: .relaxed)
            return WireKey("\u{0}" + last.stringValue)
        }
    }

    /// The bounds of `Submit.parameters` that the Swift types do not keep: `size` is a count.
    /// (`RequestLineTests` fails when the parameters gain another.)
    static func keepsMinimums(_ params: Submit.Params) -> Bool {
        (params.size ?? 0) >= 0
    }
}
