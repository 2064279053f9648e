import Foundation

/// Whether a request's `params` fit a method's parameters, read by the shapes themselves: each
/// value is read once as the kind its shape expects, so params that fit throw no error.
///
/// It answers exactly where `RequestDecoder.shapeProblem` finds no problem; only params that do
/// not fit are read again as a `ProbeValue`, to name the problem. Most requests fit, and reading
/// every value without its shape (a string first, then each other kind) cost 4 % of a submit.
struct ParameterFit<Method: RPCMethod>: Decodable {
    let fits: Bool

    /// Whether the `params` member of `line` fits `Method.parameters`: true when it is absent or
    /// null. False also when `line` is not JSON; the probe then decides.
    static func check(_ line: Data) -> Bool {
        (try? JSONDecoder().decode(Self.self, from: line))?.fits ?? false
    }

    init(from decoder: any Decoder) throws {
        guard let known = Method.parameters else {
            fits = true
            return
        }
        let envelope = try decoder.container(keyedBy: WireKey.self)
        let params = WireKey("params")
        guard envelope.contains(params) else {
            fits = true
            return
        }
        fits = ShapeFit.fits(try envelope.superDecoder(forKey: params), .object(known))
    }
}

/// The check itself, outside the generic `ParameterFit`. Its callers are not specialized for a
/// method, so each recursive call inside the generic type looked up that type's metadata at run
/// time, which cost more than the reading. Members are read by their names as sent (`WireKey`).
private enum ShapeFit {
    static func fits(_ decoder: any Decoder, _ shape: ParameterShape) -> Bool {
        guard let single = try? decoder.singleValueContainer() else { return false }
        if single.decodeNil() { return true }
        switch shape {
        case .string:
            return (try? single.decode(String.self)) != nil
        case .bool:
            return (try? single.decode(Bool.self)) != nil
        case .integer(let minimum):
            guard let whole = try? single.decode(Int64.self) else { return false }
            return whole >= minimum
        case .unsigned64:
            if let whole = try? single.decode(Int64.self) { return whole >= 0 }
            return (try? single.decode(UInt64.self)) != nil
        case .number:
            return (try? single.decode(Double.self)) != nil || (try? single.decode(UInt64.self)) != nil
        case .list(let element):
            guard var elements = try? decoder.unkeyedContainer() else { return false }
            while !elements.isAtEnd {
                guard let next = try? elements.superDecoder(), fits(next, element) else { return false }
            }
            return true
        case .map(let valueShape):
            guard let members = try? decoder.container(keyedBy: WireKey.self) else { return false }
            return members.allKeys.allSatisfy { key in
                (try? members.superDecoder(forKey: key)).map { fits($0, valueShape) } ?? false
            }
        case .object(let known):
            guard let members = try? decoder.container(keyedBy: WireKey.self) else { return false }
            return members.allKeys.allSatisfy { key in
                guard let memberShape = known[key.stringValue] else { return false }
                return (try? members.superDecoder(forKey: key)).map { fits($0, memberShape) } ?? false
            }
        }
    }
}
