import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The state directory's filesystem (journal, spool) as a budget, never a cliff: one user cannot
/// fill it, a full one refuses new work and keeps serving, and start-up never needs free space.
@Suite("State directory space", .enabled(if: Tmpfs.available, "skipped: mounting a tmpfs needs root (CI runs the suite as root)"))
struct StateDiskTests {
    /// The issue's attack: four 8,000-byte headers, a start time far ahead, then cancel, again and again.
    private func attackParams(_ daemon: TestDaemon, _ round: Int) -> Submit.Params {
        var headers: [String: String] = [:]
        for index in 0..<4 { headers["X-Pad-\(index)"] = String(repeating: Character(UnicodeScalar(UInt8(97 + index))), count: 8000) }
        var params = Submit.Params(url: "http://127.0.0.1:9/file", destination: daemon.destination("f\(round)"), headers: headers)
        params.notBefore = Date().addingTimeInterval(86400)
        return params
    }

    /// Submits and cancels until a submit is refused (or `rounds` pass); returns the refusal.
    private func attack(_ daemon: TestDaemon, rounds: Int) throws -> RPCError? {
        for round in 0..<rounds {
            let job: Job
            do {
                job = try daemon.submit(attackParams(daemon, round))
            } catch ControlClientError.rpc(let error) {
                return error
            }
            _ = try daemon.client().call(Cancel.self, .init(id: job.id))
        }
        return nil
    }

    /// A daemon whose state directory is a tmpfs of `megabytes`.
    private func daemonOnTmpfs(_ configuration: [String: Any], megabytes: Int, name: String = #function) throws -> (TestDaemon, Tmpfs) {
        let daemon = try TestDaemon(configuration: configuration, name: name)
        return (daemon, try Tmpfs(at: daemon.stateDirectory, megabytes: megabytes))
    }

    private func tearDown(_ daemon: TestDaemon, _ disk: Tmpfs) {
        daemon.kill9()
        disk.unmount()
        daemon.cleanUp()
    }

    private func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : -1
    }

    @Test func oneUserLoopingBigSubmitsAndCancelsMeetsTheirBudgetAndCleanFreesIt() async throws {
        let (daemon, disk) = try daemonOnTmpfs(["journal_bytes_per_user": 4 << 20], megabytes: 20)
        defer { tearDown(daemon, disk) }
        try await daemon.start()
        // 20 MB hold about 300 rounds of the records as the daemon writes them: the budget stops the user well before.
        let refusal = try #require(try attack(daemon, rounds: 600), "600 rounds of 32 KB submits were all accepted")
        #expect(refusal.code == .limitExceeded, "\(refusal.message)")
        #expect(refusal.message.contains("journal_bytes_per_user") && refusal.message.contains("transferctl clean"), "\(refusal.message)")
        let journal = fileSize(daemon.stateDirectory + "/journal.log")
        #expect(journal > 0 && journal < 12 << 20, "the journal holds \(journal) bytes")
        // The daemon serves on: status, and the cancelled jobs are there.
        let kept = try daemon.jobs()
        #expect(!kept.isEmpty && kept.allSatisfy { $0.state == .cancelled })
        // Forgetting the finished jobs frees the budget.
        let cleaned = try daemon.client().call(Clean.self, .init())
        #expect(cleaned.removed == kept.count)
        let again = try daemon.submit(attackParams(daemon, 9999))
        #expect(again.state == .queued)
    }

    @Test func aNearlyFullStateDirectoryRefusesNewWorkButStatusAndCancelGoOn() async throws {
        let (daemon, disk) = try daemonOnTmpfs(["disk_reserve_bytes": 1 << 20], megabytes: 20)
        defer { tearDown(daemon, disk) }
        try await daemon.start()
        let accepted = try daemon.submit(attackParams(daemon, 0))
        // Another user's files, say: 512 KiB stay free, under the 1 MiB reserve.
        let filler = disk.fill()
        #expect(truncate(filler, off_t(fileSize(filler) - (512 << 10))) == 0)
        do {
            _ = try daemon.submit(attackParams(daemon, 1))
            Issue.record("a submit was accepted with 512 KiB free under a 1 MiB reserve")
        } catch ControlClientError.rpc(let error) {
            #expect(error.code == .insufficientSpace, "\(error.message)")
            #expect(error.message.contains(daemon.stateDirectory) && error.message.contains("disk_reserve_bytes"), "\(error.message)")
        }
        #expect(try daemon.job(accepted.id).state == .queued)
        let cancelled = try daemon.client().call(Cancel.self, .init(id: accepted.id)).job
        #expect(cancelled.state == .cancelled)
        // Space is back: new work is accepted again.
        try FileManager.default.removeItem(atPath: filler)
        #expect(try daemon.submit(attackParams(daemon, 2)).state == .queued)
    }

    @Test func aFullDiskNeitherStopsTheDaemonNorKeepsItFromStartingWithATornTail() async throws {
        let (daemon, disk) = try daemonOnTmpfs(["disk_reserve_bytes": 0], megabytes: 8)
        defer { tearDown(daemon, disk) }
        try await daemon.start()
        let first = try daemon.submit(attackParams(daemon, 0))
        let second = try daemon.submit(attackParams(daemon, 100))
        // Full to the last byte: submits are refused, the daemon stays up.
        let filler = disk.fill()
        var refusals = 0
        for round in 1...20 {
            do {
                _ = try daemon.submit(attackParams(daemon, round))
            } catch ControlClientError.rpc(let error) {
                #expect(error.code == .insufficientSpace, "\(error.message)")
                refusals += 1
            }
        }
        #expect(refusals > 0)
        #expect(try daemon.job(first.id).state == .queued, "status answers")
        // A cancel on the full disk is done at once; its record is saved, or waits for space and says so.
        do {
            #expect(try daemon.client().call(Cancel.self, .init(id: second.id)).job.state == .cancelled)
        } catch ControlClientError.rpc(let error) {
            #expect(error.code == .insufficientSpace && error.message.contains("is cancelled"), "\(error.message)")
        }
        #expect(try daemon.job(second.id).state == .cancelled)
        #expect(daemon.process?.isRunning == true, "\(daemon.log)")
        // Stopped with a torn record at the journal's end, and started again on the full disk.
        #expect(daemon.terminate() == 0)
        let journal = daemon.stateDirectory + "/journal.log"
        try FileManager.default.removeItem(atPath: filler)
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(("00004000 00000000 " + String(repeating: "x", count: 6000)).utf8))
        try handle.close()
        let refill = disk.fill()
        try await daemon.start()
        #expect(daemon.log.contains("cut off without one"), "\(daemon.log)")
        #expect(try daemon.job(first.id).state == .queued)
        try FileManager.default.removeItem(atPath: refill)
        #expect(try daemon.submit(attackParams(daemon, 99)).state == .queued)
    }
}
