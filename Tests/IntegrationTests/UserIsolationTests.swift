import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Another user's jobs answer exactly like jobs that do not exist, whatever the verb.
@Suite("Users are kept apart", .enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
struct UserIsolationTests {
    @Test func anotherUsersJobsLookLikeNoJobAtAllToEveryVerb() async throws {
        let user = try #require(SecondUser.shared)
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1])
        defer { daemon.cleanUp() }
        chmod(daemon.directory, 0o755)
        server.serve("/slow", content: TestContent(seed: 1, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 5_000))
        server.serve("/quick", content: TestContent(seed: 2, size: 1000))
        try await daemon.start()
        user.mayConnect(to: daemon)

        // Root's jobs: one running, some queued behind it, one finished, all in a session whose
        // name the other user uses too.
        var ids = [try daemon.submit(.init(url: server.url("/slow"), destination: daemon.destination("running"), session: "shared")).id]
        for index in 0..<5 {
            ids.append(try daemon.submit(.init(url: server.url("/slow"), destination: daemon.destination("queued\(index)"), session: "shared")).id)
        }
        let finished = try daemon.submit(.init(url: server.url("/quick"), destination: daemon.destination("done"), id: "done-job", session: "shared")).id
        ids.append(finished)
        try await waitUntil("the finished job") { try daemon.job(finished).state == .completed || daemon.job(ids[0]).state == .running }

        func asUser(_ verb: String, _ id: String) async throws -> (status: Int32, stderr: String) {
            let socket = ["--socket", daemon.socketPath]
            let arguments: [String]
            switch verb {
            case "status": arguments = ["status", id] + socket
            case "cancel": arguments = ["cancel", id] + socket
            default: arguments = ["wait", id] + socket  // subscribe with ids
            }
            let run = try await user.transferctl(arguments)
            return (run.status, run.stderr.replacingOccurrences(of: id, with: "ID"))
        }
        var generator = SystemRandomNumberGenerator()
        var refusedLikeMissing = 0
        for attempt in 0..<100 {
            let verb = ["status", "cancel", "subscribe"].randomElement(using: &generator) ?? "status"
            let id = ids.randomElement(using: &generator) ?? finished
            let theirs = try await asUser(verb, id)
            let missing = try await asUser(verb, "no-such-\(attempt)")
            if theirs.status == 4, theirs == missing, theirs.stderr.contains("no such job: ID") { refusedLikeMissing += 1 }
            #expect(theirs == missing, "\(verb) of another user's job \(id) answers differently from a missing job: \(theirs.stderr) vs \(missing.stderr)")
        }
        #expect(refusedLikeMissing == 100)

        // Lists, sessions and live events hold none of root's jobs either.
        let list = try await user.transferctl(["status", "--json", "--socket", daemon.socketPath])
        #expect(list.status == 0 && list.stdout.isEmpty, "\(list.stdout)\(list.stderr)")
        let everyone = try await user.transferctl(["status", "--all", "--socket", daemon.socketPath])
        #expect(everyone.status == 4 && everyone.stderr.contains("only root"), "\(everyone.stderr)")
        let session = try await user.transferctl(["events", "--session", "shared", "--socket", daemon.socketPath])
        #expect(session.status == 0 && session.stdout.isEmpty, "\(session.stdout)")
        let watchAll = try await user.transferctl(["watch", "--all", "--socket", daemon.socketPath])
        #expect(watchAll.status == 4 && watchAll.stderr.contains("only root"), "\(watchAll.stderr)")
        // Nothing was cancelled, and root still sees them all.
        let states = try daemon.jobs().filter { ids.contains($0.id) }.map(\.state)
        #expect(states.count == ids.count && !states.contains(.cancelled), "\(states)")
        try await server.shutdown()
    }
}
