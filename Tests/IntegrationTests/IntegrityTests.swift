import Crypto
import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Integrity")
struct IntegrityTests {
    @Test func anExpectedDigestAndSizeThatMatchComplete() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 401, size: 5 << 20 + 7)
        server.serve("/ok", content: content)
        try await daemon.start()
        let job = try daemon.submit(
            .init(url: server.url("/ok"), destination: daemon.destination("ok"), sha256: content.sha256Hex().uppercased(), size: content.size))
        #expect(job.expectedSha256 == content.sha256Hex(), "kept in lowercase")
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.sha256 == content.sha256Hex())
        #expect(finished.bytesReceived == content.size)
        try await server.shutdown()
    }

    @Test func aWrongExpectedDigestFailsWithBothDigestsAndKeepsNothing() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 402, size: 1 << 20)
        let wrong = content.replacement.sha256Hex()
        server.serve("/bad", content: content)
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/bad"), destination: daemon.destination("bad"), sha256: wrong))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .digestMismatch)
        let message = finished.error?.message ?? ""
        #expect(message.contains(wrong) && message.contains(content.sha256Hex()), "\(message)")
        #expect(finished.attempts == 1, "a digest mismatch is not retried")
        #expect(try daemon.outputFiles().isEmpty)
        try await server.shutdown()
    }

    @Test func aSizeTheServerContradictsFailsBeforeDownloading() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 403, size: 30 << 20)
        server.serve("/big", content: content)
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/big"), destination: daemon.destination("big"), size: 1000))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .sizeMismatch)
        #expect(server.bytesSent(for: "/big") < content.size, "it did not download the whole file first")
        #expect(try daemon.outputFiles().isEmpty)
        try await server.shutdown()
    }

    @Test(arguments: ["sha-256", "sha-512"])
    func aReprDigestFromTheServerIsChecked(algorithm: String) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 404, size: 6 << 20)
        server.serve("/right", content: content, behaviour: .digest(algorithm: algorithm))
        server.serve("/wrong", content: content, behaviour: .digest(algorithm: algorithm, correct: false))
        try await daemon.start()
        let right = try daemon.submit(server.url("/right"), to: daemon.destination("right"))
        let wrong = try daemon.submit(server.url("/wrong"), to: daemon.destination("wrong"))
        let finishedRight = try await daemon.waitForTerminal(right.id)
        #expect(finishedRight.state == .completed, "\(String(describing: finishedRight.error))")
        let finishedWrong = try await daemon.waitForTerminal(wrong.id)
        #expect(finishedWrong.state == .failed)
        #expect(finishedWrong.error?.code == .digestMismatch)
        #expect(finishedWrong.error?.message.contains("Repr-Digest") == true)
        #expect(try daemon.outputFiles() == ["right"])
        try await server.shutdown()
    }

    @Test func aContentDigestOnAWholeAnswerIsChecked() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 405, size: 2 << 20)
        server.serve("/cd", content: content, behaviour: .all(.ignoreRange, .digest(header: "Content-Digest", correct: false)))
        try await daemon.start()
        let job = try daemon.submit(server.url("/cd"), to: daemon.destination("cd"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.message.contains("Content-Digest") == true, "\(String(describing: finished.error))")
        #expect(try daemon.outputFiles().isEmpty)
        try await server.shutdown()
    }

    @Test func theDigestSurvivesResumesInTheSameRun() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 406, size: 9 << 20)
        server.serve("/dropping", content: content, behaviour: .dropAfter(bytes: 1 << 20, times: 3))
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/dropping"), destination: daemon.destination("dropping"), sha256: content.sha256Hex()))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.attempts == 4)
        #expect(finished.sha256 == content.sha256Hex())
        try await server.shutdown()
    }

    @Test func badIntegrityParametersAreRefused() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let cases: [Submit.Params] = [
            .init(url: "http://127.0.0.1:9/x", destination: daemon.destination("a"), sha256: "abc"),
            .init(url: "http://127.0.0.1:9/x", destination: daemon.destination("b"), sha256: String(repeating: "g", count: 64)),
            .init(url: "http://127.0.0.1:9/x", destination: daemon.destination("c"), size: -1),
            .init(url: "http://127.0.0.1:9/x", destination: daemon.destination("d"), retry: .init(maxAttempts: 0)),
            .init(url: "http://127.0.0.1:9/x", destination: daemon.destination("e"), retry: .init(idleTimeoutSeconds: -1)),
        ]
        for params in cases {
            do {
                _ = try daemon.submit(params)
                Issue.record("accepted \(params)")
            } catch ControlClientError.rpc(let error) {
                #expect(error.code == .invalidParams, "\(error.message)")
            }
        }
        #expect(try daemon.jobs().isEmpty)
    }
}
