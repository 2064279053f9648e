import Foundation
import Testing
import TransferTestSupport
@testable import TransferProtocol

/// A submit's params read in the same pass as the header agree with the slow path, which reads the
/// line again; what does not fit is left to the slow path and its message.
@Suite("Request line: a submit read in one pass")
struct RequestLineTests {
    let decoder = RequestDecoder(methods: [Submit.name, Status.name])

    private func line(_ params: String) -> Data {
        Data((#"{"jsonrpc":"2.0","id":9,"method":"submit","params":"# + params + "}").utf8)
    }

    @Test(
        "params that fit are read once, as the slow path reads them",
        arguments: [
            #"{"url":"https://example.com/a","destination":"/srv/a"}"#,
            #"{"url":"https://example.com/a","destination":"/srv/a","create_directories":true,"overwrite":false,"sha256":"ab","size":12}"#,
            // Header names stay as sent, even those that look like member names or Swift names.
            #"{"url":"https://e/a","destination":"/a","headers":{"X-Api_Key":"k","url":"u","createDirectories":"c","a__b":"d"}}"#,
            #"{"url":"https://e/a","destination":"/a","retry":{"max_attempts":3,"low_speed_seconds":2.5},"not_before":"2026-11-26T10:00:00.000Z"}"#,
            #"{"kind":"upload","url":"https://e/u","source":"/home/me/f","method":"POST","form":[{"name":"file","file":true,"filename":"f.bin","content_type":"application/octet-stream"},{"name":"a","value":"b"}]}"#,
            #"{"url":"http://127.0.0.1:8080/files/artifact-17.bin","destination":"/srv/out/artifact-17.bin","id":"artifact-17","create_directories":true,"headers":{"Authorization":"Bearer x"}}"#,
            #"{"url":"https://e/a","destination":"/a","label":"nightly","priority":"high","limit_rate":"1M","segments":4,"conditional":true,"session":"s"}"#,
        ])
    func fittingParamsReadOnce(params: String) throws {
        let request = try decoder.decode(line(params))
        let once = try #require(request.submit, "the params were left to the slow path")
        #expect(once == (try RequestDecoder.decodeParams(Submit.self, request.line, true)))
        #expect(try request.params(for: Submit.self) == once)
    }

    @Test(
        "params that do not fit are left to the slow path, which names the problem",
        arguments: [
            (#"{"url":"https://e/a","destination":"/a","createDirectories":true}"#, "createDirectories"),
            (#"{"url":"https://e/a","destination":"/a","create__directories":true}"#, "create__directories"),
            (#"{"url":"https://e/a","destination":"/a","retry":{"maxAttempts":3}}"#, "maxAttempts"),
            (#"{"url":"https://e/a","destination":"/a","form":[{"url":"x"}]}"#, "url"),
            (#"{"url":"https://e/a","destination":"/a","size":-1}"#, "size"),
            (#"{"url":"https://e/a","destination":"/a","headers":{"A":1}}"#, "headers"),
            (#"{"url":"https://e/a","\u0000url":"x"}"#, "url"),
        ])
    func unfittingParamsTakeTheSlowPath(params: String, named: String) throws {
        let request = try decoder.decode(line(params))
        #expect(request.submit == nil)
        let error = #expect(throws: RPCError.self) { try request.params(for: Submit.self) }
        #expect(error?.code == .invalidParams)
        #expect(error?.message.contains(named) == true, "\(error?.message ?? "")")
    }

    @Test("params that fit but do not decode are refused by the slow path")
    func fittingButUndecodable() throws {
        // The shape allows any string; the type wants a time.
        let request = try decoder.decode(line(#"{"url":"https://e/a","destination":"/a","deadline":"tomorrow"}"#))
        #expect(request.submit == nil)
        let error = #expect(throws: RPCError.self) { try request.params(for: Submit.self) }
        #expect(error?.message.contains("deadline") == true, "\(error?.message ?? "")")
    }

    @Test("other methods are read as before: the header now, the params when asked")
    func otherMethods() throws {
        let request = try decoder.decode(Data(#"{"jsonrpc":"2.0","id":1,"method":"status","params":{"id":"j","states":["queued"]}}"#.utf8))
        #expect(request.submit == nil)
        #expect(try request.params(for: Status.self).id == "j")
    }

    @Test("the only bound the Swift types do not keep is size's")
    func boundsAreKnown() {
        var bounded: [String] = []
        func walk(_ shape: ParameterShape, _ name: String) {
            switch shape {
            case .integer(let minimum) where minimum > Int64.min: bounded.append(name)
            case .unsigned64: bounded.append(name)
            case .object(let members): for (member, inner) in members { walk(inner, member) }
            case .list(let element), .map(let element): walk(element, name)
            default: break
            }
        }
        walk(.object(Submit.parameters ?? [:]), "params")
        // A new bound needs its check in OnePassKeys.keepsMinimums.
        #expect(bounded == ["size"])
    }

    /// Random params, mostly well formed, with members of the wrong kind, out of bounds, unknown,
    /// misplaced or spelled as Swift names: whatever one pass accepts, the slow path accepts as
    /// the same params.
    @Test("one pass never accepts what the slow path refuses")
    func agreesWithTheSlowPath() throws {
        var random = SplitMix64(seed: 2025)
        func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        let strings = [#""https://e/a""#, #""/srv/x""#, #""2026-11-26T10:00:00.000Z""#, #""high""#, #""1M""#, #""upload""#, #""""#]
        func value(_ shape: ParameterShape, depth: Int) -> String {
            if chance(4) { return "null" }
            if chance(5) { return pick(["1", "-3", "2.5", "true", #""s""#, "[]", "{}", "18446744073709551615"]) }
            switch shape {
            case .string: return pick(strings)
            case .bool: return pick(["true", "false"])
            case .integer, .unsigned64: return pick(["0", "4", "-1", "9223372036854775807", "1e2"])
            case .number: return pick(["0", "1.5", "-2", "30"])
            case .list(let element): return "[" + (0..<Int(random.next() % 3)).map { _ in value(element, depth: depth + 1) }.joined(separator: ",") + "]"
            case .map(let element):
                return "{" + (0..<Int(random.next() % 3)).map { _ in "\(pick([#""X-A""#, #""url""#, #""a_b""#, #""createDirectories""#])):\(value(element, depth: depth + 1))" }
                    .joined(separator: ",") + "}"
            case .object(let members): return object(members, depth: depth + 1)
            }
        }
        func object(_ members: [String: ParameterShape], depth: Int) -> String {
            var entries: [String] = []
            for (name, shape) in members.sorted(by: { $0.key < $1.key }) where chance(depth == 1 ? 35 : 50) {
                entries.append("\"\(name)\":\(value(shape, depth: depth))")
            }
            if chance(10) { entries.append(#""\#(pick(["createDirectories", "URL", "url", "max_attempts", "name", "extra", "a__b"]))":1"#) }
            return "{" + entries.joined(separator: ",") + "}"
        }
        let known = Submit.parameters ?? [:]
        var once = 0
        for _ in 0..<3_000 {
            let members = object(known, depth: 1)
            let params = members == "{}" ? #"{"url":"https://e/a"}"# : #"{"url":"https://e/a","# + members.dropFirst()
            let request = try decoder.decode(line(params))
            guard let eager = request.submit else { continue }
            once += 1
            let slow = try RequestDecoder.decodeParams(Submit.self, request.line, true)
            #expect(eager == slow, "\(params)")
        }
        // Both paths were taken.
        #expect(once > 100 && once < 3_000, "\(once) of 3000 read in one pass")
        print("one pass read \(once) of 3000")
    }
}
