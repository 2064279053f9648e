import Synchronization

/// Waits for `task` for at most `limit` and returns its result, or nil when the time is up or, unless
/// `evenIfCancelled`, the caller is cancelled first. The task keeps running either way: something
/// that hangs (a disk, a stuck transfer) must not hold the caller past its own deadline.
func waitForResult<Success: Sendable, Failure: Error>(
    of task: Task<Success, Failure>, within limit: Duration, evenIfCancelled: Bool = false
) async -> Result<Success, Failure>? {
    let outcome = ResumeOnce<Result<Success, Failure>?>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            outcome.set(continuation)
            let timer = Task {
                // Cancelled: the result came first. Resuming with nil then would race the result
                // and could report a timeout that never happened.
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                outcome.resume(with: nil)
            }
            Task {
                let result = await task.result
                outcome.resume(with: result)
                timer.cancel()
            }
        }
    } onCancel: {
        if !evenIfCancelled { outcome.resume(with: nil) }
    }
}

/// Resumes a continuation with the first value it is given, whether that value comes before or
/// after the continuation is stored; later values are dropped.
private final class ResumeOnce<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, Never>)
        case arrivedFirst(Value)
        case done
    }

    private let state = Mutex(State.empty)

    /// Call once.
    func set(_ continuation: CheckedContinuation<Value, Never>) {
        // `Value` may itself be optional: `.none` here means "nothing arrived yet".
        let arrived: Value? = state.withLock { state in
            guard case .arrivedFirst(let value) = state else {
                state = .waiting(continuation)
                return .none
            }
            state = .done
            return .some(value)
        }
        if case .some(let value) = arrived { continuation.resume(returning: value) }
    }

    func resume(with value: Value) {
        let waiting: CheckedContinuation<Value, Never>? = state.withLock { state in
            switch state {
            case .empty:
                state = .arrivedFirst(value)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .arrivedFirst, .done:
                return nil
            }
        }
        waiting?.resume(returning: value)
    }
}
