import NIOCore
import Synchronization

/// The answers to one connection's pipelined requests, written in the order the requests came
/// while the requests themselves run side by side.
///
/// The reader adds each request that may run concurrently (`add`), and waits with `drain` before
/// anything that must run alone. At most `window` answers are outstanding: past that the reader
/// waits, so a client that sends without reading holds a bounded amount of work.
///
/// Answers that are ready together are written together: the submits of one batch are answered at
/// the same moment, and their answers leave in one write and one flush, not one each.
final class PipelinedAnswers: Sendable {
    static let window = 256

    private enum Entry {
        /// A request still running.
        case running
        case answered(ByteBuffer?)
        /// Resumed once every answer before it is written (or the connection broke).
        case marker(CheckedContinuation<Void, Never>)
    }

    private struct State {
        /// Oldest first (at most `window` answers and the markers between them); the first is entry
        /// number `first`.
        var entries: [Entry] = []
        var first = 0
        /// The writer, waiting for the first entry to be ready.
        var writer: CheckedContinuation<Void, Never>?
        var finished = false
        /// The writer's task was cancelled (the connection is closing): it stops waiting.
        var cancelled = false

        /// Whether the writer has something to do: the first entry is ready, or nothing will come.
        var writerMayGo: Bool {
            if cancelled { return true }
            guard let head = entries.first else { return finished }
            if case .running = head { return false }
            return true
        }

        mutating func wakeWriterIfItMayGo() -> CheckedContinuation<Void, Never>? {
            guard writerMayGo, let writer else { return nil }
            self.writer = nil
            return writer
        }
    }

    private let state = Mutex(State())
    private let outstanding = Atomic<Int>(0)
    private let activity: ConnectionActivity

    init(activity: ConnectionActivity) {
        self.activity = activity
    }

    /// Starts `work` now; its answer is written after the answers of everything added before it.
    func add(_ work: @escaping @Sendable () async -> ByteBuffer?) async throws {
        if outstanding.load(ordering: .relaxed) >= Self.window { try await drain() }
        // Once the writer is gone (cancelled) or told to end, no answer would be written.
        let number: Int? = state.withLock { state in
            if state.cancelled || state.finished { return nil }
            state.entries.append(.running)
            return state.first + state.entries.count - 1
        }
        guard let number else { return }
        outstanding.wrappingAdd(1, ordering: .relaxed)
        activity.busy(true)
        Task { self.answered(number, await work()) }
    }

    /// Returns once every answer added so far has been written.
    func drain() async throws {
        guard outstanding.load(ordering: .relaxed) > 0 else { return }
        await withCheckedContinuation { (marker: CheckedContinuation<Void, Never>) in
            let (gone, writer) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                // A cancelled writer is gone, and one told to end may be: nobody would resume this.
                if state.cancelled || state.finished { return (true, nil) }
                state.entries.append(.marker(marker))
                return (false, state.wakeWriterIfItMayGo())
            }
            if gone { marker.resume() }
            writer?.resume()
        }
    }

    /// No more answers: `write(to:)` ends after the ones added.
    func finish() {
        state.withLock { state in
            state.finished = true
            return state.wakeWriterIfItMayGo()
        }?.resume()
    }

    /// How many answers wait to be written, and how many readers wait in `drain` (for tests).
    var waiting: (answers: Int, readers: Int) {
        state.withLock { state in
            state.entries.reduce(into: (0, 0)) { counts, entry in
                switch entry {
                case .running: break
                case .answered: counts.0 += 1
                case .marker: counts.1 += 1
                }
            }
        }
    }

    private func answered(_ number: Int, _ answer: ByteBuffer?) {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            // Once the writer is cancelled, its entries are gone and answers have nowhere to go.
            let index = number - state.first
            guard !state.cancelled, state.entries.indices.contains(index) else { return nil }
            state.entries[index] = .answered(answer)
            return state.wakeWriterIfItMayGo()
        }?.resume()
    }

    /// Writes the answers in order until `finish()`, each run of ready answers with one call of
    /// `send`. Once `send` fails (the connection broke), the remaining answers are dropped, and
    /// waiting readers are still let go. When its task is cancelled, it lets them go and ends.
    func write(to send: ([ByteBuffer]) async throws -> Void) async {
        var broken = false
        while true {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (writer: CheckedContinuation<Void, Never>) in
                    let goes = state.withLock { state in
                        if state.writerMayGo { return true }
                        state.writer = writer
                        return false
                    }
                    if goes { writer.resume() }
                }
            } onCancel: {
                state.withLock { state in
                    state.cancelled = true
                    return state.wakeWriterIfItMayGo()
                }?.resume()
            }
            // The ready entries at the front, in order; the running ones stay. Once cancelled,
            // only the markers matter.
            let (ready, cancelled): ([Entry], Bool) = state.withLock { state in
                if state.cancelled {
                    defer {
                        state.first += state.entries.count
                        state.entries.removeAll()
                    }
                    return (state.entries, true)
                }
                let count = state.entries.firstIndex { if case .running = $0 { return true } else { return false } } ?? state.entries.count
                defer {
                    state.entries.removeFirst(count)
                    state.first += count
                }
                return (Array(state.entries.prefix(count)), false)
            }
            if cancelled {
                for case .marker(let waiting) in ready { waiting.resume() }
                return
            }
            if ready.isEmpty { return }  // finished, and every answer written
            var batch: [ByteBuffer] = []
            var answers = 0
            for entry in ready {
                switch entry {
                case .running:
                    break
                case .answered(let answer):
                    if let answer { batch.append(answer) }
                    answers += 1
                case .marker(let waiting):
                    await flush(&batch, &answers, broken: &broken, send)
                    waiting.resume()
                }
            }
            await flush(&batch, &answers, broken: &broken, send)
        }
    }

    /// Sends `batch` (unless the connection broke) and counts its `answers` as written.
    private func flush(
        _ batch: inout [ByteBuffer], _ answers: inout Int, broken: inout Bool, _ send: ([ByteBuffer]) async throws -> Void
    ) async {
        if !batch.isEmpty, !broken {
            do { try await send(batch) } catch { broken = true }
        }
        batch.removeAll(keepingCapacity: true)
        if answers > 0, outstanding.wrappingSubtract(answers, ordering: .relaxed).newValue == 0 { activity.busy(false) }
        answers = 0
    }
}
