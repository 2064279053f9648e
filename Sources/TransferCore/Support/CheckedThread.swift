#if canImport(Glibc)
import Glibc
#endif

/// A detached thread whose start is checked: Foundation's `Thread.start()` does not report a
/// refused `pthread_create` (out of threads or memory, or a unit's `TasksMax`), and work waiting
/// for such a thread would wait for ever.
package enum CheckedThread {
    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread; false (and `body` not run) when the system refuses one.
    /// `stackBytes`, when given, sets the thread's stack size instead of the system's default.
    package static func start(stackBytes: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
        withUnsafeTemporaryAllocation(of: pthread_attr_t.self, capacity: 1) { buffer in
            guard let attributes = buffer.baseAddress, pthread_attr_init(attributes) == 0 else { return false }
            defer { pthread_attr_destroy(attributes) }
            if let stackBytes, pthread_attr_setstacksize(attributes, stackBytes) != 0 { return false }
            return start(attributes, body)
        }
    }

    private static func start(_ attributes: UnsafePointer<pthread_attr_t>, _ body: @escaping () -> Void) -> Bool {
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, attributes,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Work>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, work)
        guard started == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
