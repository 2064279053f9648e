import NIOCore
import Synchronization

/// The answers to one connection's pipelined requests, written in the order the requests came
/// while the requests themselves run side by side.
///
/// The reader adds each request that may run concurrently (`add`), and waits with `drain` before
/// anything that must run alone. At most `window` answers are outstanding: past that the reader
/// waits, so a client that sends without reading holds a bounded amount of work.
final class PipelinedAnswers: Sendable {
    static let window = 256

    private enum Item: Sendable {
        case answer(Task<ByteBuffer?, Never>)
        /// Resumed once every answer before it is written (or the connection broke).
        case marker(CheckedContinuation<Void, Never>)
    }

    private let items: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation
    private let outstanding = Atomic<Int>(0)
    private let activity: ConnectionActivity

    init(activity: ConnectionActivity) {
        (items, continuation) = AsyncStream.makeStream(of: Item.self)
        self.activity = activity
    }

    /// Starts `work` now; its answer is written after the answers of everything added before it.
    func add(_ work: @escaping @Sendable () async -> ByteBuffer?) async throws {
        if outstanding.load(ordering: .relaxed) >= Self.window { try await drain() }
        outstanding.wrappingAdd(1, ordering: .relaxed)
        activity.busy(true)
        continuation.yield(.answer(Task { await work() }))
    }

    /// Returns once every answer added so far has been written.
    func drain() async throws {
        guard outstanding.load(ordering: .relaxed) > 0 else { return }
        await withCheckedContinuation { continuation.yield(.marker($0)) }
    }

    /// No more answers: `write(to:)` ends after the ones added.
    func finish() { continuation.finish() }

    /// Writes the answers in order until `finish()`. Once a write fails (the connection broke),
    /// the remaining answers are dropped, and waiting readers are still let go.
    func write(to outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
        var broken = false
        for await item in items {
            switch item {
            case .answer(let task):
                let answer = await task.value
                if let answer, !broken {
                    do { try await outbound.write(answer) } catch { broken = true }
                }
                if outstanding.wrappingSubtract(1, ordering: .relaxed).newValue == 0 { activity.busy(false) }
            case .marker(let waiting):
                waiting.resume()
            }
        }
    }
}
