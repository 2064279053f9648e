import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Sessions and events")
struct SessionEventTests {
    /// Serves `count` small files and submits each under `session` on one connection, which is then closed.
    private func submitAndLeave(
        _ count: Int, session: String, prefix: String, server: TestHTTPServer, daemon: TestDaemon
    ) throws -> [String] {
        let client = try daemon.client()
        return try (0..<count).map { index in
            let path = "/\(prefix)\(index)"
            server.serve(path, content: TestContent(seed: UInt64(index + 1), size: Int64(10_000 + index * 1000)))
            let params = Submit.Params(url: server.url(path), destination: daemon.destination("\(prefix)\(index)"), session: session)
            return try client.call(Submit.self, params).job.id
        }
    }

    private func waitUntilFinished(_ ids: [String], on daemon: TestDaemon) async throws {
        try await waitUntil("\(ids.count) jobs to finish", seconds: 120, interval: .milliseconds(50)) {
            let finished = try daemon.jobs().filter { ids.contains($0.id) && $0.state.isTerminal }
            return finished.count == ids.count
        }
    }

    /// Checks that a session's replay holds exactly `ids`' terminal events, in sequence order.
    private func expectReplay(of ids: [String], session: String, on daemon: TestDaemon) throws -> UInt64 {
        let stream = try EventStream(socket: daemon.socketPath, .init(session: session))
        let (events, caughtUp) = try stream.replay()
        #expect(stream.subscription.replay == ids.count)
        #expect(caughtUp.replayed == ids.count)
        #expect(events.map(\.job.id).sorted() == ids.sorted(), "exactly the session's jobs, once each")
        #expect(events.map(\.seq) == events.map(\.seq).sorted() && Set(events.map(\.seq)).count == events.count, "strictly increasing sequence numbers")
        #expect(events.allSatisfy { $0.type == .completed && $0.job.state == .completed && $0.job.session == session })
        #expect(events.allSatisfy { $0.seq <= caughtUp.seq })
        return events.map(\.seq).max() ?? 0
    }

    private func expectNothingReplayed(session: String, on daemon: TestDaemon) throws {
        let stream = try EventStream(socket: daemon.socketPath, .init(session: session))
        let (events, caughtUp) = try stream.replay()
        #expect(events.isEmpty, "acknowledged events come back: \(events.map(\.seq))")
        #expect(caughtUp.replayed == 0)
    }

    @Test func aSessionGetsTheEventsItMissedThenCaughtUpAndNothingAfterAck() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let ids = try submitAndLeave(20, session: "backup.nightly", prefix: "f", server: server, daemon: daemon)
        try await waitUntilFinished(ids, on: daemon)

        let last = try expectReplay(of: ids, session: "backup.nightly", on: daemon)
        let acknowledged = try daemon.client().call(Ack.self, .init(session: "backup.nightly", seq: last)).acknowledged
        #expect(acknowledged == 20)
        try expectNothingReplayed(session: "backup.nightly", on: daemon)
        #expect(try daemon.client().call(Ack.self, .init(session: "backup.nightly", seq: last)).acknowledged == 0, "acknowledging twice is harmless")
        try await server.shutdown()
    }

    @Test func eventsSurviveKill9BetweenCompletionAndSubscribeAndAcksSurviveToo() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let ids = try submitAndLeave(20, session: "sync", prefix: "k", server: server, daemon: daemon)
        try await waitUntilFinished(ids, on: daemon)
        daemon.kill9()
        try await daemon.start()

        let last = try expectReplay(of: ids, session: "sync", on: daemon)
        #expect(try daemon.client().call(Ack.self, .init(session: "sync", seq: last)).acknowledged == 20)
        daemon.kill9()
        try await daemon.start()
        try expectNothingReplayed(session: "sync", on: daemon)

        // Numbering goes on upwards after the crashes.
        let next = try submitAndLeave(1, session: "sync", prefix: "after", server: server, daemon: daemon)
        try await waitUntilFinished(next, on: daemon)
        let stream = try EventStream(socket: daemon.socketPath, .init(session: "sync"))
        let (events, _) = try stream.replay()
        #expect(events.map(\.job.id) == next)
        #expect(events.allSatisfy { $0.seq > last })
        try await server.shutdown()
    }

    @Test func twoSessionsDoNotSeeEachOthersEvents() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let first = try submitAndLeave(3, session: "alpha", prefix: "a", server: server, daemon: daemon)
        let second = try submitAndLeave(2, session: "beta", prefix: "b", server: server, daemon: daemon)
        let loose = try daemon.submit(server.url("/a0"), to: daemon.destination("loose")).id
        try await waitUntilFinished(first + second + [loose], on: daemon)

        _ = try expectReplay(of: first, session: "alpha", on: daemon)
        _ = try expectReplay(of: second, session: "beta", on: daemon)
        // Acknowledging one session leaves the other alone.
        #expect(try daemon.client().call(Ack.self, .init(session: "alpha", seq: .max)).acknowledged == 3)
        _ = try expectReplay(of: second, session: "beta", on: daemon)
        try await server.shutdown()
    }

    @Test func liveEventsFollowTheReplayInOrderForEveryStateChange() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/slow", content: TestContent(seed: 3, size: 600_000), behaviour: .trickle(bytesPerSecond: 200_000))
        try await daemon.start()
        let stream = try EventStream(socket: daemon.socketPath, .init(session: "live"))
        guard case .caughtUp = try stream.next() else { Issue.record("no caughtUp first"); return }
        let id = try daemon.submit(.init(url: server.url("/slow"), destination: daemon.destination("slow"), session: "live")).id
        var types: [JobEventType] = []
        var seqs: [UInt64] = []
        while types.last?.isTerminal != true {
            guard case .event(let event) = try stream.next() else { continue }
            #expect(event.job.id == id)
            types.append(event.type)
            seqs.append(event.seq)
        }
        #expect(Array(types.prefix(2)) == [.queued, .started])
        #expect(types.last == .completed)
        #expect(types.dropFirst(2).dropLast().allSatisfy { $0 == .progress }, "\(types)")
        #expect(types.contains(.progress), "a 3-second download reports progress")
        #expect(seqs == seqs.sorted())
        try await server.shutdown()
    }

    @Test func badSubscriptionsAreRefused() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let client = try daemon.client()
        #expect(throws: ControlClientError.self) { try client.call(Subscribe.self, .init(ids: ["nope"])) }
        #expect(throws: ControlClientError.self) { try client.call(Subscribe.self, .init(session: "bad name")) }
        #expect(throws: ControlClientError.self) { try client.call(Ack.self, .init(session: "../x", seq: 1)) }
        #expect(throws: ControlClientError.self) { try client.call(Unsubscribe.self, .init(subscription: 99)) }
        let subscribed = try client.call(Subscribe.self, .init())
        _ = try client.call(Unsubscribe.self, .init(subscription: subscribed.subscription))
        #expect(try client.call(Version.self, .init()).protocol == transferProtocolVersion)
    }
}
