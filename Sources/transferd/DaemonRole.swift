import TransferProtocol

/// Whether this daemon is the system service or a user's own daemon, which decides defaults
/// that protect other users (`local_addresses: "auto"`).
enum DaemonRole: Sendable, Equatable {
    /// Root, a system account (as the `transferd` user of the system unit is), or the system's
    /// state directory: users other than the daemon's own may submit to it.
    case systemService
    /// Run by a user for themself: it may fetch only what that user could fetch anyway.
    case user

    /// Below this uid, accounts are system accounts (Debian's and Fedora's `SYS_UID_MAX` is 999).
    static let firstUserUID: UInt32 = 1000

    static func detect(uid: UInt32, stateDirectory: String) -> DaemonRole {
        if uid < firstUserUID || uid == 65534 { return .systemService }
        if stateDirectory == DefaultPaths.systemStateDirectory || stateDirectory.hasPrefix(DefaultPaths.systemStateDirectory + "/") {
            return .systemService
        }
        return .user
    }
}
