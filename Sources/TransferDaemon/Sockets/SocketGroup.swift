#if canImport(Glibc)
package import Glibc
#endif

/// The group `socket_group` names, for the socket file the daemon creates.
enum SocketGroup {
    /// The gid `text` names: empty is the daemon's own (effective) group, digits are a gid, else
    /// a group name looked up in the system's group database. Nil when there is no such group.
    static func id(_ text: String) -> gid_t? {
        if text.isEmpty { return getegid() }
        if text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // (gid_t)-1 means "leave the group alone" to chown: not a group.
            guard let gid = gid_t(text), gid != gid_t.max else { return nil }
            return gid
        }
        var entry = group()
        var found: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        while true {
            let status = getgrnam_r(text, &entry, &buffer, buffer.count, &found)
            if status == ERANGE, buffer.count < 1 << 20 {
                buffer = [CChar](repeating: 0, count: buffer.count * 4)
                continue
            }
            guard status == 0, found != nil else { return nil }
            return entry.gr_gid
        }
    }

    /// Gives the socket file at `path` to `gid`; nil on success, else what went wrong and the fix.
    static func apply(_ gid: gid_t, to path: String, named: String) -> String? {
        guard chown(path, uid_t.max, gid) != 0 else { return nil }
        let reason = String(cString: strerror(errno))
        let which = named.isEmpty ? "the daemon's own group \(gid)" : "group \(named) (socket_group)"
        return "cannot give the socket \(path) to \(which): \(reason); the daemon's user must be a member of that group "
            + "(or the daemon must run as root), or choose another socket_group"
    }
}

extension DaemonConfiguration {
    /// The gid `socket_group` names; nil when the group has disappeared since the value was checked.
    package var socketGroupID: gid_t? { SocketGroup.id(socketGroup) }
}
