import Foundation
import Testing
import TransferProtocol

@Suite("Pause and resume params")
struct PauseResumeParamsTests {
    let decoding = ParamsDecoding(methods: ["pause", "resume"])

    @Test func eachWayOfChoosingJobsDecodes() throws {
        #expect(try decoding.params(Pause.self, #"{"ids":["a","b"]}"#) == JobSelection(ids: ["a", "b"]))
        #expect(try decoding.params(Resume.self, #"{"session":"nightly"}"#) == JobSelection(session: "nightly"))
        #expect(try decoding.params(Pause.self, #"{"all":true}"#) == JobSelection(all: true))
        for selection in [JobSelection(ids: ["a"]), JobSelection(session: "s"), JobSelection(all: true)] {
            #expect(selection.problem == nil)
        }
    }

    @Test func wrongNamesAndKindsAreRefusedByName() {
        #expect(decoding.problem(Pause.self, #"{"id":"a"}"#)?.contains("unknown parameter 'id'") == true)
        #expect(decoding.problem(Pause.self, #"{"id":"a"}"#)?.contains("did you mean 'ids'?") == true)
        #expect(decoding.problem(Resume.self, #"{"ids":"a"}"#)?.contains("parameter 'ids' must be an array of strings") == true)
        #expect(decoding.problem(Pause.self, #"{"all":"yes"}"#)?.contains("parameter 'all' must be true or false") == true)
        #expect(decoding.problem(Resume.self, #"{"session":7}"#)?.contains("parameter 'session' must be a string") == true)
    }

    @Test func aSelectionNamesJobsExactlyOneWay() throws {
        #expect(try decoding.params(Pause.self, "{}").problem?.contains("say which jobs") == true)
        #expect(JobSelection(ids: ["a"], session: "s").problem?.contains("only one of") == true)
        #expect(JobSelection(session: "s", all: true).problem?.contains("only one of") == true)
        #expect(JobSelection(ids: []).problem?.contains("ids is empty") == true)
        #expect(JobSelection(ids: [""]).problem?.contains("empty string") == true)
        #expect(JobSelection(all: false).problem != nil)
        #expect(JobSelection(ids: Array(repeating: "a", count: Limits.maxJobsPerSelection + 1)).problem?.contains("several requests") == true)
    }

    @Test func theResultAndAPausedJobUseSnakeCaseAndLeaveOutWhatIsNotSet() throws {
        var job = Job(id: "j", state: .queued, url: "http://h/x", destination: "/tmp/x", createdAt: Date(timeIntervalSince1970: 1_800_000_000), owner: 0)
        let unpaused = String(decoding: try WireCoding.encoder().encode(job), as: UTF8.self)
        #expect(!unpaused.contains("paused"), "paused is left out when false: \(unpaused)")
        job.paused = true
        let result = JobSelectionResult(jobs: [job], notFound: ["x"], hold: true)
        let data = try WireCoding.encoder().encode(result)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""paused":true"#) && text.contains(#""not_found":["x"]"#) && text.contains(#""hold":true"#), "\(text)")
        #expect(try WireCoding.decoder().decode(JobSelectionResult.self, from: data) == result)
        let withoutHold = String(decoding: try WireCoding.encoder().encode(JobSelectionResult(jobs: [])), as: UTF8.self)
        #expect(!withoutHold.contains("hold"))
    }

    @Test func pausedAndResumedEventsAreNotTerminal() throws {
        #expect(!JobEventType.paused.isTerminal && !JobEventType.resumed.isTerminal)
        #expect(try WireCoding.decoder().decode(JobEventType.self, from: Data(#""paused""#.utf8)) == .paused)
    }
}
