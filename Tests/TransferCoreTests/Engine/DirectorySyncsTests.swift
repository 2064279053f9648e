import Dispatch
import Foundation
import Synchronization
import Testing
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// Landings share their directory's syncs: who begins a round, who waits for the next one, and
/// that nobody is told their rename is durable by a sync that began before it.
@Suite("Directory syncs shared by landings")
struct DirectorySyncRoundsTests {
    @Test func aLandingAloneSyncsAtOnce() {
        var rounds = DirectorySyncRounds<Int>()
        #expect(rounds.ask(1) == [1])
        #expect(rounds.syncing)
        #expect(rounds.ended() == nil)
        #expect(!rounds.syncing)
    }

    @Test func landingsThatAskWhileASyncRunsShareTheNextOne() {
        var rounds = DirectorySyncRounds<Int>()
        #expect(rounds.ask(1) == [1])
        #expect(rounds.ask(2) == nil)
        #expect(rounds.ask(3) == nil)
        #expect(rounds.ended() == [2, 3])
        #expect(rounds.syncing)
        #expect(rounds.ended() == nil)
        #expect(!rounds.syncing)
    }

    @Test func aLandingThatAsksWhileTheSharedRoundRunsWaitsForTheOneAfter() {
        var rounds = DirectorySyncRounds<Int>()
        _ = rounds.ask(1)
        _ = rounds.ask(2)
        #expect(rounds.ended() == [2])
        // The round of 2 runs now: 3's rename came after it began.
        #expect(rounds.ask(3) == nil)
        #expect(rounds.next == [3])
        #expect(rounds.ended() == [3])
        #expect(rounds.ended() == nil)
        #expect(rounds.ask(4) == [4])
    }
}

@Suite("Directory syncs, performed")
struct DirectorySyncsTests {
    /// Counts syncs and holds the first one until `release` is signalled.
    final class GatedSync: Sendable {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let count = Atomic<Int>(0)
        let failFrom: Int

        init(failFrom: Int = .max) { self.failFrom = failFrom }

        func sync(_ directory: DirectoryHandle) throws(FileIOError) {
            let number = count.add(1, ordering: .sequentiallyConsistent).newValue
            if number == 1 {
                started.signal()
                _ = release.wait(timeout: .now() + 30)
            }
            if number >= failFrom { throw FileIOError("fsync", directory.path, errno: EIO) }
            try directory.sync()
        }
    }

    /// What each landing was told: whether its directory was synced.
    final class Told: Sendable {
        private let values = Mutex<[String: Bool]>([:])
        func note(_ name: String, _ result: Result<Void, FileIOError>) {
            values.withLock { $0[name] = (try? result.get()) != nil }
        }
        var all: [String: Bool] { values.withLock { $0 } }
    }

    func open(_ directory: TemporaryDirectory) throws -> DirectoryHandle {
        let fd = Glibc.open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(fd >= 0)
        return DirectoryHandle(fd: fd, path: directory.path)
    }

    /// Starts a landing's sync on another thread and returns once its sync runs (held by `gate`).
    func beginHeldSync(_ syncs: DirectorySyncs, _ directory: DirectoryHandle, gate: GatedSync, results: Told) throws {
        Thread {
            syncs.sync(directory) { results.note("first", $0) }
        }.start()
        try #require(gate.started.wait(timeout: .now() + 30) == .success, "the first sync began")
    }

    @Test func landingsInOneDirectoryAtOneMomentShareOneSync() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let gate = GatedSync()
        let syncs = DirectorySyncs(sync: { directory throws(FileIOError) in try gate.sync(directory) })
        let results = Told()
        let done = DispatchSemaphore(value: 0)
        let directory = try open(temporary)
        try beginHeldSync(syncs, directory, gate: gate, results: results)
        // Five landings while the first sync runs: each returns at once, told nothing yet.
        for index in 0..<5 {
            syncs.sync(try open(temporary)) { result in
                results.note("\(index)", result)
                done.signal()
            }
        }
        #expect(results.all.isEmpty)
        gate.release.signal()
        for _ in 0..<5 { #expect(done.wait(timeout: .now() + 30) == .success) }
        // Theirs is one sync, after the first.
        #expect(gate.count.load(ordering: .sequentiallyConsistent) == 2)
        #expect(results.all == ["first": true, "0": true, "1": true, "2": true, "3": true, "4": true])
    }

