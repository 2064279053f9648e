/// A control socket transferctl may connect to, and where its path came from.
struct SocketCandidate: Sendable, Equatable {
    /// Where a socket path came from.
    enum Origin: Sendable, Equatable {
        case flag
        case environment
        case `default`
    }

    var path: String
    var origin: Origin

    /// The path, with its origin when a user chose it.
    var described: String {
        switch origin {
        case .flag: return "\(path) (from --socket)"
        case .environment: return "\(path) (from TRANSFERD_SOCKET)"
        case .default: return path
        }
    }
}
