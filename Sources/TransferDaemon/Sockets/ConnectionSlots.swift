import Synchronization

/// The connections a listener serves: a limit for everyone together and, where the kernel names
/// the peer (`SO_PEERCRED` on a Unix socket), one per user. Decisions only, so that they are tested
/// without sockets; `SharedConnectionSlots` shares them between threads.
struct ConnectionSlots: Sendable, Equatable {
    enum Decision: Equatable, Sendable {
        case admitted
        /// Everyone together already holds `limit` connections.
        case full(limit: Int)
        /// This user already holds `limit` connections.
        case userFull(limit: Int)
    }

    private(set) var total = 0
    private var byUser: [UInt32: Int] = [:]

    /// Takes a slot for `user` (nil: the peer is not known, as on TCP) when neither `limit` nor
    /// `perUser` is reached; a refused connection takes nothing.
    mutating func admit(user: UInt32?, limit: Int, perUser: Int? = nil) -> Decision {
        if let user, let perUser, byUser[user, default: 0] >= perUser { return .userFull(limit: perUser) }
        guard total < limit else { return .full(limit: limit) }
        total += 1
        if let user { byUser[user, default: 0] += 1 }
        return .admitted
    }

    /// Gives back the slot an admitted connection of `user` held.
    mutating func release(user: UInt32?) {
        total = max(0, total - 1)
        guard let user, let count = byUser[user] else { return }
        byUser[user] = count > 1 ? count - 1 : nil
    }

    /// Connections `user` holds.
    func held(by user: UInt32) -> Int { byUser[user, default: 0] }
}

/// `ConnectionSlots` behind a lock, for the event loops or threads that accept connections and
/// the ones that close them.
final class SharedConnectionSlots: Sendable {
    private let slots = Mutex(ConnectionSlots())

    func admit(user: UInt32?, limit: Int, perUser: Int? = nil) -> ConnectionSlots.Decision {
        slots.withLock { $0.admit(user: user, limit: limit, perUser: perUser) }
    }

    func release(user: UInt32?) {
        slots.withLock { $0.release(user: user) }
    }

    var total: Int { slots.withLock { $0.total } }
}
