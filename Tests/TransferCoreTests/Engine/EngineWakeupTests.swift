import Foundation
import Logging
import Synchronization
import Testing
import TransferProtocol
import TransferTestSupport
@testable import TransferCore

/// The engine's waits between requests end on the event they wait for, not when the time their
/// pace named comes: a paced download whose limit is lifted or raised sends its next request at
/// once, and one that is paused stops at once.
///
/// At 1 KiB/s a segment (16 KiB, the smallest paced one) names a time 16 s after its request
/// went out: a transfer that only its timer woke would go on that late. Times are taken where
/// the thing happens (the server's threads, a thread of the test's own), as the test's task may
/// wait for seconds on a loaded machine.
@Suite("Engine wake-ups")
struct EngineWakeupTests {
    static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    static let slowRate: Int64 = 1 << 10
    static let segment: Int64 = 16 << 10
    /// Well under the 16 s the pace names, well over what a loaded machine adds.
    static let promptly: Duration = .seconds(5)

    /// An engine's events, collected as they come.
    final class EventLog: Sendable {
        private let seen = Mutex<[EngineEvent]>([])

        init(_ engine: TransferEngine) {
            let events = engine.events
            Task { for await event in events { self.seen.withLock { $0.append(event) } } }
        }

        var completed: Bool {
            seen.withLock { $0.contains { if case .completed = $0 { return true } else { return false } } }
        }

        var stoppedBytes: Int64? { stopped?.bytes }

        /// What the `.stopped` report said: the bytes kept and the reason it gives.
        var stopped: (bytes: Int64, reason: StopReason)? {
            seen.withLock { events in
                for event in events { if case .stopped(_, let bytes, let reason) = event { return (bytes, reason) } }
                return nil
            }
        }

        var description: String { seen.withLock { "\($0)" } }
    }

    /// A download of `size` bytes paced to `slowRate` by the global limit, started; returns once
    /// its first segment is in the file, so that it waits for its pace.
    private func startPacedDownload(
        _ server: TestHTTPServer, in directory: TemporaryDirectory, size: Int64
    ) async throws -> (TransferEngine, EventLog) {
        server.serve("/paced.bin", content: TestContent(seed: 7, size: size))
        let rates = RateGovernor(RatePolicy(maxRate: Self.slowRate))
        let engine = TransferEngine(configuration: EngineConfiguration(), rates: rates, logger: Self.logger)
        let log = EventLog(engine)
        let destination = directory.file("paced.bin")
        let url = try #require(URL(string: server.url("/paced.bin")))
        engine.start(
            TransferRequest(
                jobID: "paced", url: url, headers: [:], destination: destination,
                partialPath: PartialPath.for(destination: destination, jobID: "paced"), overwrite: false,
                allowedRoots: AllowedRoots([directory.path]), logger: Self.logger))
        try await eventually("the first segment", within: 60) {
            (engine.progress(jobID: "paced")?.bytes ?? 0) >= Self.segment
        }
        return (engine, log)
    }

    /// The instant `condition` first holds, watched on a thread of its own; nil after `seconds`.
    private func watch(within seconds: Double, _ condition: @escaping @Sendable () -> Bool) async -> ContinuousClock.Instant? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
                while ContinuousClock.now < deadline {
                    if condition() {
                        continuation.resume(returning: ContinuousClock.now)
                        return
                    }
                    usleep(1000)
                }
                continuation.resume(returning: nil)
            }
        }
    }

    /// When the first request for `path` after `instant` came, once one has.
    private func firstRequest(_ server: TestHTTPServer, _ path: String, after instant: ContinuousClock.Instant) async throws
        -> ContinuousClock.Instant
    {
        try await eventually("a request after \(instant)", within: 60) {
            server.requests(for: path).contains { $0.receivedAt > instant }
        }
        return try #require(server.requests(for: path).map(\.receivedAt).filter { $0 > instant }.min())
    }

    @Test func aPacedDownloadWhoseLimitIsLiftedContinuesAtOnce() async throws {
        let server = try await TestHTTPServer.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (engine, log) = try await startPacedDownload(server, in: directory, size: 256 << 10)
        let lifted = ContinuousClock.now
        engine.rates.replace(with: RatePolicy())
        let next = try await firstRequest(server, "/paced.bin", after: lifted)
        #expect(next - lifted < Self.promptly, "the next request came \(next - lifted) after the limit was lifted")
        try await eventually("the download to complete", within: 60) { log.completed }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file("paced.bin"))).count == 256 << 10)
        engine.finishEvents()
        try await server.shutdown()
    }

    @Test func aRaisedLimitBringsThePacedRequestForward() async throws {
        let server = try await TestHTTPServer.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (engine, _) = try await startPacedDownload(server, in: directory, size: 4 << 20)
        let raised = ContinuousClock.now
        // At 1 MiB/s the 16 KiB already fetched fit long ago: the next request goes out now.
        engine.rates.replace(with: RatePolicy(maxRate: 1 << 20))
        let next = try await firstRequest(server, "/paced.bin", after: raised)
        #expect(next - raised < Self.promptly, "the next request came \(next - raised) after the limit was raised")
        _ = engine.cancel(jobID: "paced")
        engine.finishEvents()
        try await server.shutdown()
    }

    @Test func aPausedPacedDownloadStopsAtOnce() async throws {
        let server = try await TestHTTPServer.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (engine, log) = try await startPacedDownload(server, in: directory, size: 256 << 10)
        let paused = ContinuousClock.now
        #expect(engine.stop(jobID: "paced", reason: .pause) == .stopping)
        let ended = await watch(within: 60) { engine.progress(jobID: "paced") == nil }
        let stoppedAt = try #require(ended, "the transfer did not stop: \(log.description)")
        #expect(stoppedAt - paused < Self.promptly, "stopped \(stoppedAt - paused) after the pause")
        try await eventually("the stop to be reported", within: 60) { log.stoppedBytes != nil }
        // What it kept is whole segments: the pause ended the wait between two of them.
        let kept = try #require(log.stoppedBytes)
        #expect(kept > 0 && kept % Self.segment == 0, "\(kept)")
        #expect(log.stopped?.reason == .pause, "the report gives the reason the stop was asked for")
        #expect(server.requests(for: "/paced.bin").allSatisfy { $0.receivedAt < paused })
        engine.finishEvents()
        try await server.shutdown()
    }
}
