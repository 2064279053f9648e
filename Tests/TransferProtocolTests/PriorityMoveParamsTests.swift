import Foundation
import Testing
import TransferProtocol

@Suite("Priority and move params")
struct PriorityMoveParamsTests {
    let decoding = ParamsDecoding(methods: ["priority", "move", "submit"])

    @Test func priorityAndMoveParamsDecode() throws {
        #expect(try decoding.params(PriorityMethod.self, #"{"id":"a","priority":"background"}"#) == .init(id: "a", priority: "background"))
        #expect(try decoding.params(Move.self, #"{"id":"a","first":true}"#) == .init(id: "a", first: true))
        #expect(try decoding.params(Move.self, #"{"id":"a","before":"b"}"#) == .init(id: "a", before: "b"))
        let submit = try decoding.params(Submit.self, #"{"url":"http://h/x","destination":"/tmp/x","priority":"foreground"}"#)
        #expect(submit.priority == "foreground")
    }

    @Test func wrongNamesAndKindsAreRefusedByName() {
        #expect(decoding.problem(PriorityMethod.self, #"{"id":"a","class":"background"}"#)?.contains("unknown parameter 'class'") == true)
        #expect(decoding.problem(PriorityMethod.self, #"{"id":"a","priority":2}"#)?.contains("parameter 'priority' must be a string") == true)
        #expect(decoding.problem(Move.self, #"{"id":"a","first":"yes"}"#)?.contains("parameter 'first' must be true or false") == true)
        #expect(decoding.problem(Move.self, #"{"id":"a","after":"b"}"#)?.contains("unknown parameter 'after'") == true)
        #expect(decoding.problem(Submit.self, #"{"url":"http://h/x","priority":1}"#)?.contains("parameter 'priority' must be a string") == true)
    }

    @Test func aMoveNamesExactlyOnePlace() throws {
        #expect(try decoding.params(Move.self, #"{"id":"a"}"#).problem?.contains("say where") == true)
        #expect(Move.Params(id: "a", first: false).problem?.contains("say where") == true)
        #expect(Move.Params(id: "a", first: true, before: "b").problem?.contains("only one of") == true)
        #expect(Move.Params(id: "a", before: "a").problem?.contains("before itself") == true)
        #expect(Move.Params(id: "a", before: "").problem?.contains("before is empty") == true)
        #expect(Move.Params(id: "a", first: true).problem == nil && Move.Params(id: "a", before: "b").problem == nil)
    }

    @Test func aJobCarriesItsPriorityAndOneWithoutReadsAsUnset() throws {
        var job = Job(id: "j", state: .queued, url: "http://h/x", destination: "/tmp/x", createdAt: Date(timeIntervalSince1970: 1_800_000_000), owner: 0)
        job.priority = .background
        let text = String(decoding: try WireCoding.encoder().encode(job), as: UTF8.self)
        #expect(text.contains(#""priority":"background""#), "\(text)")
        job.priority = nil
        let older = try WireCoding.encoder().encode(job)
        #expect(try WireCoding.decoder().decode(Job.self, from: older).priority == nil)
        #expect(JobPriority.allCases.map(\.rank) == [0, 1, 2])
    }
}
