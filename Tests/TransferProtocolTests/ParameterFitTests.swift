import Foundation
import Testing
@testable import TransferProtocol
import TransferTestSupport

/// `ParameterFit` lets params through without the full probe; it must say "fits" exactly when
/// `RequestDecoder.shapeProblem` finds no problem, or a misfit would go unnamed.
@Suite("Params that fit their method")
struct ParameterFitTests {
    @discardableResult
    private func agree<M: RPCMethod>(_ method: M.Type, _ params: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let line = Data(#"{"jsonrpc":"2.0","id":1,"method":"\#(M.name)","params":\#(params)}"#.utf8)
        let problem = M.parameters.flatMap { RequestDecoder.shapeProblem(line, known: $0, method: M.name) }
        let fits = ParameterFit<M>.check(line)
        #expect(fits == (problem == nil), "\(params): \(problem ?? "no problem")", sourceLocation: sourceLocation)
        return fits
    }

    @Test func agreesWithTheProbeOnWrittenCases() {
        let base = #""url":"http://a/","destination":"/tmp/a""#
        for params in [
            "{\(base)}", "{}", "null", "[]", #""x""#, "42", "{\(base),\"size\":1e400}", "{\(base),\"size\":1.5}",
            "{\(base),\"size\":-1}", "{\(base),\"size\":18446744073709551616}", "{\(base),\"size\":9223372036854775807}",
            "{\(base),\"overwrites\":true}", "{\(base),\"headers\":{\"X-A\":\"1\",\"b\":null}}", "{\(base),\"headers\":{\"X-A\":1}}",
            "{\(base),\"headers\":[]}", "{\(base),\"retry\":{\"max_attempts\":3,\"idle_timeout_seconds\":0.5}}",
            "{\(base),\"retry\":{\"max_attempt\":3}}", "{\(base),\"retry\":{\"low_speed_seconds\":18446744073709551615}}",
            "{\(base),\"retry\":{\"low_speed_seconds\":\"1\"}}", "{\(base),\"retry\":null}", "{\(base),\"form\":[{\"name\":\"a\",\"value\":\"b\"},{\"name\":\"file\",\"file\":true}]}",
            "{\(base),\"form\":[{\"name\":\"a\",\"extra\":1}]}", "{\(base),\"form\":[1]}", "{\(base),\"form\":{}}", "{\(base),\"segments\":-9223372036854775808}",
            "{\(base),\"overwrite\":1}", "{\(base),\"overwrite\":\"true\"}", "{\(base),\"url\":\"\\u00e9\\ud83d\\ude80\"}",
        ] {
            agree(Submit.self, params)
        }
        agree(Ack.self, #"{"session":"s","seq":18446744073709551615}"#)
        agree(Ack.self, #"{"session":"s","seq":-1}"#)
        agree(Ack.self, #"{"session":"s","seq":1.0}"#)
        agree(Version.self, "{}")
        agree(Version.self, #"{"x":1}"#)
        agree(Status.self, #"{"states":["queued",null],"limit":0}"#)
        agree(Status.self, #"{"states":["queued"],"limit":1,"newest_first":true}"#)
    }

    /// Random params built from the methods' own names, a few unknown ones, and values of every kind.
    @Test func agreesWithTheProbeOnRandomParams() {
        var generator = SplitMix64(seed: 0x5EED)
        let values = [
            #""text""#, #""""#, "true", "false", "null", "0", "-1", "1", "1.5", "-0.0", "1e3", "1e400", "-1e400",
            "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
            "-9223372036854775808", "-9223372036854775809", "[]", "{}", #"["a",1]"#, #"{"k":"v"}"#, #"{"k":1}"#,
        ]
        func value(_ depth: Int) -> String {
            guard depth < 3, generator.next() % 4 == 0 else { return values[Int(generator.next() % UInt64(values.count))] }
            if generator.next() % 2 == 0 {
                return "[" + (0..<Int(generator.next() % 3)).map { _ in value(depth + 1) }.joined(separator: ",") + "]"
            }
            return "{" + (0..<Int(generator.next() % 3)).map { _ in "\"\(name(nil))\":\(value(depth + 1))" }.joined(separator: ",") + "}"
        }
        func name(_ known: [String: ParameterShape]?) -> String {
            let names = (known.map { Array($0.keys) } ?? []) + ["name", "value", "file", "max_attempts", "low_speed_seconds", "X-Any", "urls"]
            return names[Int(generator.next() % UInt64(names.count))]
        }
        func params(_ known: [String: ParameterShape]?) -> String {
            "{" + (0..<Int(generator.next() % 5)).map { _ in "\"\(name(known))\":\(value(0))" }.joined(separator: ",") + "}"
        }
        var fitting = 0
        for _ in 0..<1500 {
            let outcomes = [
                agree(Submit.self, params(Submit.parameters)), agree(Status.self, params(Status.parameters)),
                agree(Ack.self, params(Ack.parameters)), agree(Clean.self, params(Clean.parameters)),
            ]
            fitting += outcomes.filter { $0 }.count
        }
        // Both answers are exercised, not only misfits.
        #expect(fitting > 300 && fitting < 5700, "\(fitting) of 6000 fit")
    }
}
