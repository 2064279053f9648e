import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Downloads without destination, over the socket as a script makes them: the daemon's inbox,
/// its per-user budget, and the file going once the end is acknowledged.
@Suite struct InboxTests {
    @Test func anAcknowledgedEndFreesTheInboxAndTheBudgetRefusesBeyondIt() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["inbox_bytes_per_user": 1 << 20])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 2401, size: 2 << 20)
        server.serve("/big", content: content)
        try await daemon.start()

        var params = Submit.Params(url: server.url("/big"), destination: nil, session: "feed")
        params.label = "nightly feed"
        let job = try daemon.submit(params)
        #expect(job.inbox == true)
        #expect(job.label == "nightly feed")
        let done = try await daemon.waitForTerminal(job.id)
        #expect(done.state == .completed)
        #expect(try sha256Hex(ofFile: done.destination) == content.sha256Hex())
        #expect(done.destination.hasPrefix(daemon.stateDirectory + "/inbox/"))

        // 2 MiB held, 1 MiB allowed: the next download without destination is refused.
        #expect { try daemon.submit(Submit.Params(url: server.url("/big"), destination: nil)) } throws: {
            "\($0)".contains("inbox_bytes_per_user")
        }
        // One with a destination is not concerned.
        let elsewhere = try daemon.submit(.init(url: server.url("/big"), destination: daemon.destination("big")))
        #expect(try await daemon.waitForTerminal(elsewhere.id).state == .completed)

        let acknowledged = try daemon.client().call(Ack.self, .init(session: "feed", seq: UInt64.max / 2))
        #expect(acknowledged.acknowledged == 1)
        #expect(!FileManager.default.fileExists(atPath: done.destination), "an acknowledged end's file goes")
        let next = try daemon.submit(Submit.Params(url: server.url("/big"), destination: nil))
        #expect(next.inbox == true)
        try await server.shutdown()
    }

    @Test func aLabelIsTextWithoutControlCharacters() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        var params = Submit.Params(url: "http://127.0.0.1:9/x", destination: daemon.destination("x"))
        params.label = "two\nlines"
        #expect { try daemon.submit(params) } throws: { "\($0)".contains("label must be at most 1,024 bytes of text without control characters") }
        params.label = String(repeating: "é", count: 600)
        #expect { try daemon.submit(params) } throws: { "\($0)".contains("label") }
        #expect(try daemon.jobs().isEmpty)
    }

    @Test func inboxFilesNoJobHoldsAreRemovedAtStartUp() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        daemon.kill9()
        let stray = daemon.stateDirectory + "/inbox/\(getuid())/gone-job"
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory + "/inbox/\(getuid())", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: stray, contents: Data("x".utf8))
        try await daemon.start()
        #expect(!FileManager.default.fileExists(atPath: stray))
    }
}
