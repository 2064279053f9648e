import Foundation
import Testing
import TransferProtocol

@Suite("Request decoder")
struct RequestDecoderTests {
    let decoder = RequestDecoder(methods: ["submit", "status", "cancel", "version"])

    /// The refusal of `line`, or nil when it decodes.
    private func refusal(_ line: String, decoder: RequestDecoder? = nil) -> RequestDecodingError? {
        do {
            _ = try (decoder ?? self.decoder).decode(Data(line.utf8))
            return nil
        } catch {
            return error
        }
    }

    private func nested(_ levels: Int) -> String {
        // The request object is the first level; `params` adds one, each array another.
        #"{"jsonrpc":"2.0","id":7,"method":"status","params":{"states":"#
            + String(repeating: "[", count: levels - 2) + String(repeating: "]", count: levels - 2) + "}}"
    }

    @Test func decodesTheHeaderAndKeepsTheLineForParams() throws {
        let line = #"{"jsonrpc":"2.0","id":"a","method":"status","params":{"id":"job-1","states":["queued"]}}"#
        let request = try decoder.decode(Data(line.utf8))
        #expect(request.id == .string("a"))
        #expect(request.method == "status")
        #expect(request.hasParams)
        let params = try request.params(for: Status.self)
        #expect(params.id == "job-1")
        #expect(params.states == [.queued])
    }

