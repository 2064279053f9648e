#if canImport(Glibc)
import Glibc
#endif

/// A user as the kernel judges file access: the uid and every group. The system service writes on
/// users' behalf, so it checks that they could have written there themselves.
///
/// The check reads owner, group and mode bits only: ACLs and capabilities are not considered,
/// and the groups are those of the user's account, not of the submitting process.
struct UserAccess: Sendable, Equatable {
    let uid: UInt32
    let groups: Set<UInt32>

    init(uid: UInt32, groups: Set<UInt32>) {
        self.uid = uid
        self.groups = groups
    }

    /// The groups of `uid`'s account (`getgrouplist` for its user name) and `gid`, the group the
    /// submitting process ran with; without `gid`, the account's primary group.
    static func lookUp(uid: UInt32, gid: UInt32?) -> UserAccess {
        guard let account = UserAccount(uid: uid) else {
            return UserAccess(uid: uid, groups: gid.map { [$0] } ?? [])
        }
        let primary = gid ?? account.gid
        var groups: Set<UInt32> = [primary, account.gid]
        var count: Int32 = 64
        while true {
            var list = [gid_t](repeating: 0, count: Int(count))
            let found = getgrouplist(account.name, primary, &list, &count)
            if found >= 0 {
                groups.formUnion(list.prefix(Int(count)))
                break
            }
            // Too small: `count` now holds the number needed.
            guard count > list.count, count <= 65536 else { break }
        }
        return UserAccess(uid: uid, groups: groups)
    }

    /// The permission bits (`r`, `w`, `x` as 4, 2, 1) that apply to this user for a file with
    /// `info`'s owner, group and mode: the owner's, else the group's, else everyone else's.
    func bits(_ info: stat) -> mode_t {
        if info.st_uid == uid { return (info.st_mode >> 6) & 7 }
        if groups.contains(info.st_gid) { return (info.st_mode >> 3) & 7 }
        return info.st_mode & 7
    }

    /// Whether this user may pass through a directory.
    func maySearch(_ directory: stat) -> Bool { bits(directory) & 1 != 0 }

    /// Whether this user may create and remove entries in a directory.
    func mayWrite(_ directory: stat) -> Bool { bits(directory) & 3 == 3 }

    /// Whether this user may replace `existing` in `directory`: in a sticky directory (such as
    /// /tmp) only the file's owner or the directory's may.
    func mayReplace(_ existing: stat, in directory: stat) -> Bool {
        guard directory.st_mode & S_ISVTX != 0 else { return true }
        return existing.st_uid == uid || directory.st_uid == uid
    }

    /// "user alice (uid 1000)", for messages.
    var name: String {
        guard let account = UserAccount(uid: uid) else { return "uid \(uid)" }
        return "user \(account.name) (uid \(uid))"
    }

    /// Owner, group and mode of a file, for messages: "owner 0, group 0, mode 0755".
    static func describe(_ info: stat) -> String {
        "owner \(info.st_uid), group \(info.st_gid), mode 0\(String(info.st_mode & 0o7777, radix: 8))"
    }
}

/// A user account from the system's user database.
struct UserAccount: Sendable {
    let name: String
    let gid: UInt32

    init?(uid: UInt32) {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var size = max(Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))), 1024)
        while size <= 1 << 20 {
            var buffer = [CChar](repeating: 0, count: size)
            // The entry's strings point into the buffer: read them while it is pinned.
            let found: (name: String, gid: UInt32)?? = buffer.withUnsafeMutableBufferPointer { storage in
                guard let base = storage.baseAddress else { return nil }
                let code = getpwuid_r(uid, &entry, base, storage.count, &result)
                if code == ERANGE { return .some(nil) }
                guard code == 0, result != nil, let name = entry.pw_name else { return nil }
                return (String(cString: name), entry.pw_gid)
            }
            switch found {
            case .none:
                return nil
            case .some(.none):
                size *= 4
            case .some(.some(let account)):
                self.name = account.name
                self.gid = account.gid
                return
            }
        }
        return nil
    }
}