    @Test func aFailedSyncFailsEveryLandingOfItsRoundAndNoOther() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let gate = GatedSync(failFrom: 2)
        let syncs = DirectorySyncs(sync: { directory throws(FileIOError) in try gate.sync(directory) })
        let results = Told()
        let done = DispatchSemaphore(value: 0)
        let directory = try open(temporary)
        try beginHeldSync(syncs, directory, gate: gate, results: results)
        for index in 0..<3 {
            syncs.sync(directory) { result in
                results.note("\(index)", result)
                done.signal()
            }
        }
        gate.release.signal()
        for _ in 0..<3 { #expect(done.wait(timeout: .now() + 30) == .success) }
        #expect(results.all == ["first": true, "0": false, "1": false, "2": false])
        // A later landing gets a round of its own (begun here, or by the thread that ran the last
        // one if it has not let go yet), which fails too: the disk still fails.
        syncs.sync(directory) { result in
            results.note("alone", result)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(results.all["alone"] == false)
        #expect(gate.count.load(ordering: .sequentiallyConsistent) == 3)
    }

    @Test func anotherDirectoryDoesNotWaitForTheSyncRunningInOne() throws {
        let first = try TemporaryDirectory("first")
        let second = try TemporaryDirectory("second")
        defer {
            first.remove()
            second.remove()
        }
        let gate = GatedSync()
        let syncs = DirectorySyncs(sync: { directory throws(FileIOError) in try gate.sync(directory) })
        let results = Told()
        try beginHeldSync(syncs, try open(first), gate: gate, results: results)
        // Synced on this thread, at once, while the first directory's sync is held.
        syncs.sync(try open(second)) { results.note("second", $0) }
        #expect(results.all["second"] == true)
        #expect(gate.count.load(ordering: .sequentiallyConsistent) == 2)
        gate.release.signal()
    }
}

@Suite("Landing threads")
struct LandingThreadsTests {
    final class Order: Sendable {
        private let values = Mutex<[Int]>([])
        func append(_ value: Int) { values.withLock { $0.append(value) } }
        var all: [Int] { values.withLock { $0 } }
    }

    @Test func landingsRunSideBySideOnLandingThreads() throws {
        let threads = LandingThreads(limit: 4, idleSeconds: 1)
        let arrived = DispatchSemaphore(value: 0)
        let allArrived = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let onLandingThread = Order()
        for _ in 0..<4 {
            threads.run {
                onLandingThread.append(LandingThreads.isCurrent ? 1 : 0)
                arrived.signal()
                // Each waits until all four run: only threads side by side get past this.
                _ = allArrived.wait(timeout: .now() + 30)
                finished.signal()
            }
        }
        for _ in 0..<4 { try #require(arrived.wait(timeout: .now() + 30) == .success, "four landings run at once") }
        for _ in 0..<4 { allArrived.signal() }
        for _ in 0..<4 { #expect(finished.wait(timeout: .now() + 30) == .success) }
        #expect(onLandingThread.all == [1, 1, 1, 1])
        #expect(!LandingThreads.isCurrent)
    }

    @Test func workBeyondTheLimitWaitsForAThread() throws {
        let threads = LandingThreads(limit: 1, idleSeconds: 1)
        let order = Order()
        let done = DispatchSemaphore(value: 0)
        for index in 0..<3 {
            threads.run {
                order.append(index)
                done.signal()
            }
        }
        for _ in 0..<3 { #expect(done.wait(timeout: .now() + 30) == .success) }
        // One thread: the work ran one at a time, in the order it came.
        #expect(order.all == [0, 1, 2])
    }

    /// Starts threads as the system would, except those whose attempt (counted from 1) it refuses.
    final class RefusingStarter: Sendable {
        let refuses: @Sendable (Int) -> Bool
        private let asked = Atomic<Int>(0)
        init(refuses: @escaping @Sendable (Int) -> Bool) { self.refuses = refuses }
        var attempts: Int { asked.load(ordering: .relaxed) }
        func start(_ body: @escaping @Sendable () -> Void) -> Bool {
            guard !refuses(asked.add(1, ordering: .relaxed).newValue) else { return false }
            return CheckedThread.start(body)
        }
    }

    @Test func aRefusedThreadIsTriedAgainWhenNoneIsAlive() throws {
        let starter = RefusingStarter { $0 <= 3 }
        let threads = LandingThreads(limit: 4, idleSeconds: 1, start: { starter.start($0) })
        let done = DispatchSemaphore(value: 0)
        let onLandingThread = Order()
        threads.run {
            onLandingThread.append(LandingThreads.isCurrent ? 1 : 0)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "the landing ran once a thread was granted")
        #expect(onLandingThread.all == [1])
        #expect(starter.attempts == 4)
    }

    @Test func workWhoseThreadIsRefusedWaitsForALiveOne() throws {
        // The first thread is granted, every later one refused.
        let starter = RefusingStarter { $0 > 1 }
        let threads = LandingThreads(limit: 2, idleSeconds: 1, start: { starter.start($0) })
        let firstRuns = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let order = Order()
        threads.run {
            firstRuns.signal()
            _ = release.wait(timeout: .now() + 30)
            order.append(0)
            done.signal()
        }
        try #require(firstRuns.wait(timeout: .now() + 30) == .success)
        threads.run {
            order.append(1)
            done.signal()
        }
        #expect(starter.attempts == 2, "a second thread was asked for and refused")
        release.signal()
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 30) == .success) }
        // The live thread took the waiting work once its own was done; no retry was needed.
        #expect(order.all == [0, 1])
        #expect(starter.attempts == 2)
    }
}
