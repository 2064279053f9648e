#if canImport(Glibc)
import Glibc
#endif

/// The user a download is for: who submitted it, from the connection's `SO_PEERCRED`.
///
/// A daemon that writes for other users (it runs as root, or its user is not the submitter's)
/// checks that the submitter may write where the file lands; a daemon running as root also gives
/// the files to the submitter.
public struct DownloadOwner: Sendable, Equatable {
    public var uid: UInt32
    /// The group the submitting process ran with; nil when unknown (the account's primary group
    /// is used).
    public var gid: UInt32?

    public init(uid: UInt32, gid: UInt32?) {
        self.uid = uid
        self.gid = gid
    }

    /// The daemon's effective uid, read once.
    static let daemonUID: UInt32 = geteuid()

    /// Whether the daemon writes on this user's behalf with rights the user may not have, and so
    /// must check the user's own access first. Root may write anywhere; a user's own daemon
    /// writes with exactly that user's rights.
    var needsAccessCheck: Bool { uid != 0 && (Self.daemonUID == 0 || uid != Self.daemonUID) }

    /// Whether the files are given to this user (the daemon runs as root, the user is not root).
    var receivesFiles: Bool { Self.daemonUID == 0 && uid != 0 }

    /// This user's access rights, when the daemon must check them.
    func accessToCheck() -> UserAccess? {
        needsAccessCheck ? UserAccess.lookUp(uid: uid, gid: gid) : nil
    }
}