    @Test func aNotificationHasNoIdAndAMissingParamsMemberReadsAsEmpty() throws {
        let request = try decoder.decode(Data(#"{"jsonrpc":"2.0","method":"version"}"#.utf8))
        #expect(request.id == nil)
        #expect(!request.hasParams)
        _ = try request.params(for: Version.self)
        #expect(try decoder.decode(Data(#"{"jsonrpc":"2.0","id":null,"method":"version"}"#.utf8)).id == .null)
    }

    @Test func refusesWhatIsNotAJSONRPCRequest() {
        #expect(refusal("{not json")?.error.code == .parseError)
        #expect(refusal("")?.error.code == .parseError)
        #expect(refusal("[1,2]")?.error.code == .invalidRequest)
        #expect(refusal("42")?.error.code == .invalidRequest)
        let wrongVersion = refusal(#"{"jsonrpc":"1.0","id":3,"method":"version"}"#)
        #expect(wrongVersion?.error.code == .invalidRequest)
        #expect(wrongVersion?.id == .number(3), "the answer carries the request's id once it is known")
        let noMethod = refusal(#"{"jsonrpc":"2.0","id":4}"#)
        #expect(noMethod?.error.code == .invalidRequest)
        #expect(noMethod?.error.message.contains("submit, status, cancel, version") == true)
    }

    @Test func paramsErrorsNameTheParameterInSnakeCase() throws {
        let submit = { (params: String) in
            try self.decoder.decode(Data((#"{"jsonrpc":"2.0","id":1,"method":"submit","params":"# + params + "}").utf8))
        }
        let cases: [(String, String)] = [
            (#"{"destination":"/tmp/x"}"#, "missing parameter 'url'"),
            (#"{"url":42,"destination":"/tmp/x"}"#, "parameter 'url' must be a string"),
            (#"{"url":"http://h/x","destination":"/tmp/x","overwrite":"yes"}"#, "parameter 'overwrite' must be true or false"),
            (#"{"url":"http://h/x","destination":"/tmp/x","retry":{"max_attempts":"x"}}"#, "parameter 'retry.max_attempts' must be an integer"),
            (#"{"url":"http://h/x","destination":"/tmp/x","headers":{"accept":1}}"#, "parameter 'headers.accept' must be a string"),
            (#"{"url":null,"destination":"/tmp/x"}"#, "parameter 'url' must be a string, not null"),
        ]
        for (params, expected) in cases {
            let request = try submit(params)
            do {
                _ = try request.params(for: Submit.self)
                Issue.record("\(params) was accepted")
            } catch {
                #expect(error.code == .invalidParams)
                #expect(error.message == "invalid params for submit: \(expected)", "\(params)")
            }
        }
    }

    @Test func refusesARequestNestedDeeperThanTheLimitBeforeParsingIt() throws {
        _ = try decoder.decode(Data(nested(32).utf8))
        let refused = try #require(refusal(nested(33)))
        #expect(refused.error.code == .requestTooDeep)
        #expect(refused.error.code.rawValue == 1012)
        #expect(refused.error.data?.name == "request_too_deep")
        #expect(refused.error.message.contains("32 levels"), "the message names the limit: \(refused.error.message)")
        #expect(refused.id == .null)
        // Far too deep for a recursive parser: refused by the scan, quickly and without a crash.
        let hostile = String(repeating: "[", count: 1 << 20)
        #expect(refusal(hostile)?.error.code == .requestTooDeep)
    }

    @Test func theDepthLimitIsAParameter() {
        let strict = RequestDecoder(methods: ["status"], maxDepth: 2)
        #expect(refusal(#"{"jsonrpc":"2.0","id":1,"method":"status","params":{}}"#, decoder: strict) == nil)
        let refused = refusal(#"{"jsonrpc":"2.0","id":1,"method":"status","params":{"states":[]}}"#, decoder: strict)
        #expect(refused?.error.code == .requestTooDeep)
        #expect(refused?.error.message.contains("2 levels") == true)
    }

    @Test func depthInsideStringsAndEscapedQuotesIsNotNesting() throws {
        let brackets = String(repeating: "[", count: 100)
        let line = #"{"jsonrpc":"2.0","id":"\""# + brackets + #"","method":"status","params":{"id":"\\"# + brackets + #"\"{{"}}"#
        let request = try decoder.decode(Data(line.utf8))
        #expect(request.id == .string("\"" + brackets))
        #expect(try request.params(for: Status.self).id == "\\" + brackets + "\"{{")
    }

    @Test func theTooLongAnswerNamesTheLimit() {
        #expect(RequestDecoder.lineTooLong.error.code == .requestTooLarge)
        #expect(RequestDecoder.lineTooLong.error.message.contains("\(Limits.maxRequestLineBytes) bytes"))
        #expect(RequestDecoder.lineTooLong.id == .null)
    }
}

@Suite("Parameter shapes")
struct ParameterShapeTests {
    let decoder = RequestDecoder(methods: ["submit", "ack", "version"])

    /// The invalid-params message for a submit with `params`, or nil when it decodes.
    private func problem<M: RPCMethod>(_ method: M.Type, _ params: String) -> String? {
        let line = Data((#"{"jsonrpc":"2.0","id":1,"method":"\#(M.name)","params":"# + params + "}").utf8)
        do {
            _ = try decoder.decode(line).params(for: M.self)
            return nil
        } catch let error as RPCError {
            #expect(error.code == .invalidParams)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func unknownParametersAreNamedWithTheClosestKnownOne() {
        let message = problem(Submit.self, #"{"url":"http://a/","destination":"/tmp/a","overwrites":true}"#)
        #expect(message?.contains("unknown parameter 'overwrites'") == true)
        #expect(message?.contains("did you mean 'overwrite'?") == true)
        #expect(problem(Submit.self, #"{"url":"http://a/","destination":"/tmp/a","retry":{"max_attempt":2}}"#)?.contains("'retry.max_attempt'") == true)
        #expect(problem(Version.self, #"{"x":1}"#)?.contains("version takes no parameters") == true)
        // Free-form maps take any name.
        #expect(problem(Submit.self, #"{"url":"http://a/","destination":"/tmp/a","headers":{"X-Anything":"1"}}"#) == nil)
    }

    @Test func valuesThatNoTypeCanReadAreNamed() {
        let base = #""url":"http://a/","destination":"/tmp/a""#
        #expect(problem(Submit.self, "{\(base),\"size\":1e400}") == "invalid params for submit: parameter 'size' is a number too large to read")
        #expect(problem(Submit.self, "{\(base),\"size\":1.5}")?.contains("parameter 'size' must be a whole number from 0") == true)
        #expect(problem(Submit.self, "{\(base),\"size\":18446744073709551616}")?.contains("parameter 'size' must be a whole number") == true)
        #expect(problem(Submit.self, "{\(base),\"retry\":{\"idle_timeout_seconds\":\"NaN\"}}")?.contains("'retry.idle_timeout_seconds' must be a number") == true)
        #expect(problem(Ack.self, #"{"session":"s","seq":-1}"#)?.contains("parameter 'seq' must be a whole number from 0") == true)
        var invalidUTF8 = Array(#"{"jsonrpc":"2.0","id":1,"method":"submit","params":{"url":"http://a/"#.utf8)
        invalidUTF8 += [0xFF, 0xFE] + Array(#"","destination":"/tmp/a"}}"#.utf8)
        #expect(throws: RPCError.self) { try decoder.decode(Data(invalidUTF8)).params(for: Submit.self) }
        do {
            _ = try decoder.decode(Data(invalidUTF8)).params(for: Submit.self)
        } catch let error as RPCError {
            #expect(error.message.contains("parameter 'url' is not valid UTF-8 text"), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func paramsThatAreNotAnObjectSaySo() {
        #expect(problem(Submit.self, #""x""#)?.contains("params must be an object of named parameters") == true)
        #expect(problem(Submit.self, #"["http://a/","/tmp/a"]"#)?.contains("by position") == true)
    }

    @Test func idsThatCannotBeEchoedAreRefusedBeforeAnythingRuns() {
        for id in ["1.5", "true", "{}", "[1]", "18446744073709551616"] {
            let line = Data(#"{"jsonrpc":"2.0","id":\#(id),"method":"version"}"#.utf8)
            do {
                _ = try decoder.decode(line)
                Issue.record("id \(id) was accepted")
            } catch {
                #expect(error.error.code == .invalidRequest, "\(id)")
                #expect(error.id == .null)
            }
        }
        #expect((try? decoder.decode(Data(#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"version"}"#.utf8)))?.id == .number(.min))
    }
}
