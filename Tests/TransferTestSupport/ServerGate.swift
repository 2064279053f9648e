import Synchronization

/// A gate a test opens to let a held response go on (see ``Behaviour/holdAfter(bytes:until:)``):
/// the test decides when, instead of racing a timer.
public final class ServerGate: Sendable {
    private let opened = Atomic<Bool>(false)

    public init() {}

    /// Lets every response held at this gate continue.
    public func open() {
        opened.store(true, ordering: .releasing)
    }

    public var isOpen: Bool { opened.load(ordering: .acquiring) }
}
