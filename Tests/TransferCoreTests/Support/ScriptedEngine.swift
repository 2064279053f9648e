import Foundation
import Synchronization
import TransferProtocol
@testable import TransferCore

/// An engine for the core's unit tests: records what it is asked to start, and reports whatever
/// the test scripts, so scheduling, retry and recovery run in milliseconds without a network.
final class ScriptedEngine: TransferDriving {
    let hosts = HostGuard(HostPolicy())
    let events: AsyncStream<EngineEvent>
    private let continuation: AsyncStream<EngineEvent>.Continuation
    private let state = Mutex<(started: [TransferRequest], cancelled: [String], endedJustNow: Set<String>)>(([], [], []))
    /// Per job, what `stop` answers and the bytes its `.stopped` report says were kept.
    private let stops = Mutex<(outcomes: [String: StopOutcome], bytes: [String: Int64], stopped: [String])>(([:], [:], []))

    init() {
        (events, continuation) = AsyncStream.makeStream(of: EngineEvent.self)
    }

    /// Every request started so far, in order.
    var started: [TransferRequest] { state.withLock { $0.started } }
    var cancelled: [String] { state.withLock { $0.cancelled } }

    /// Reports an event, as the real engine would from its queue.
    func report(_ event: EngineEvent) {
        continuation.yield(event)
    }

    /// Reports a response, then the file landed with `bytes`.
    func complete(_ jobID: String, bytes: Int64) {
        report(.responded(jobID: jobID, totalBytes: bytes, validator: "\"v\"", startOffset: 0, partialInode: 1, generation: 0, finalURL: nil))
        report(.completed(jobID: jobID, bytes: bytes, sha256: String(repeating: "0", count: 64)))
    }

    /// Reports an attempt that failed in a way worth retrying, with what it kept.
    func interrupt(
        _ jobID: String, _ error: JobError, kept: StoppedTransfer = StoppedTransfer(bytes: 0, validator: nil, totalBytes: nil),
        retryAfter: Double? = nil
    ) {
        report(.interrupted(jobID: jobID, error: error, kept: kept, retryAfter: retryAfter))
    }

    func start(_ request: TransferRequest) {
        state.withLock { $0.started.append(request) }
    }

    func cancel(jobID: String) -> CancelOutcome {
        let endedJustNow = state.withLock { state in
            state.cancelled.append(jobID)
            // Only the attempt that was ending then: a later attempt (the retry, which may start
            // before the cancel runs again) is running.
            return state.endedJustNow.remove(jobID) != nil
        }
        // The attempt ended as the cancel came: its end is reported by the test, not here.
        if endedJustNow { return .notRunning }
        report(.stopped(jobID: jobID, bytes: 0, reason: .cancel))
        return .cancelled
    }

    /// Scripts that `jobID`'s attempt has just ended when a cancel comes: the cancel finds nothing
    /// running, and the test reports the end.
    func endsBeforeCancel(_ jobID: String) {
        state.withLock { _ = $0.endedJustNow.insert(jobID) }
    }

    /// Scripts what stopping `jobID` answers, and the bytes its report says were kept.
    func onStop(_ jobID: String, answer: StopOutcome = .stopping, keeping bytes: Int64 = 0) {
        stops.withLock {
            $0.outcomes[jobID] = answer
            $0.bytes[jobID] = bytes
        }
    }

    /// Every job a stop was asked for, in order.
    var stopped: [String] { stops.withLock { $0.stopped } }

    func stop(jobID: String, reason: StopReason) -> StopOutcome {
        let (outcome, bytes) = stops.withLock { stops in
            stops.stopped.append(jobID)
            return (stops.outcomes[jobID] ?? .stopping, stops.bytes[jobID] ?? 0)
        }
        if outcome == .stopping { report(.stopped(jobID: jobID, bytes: bytes, reason: reason)) }
        return outcome
    }

    func forget(jobID: String) {}
    func stopAll() async -> [String: StoppedTransfer] { [:] }
    func finishEvents() { continuation.finish() }
    func progress(jobID: String) -> TransferProgress? { nil }
}

/// Polls `condition` until it holds or `seconds` pass.
func eventually(_ what: String, within seconds: Double = 5, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw ScriptTimeout(what: what) }
        try await Task.sleep(for: .milliseconds(2))
    }
}

struct ScriptTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}
