import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A job id belongs to the user who chose it: two users may both run the README's nightly
/// pattern with `--id nightly`, and no answer tells one user which ids the other uses.
@Suite("Job ids belong to their owner", .enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
struct JobIDOwnershipTests {
    @Test func twoUsersMayBothSubmitTheSameIDWithReplaceAndOverwrite() async throws {
        let (daemon, user) = try await SecondUser.startDaemonServingBoth()
        defer { daemon.cleanUp() }
        let server = try await TestHTTPServer.start()
        let rootContent = TestContent(seed: 1, size: 1000)
        let theirContent = TestContent(seed: 2, size: 3000)
        server.serve("/root.bin", content: rootContent)
        server.serve("/theirs.bin", content: theirContent)
        let theirs = daemon.directory + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: true)
        #expect(chown(theirs, user.uid, user.gid) == 0)
        let socket = ["--socket", daemon.socketPath]

        func nightly(asRoot: Bool) async throws -> (status: Int32, stdout: String, stderr: String) {
            let arguments = ["submit", "--id", "nightly", "--replace", "--overwrite", "--wait", "--json"] + socket
            if asRoot { return try await runTransferctl(arguments + [server.url("/root.bin"), daemon.destination("nightly.bin")]) }
            return try await user.transferctl(arguments + [server.url("/theirs.bin"), theirs + "/nightly.bin"])
        }
        // The other user first, then root; then again, in the other order: every run succeeds.
        for (round, order) in [[false, true], [true, false]].enumerated() {
            for asRoot in order {
                let run = try await nightly(asRoot: asRoot)
                #expect(run.status == 0, "round \(round), \(asRoot ? "root" : "the other user"): \(run.stderr)")
                #expect(!run.stderr.contains("already names"), "\(run.stderr)")
            }
        }
        #expect(try sha256Hex(ofFile: daemon.destination("nightly.bin")) == rootContent.sha256Hex())
        #expect(try sha256Hex(ofFile: theirs + "/nightly.bin") == theirContent.sha256Hex())

        // Each sees their own job under the id; root names the other user's as UID:ID.
        let theirStatus = try await user.transferctl(["status", "nightly", "--json"] + socket)
        #expect(theirStatus.status == 0, "\(theirStatus.stderr)")
        let theirJob = try WireCoding.decoder().decode(Job.self, from: Data(theirStatus.stdout.utf8))
        #expect(theirJob.id == "nightly" && theirJob.owner == user.uid && theirJob.url == server.url("/theirs.bin"))
        let rootJob = try daemon.job("nightly")
        #expect(rootJob.id == "nightly" && rootJob.owner == 0 && rootJob.url == server.url("/root.bin"))
        let named = try daemon.job("\(user.uid):nightly")
        #expect(named.id == "nightly" && named.owner == user.uid)
        let waited = try await runTransferctl(["wait", "\(user.uid):nightly"] + socket)
        #expect(waited.status == 0, "root waits for another user's job by UID:ID: \(waited.stderr)")
        // Two of root's own lists show both, each with its owner.
        let listed = try daemon.client().call(Status.self, .init(all: true, limit: Status.maxLimit)).jobs.filter { $0.id == "nightly" }
        #expect(Set(listed.map(\.owner)) == [0, user.uid])

        // The other user cannot reach root's job by UID:ID, and learns nothing from trying.
        let probe = try await user.transferctl(["status", "0:nightly"] + socket)
        let missing = try await user.transferctl(["status", "0:no-such-id"] + socket)
        #expect(probe.status == 4 && missing.status == 4)
        #expect(probe.stderr.replacingOccurrences(of: "0:nightly", with: "ID") == missing.stderr.replacingOccurrences(of: "0:no-such-id", with: "ID"))
        try await server.shutdown()
    }

    @Test func anIDAnotherUserHoldsIsNeverRevealedByAnError() async throws {
        let (daemon, user) = try await SecondUser.startDaemonServingBoth()
        defer { daemon.cleanUp() }
        let theirs = daemon.directory + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: true)
        #expect(chown(theirs, user.uid, user.gid) == 0)
        let socket = ["--socket", daemon.socketPath]
        // Root's job waits far ahead, under an id the other user then tries.
        let later = WireCoding.formatTimestamp(Date().addingTimeInterval(86_400))
        let root = try await runTransferctl(
            ["submit", "--id", "root-only", "--not-before", later, "http://127.0.0.1:9/a", daemon.destination("a.bin")] + socket)
        #expect(root.status == 0, "\(root.stderr)")
        for extra in [[], ["--replace"], ["--replace", "--overwrite"]] {
            let tried = try await user.transferctl(
                ["submit", "--id", "root-only", "--not-before", later] + extra + ["http://127.0.0.1:9/b", theirs + "/b\(extra.count).bin"] + socket)
            #expect(tried.status == 0, "\(extra): \(tried.stderr)")
            #expect(!tried.stderr.contains("already"), "\(tried.stderr)")
            let cancelled = try await user.transferctl(["cancel", "root-only"] + socket)
            #expect(cancelled.status == 0, "the other user cancels their own job: \(cancelled.stderr)")
        }
        #expect(try daemon.job("root-only").state == .queued, "root's job is untouched")
    }
}
