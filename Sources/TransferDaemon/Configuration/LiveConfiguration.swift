import Synchronization

/// The configuration in effect, for the parts that read it while running; a reload replaces it.
final class LiveConfiguration: Sendable {
    private let value: Mutex<DaemonConfiguration>

    init(_ configuration: DaemonConfiguration) {
        value = Mutex(configuration)
    }

    var current: DaemonConfiguration { value.withLock { $0 } }

    func replace(with configuration: DaemonConfiguration) {
        value.withLock { $0 = configuration }
    }
}
