#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TransferProtocol

/// What to tell a user whom a socket's permissions keep out, from the socket's owner, group and mode.
enum SocketAccess {
    static func deniedMessage(path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return "permission denied on \(path): ask its owner or an administrator for access"
        }
        let groupMayConnect = info.st_mode & 0o060 == 0o060
        if groupMayConnect, let group = groupName(info.st_gid) {
            return "permission denied on \(path): you are not in the \(group) group "
                + "(ask an administrator: usermod -aG \(group) $USER, then log in again)"
        }
        let owner = userName(info.st_uid) ?? "uid \(info.st_uid)"
        return "permission denied on \(path): only \(owner) may use this daemon; start your own with `transferd` "
            + "or `systemctl --user start transferd`"
    }

    private static func groupName(_ gid: gid_t) -> String? {
        guard let entry = getgrgid(gid), let name = entry.pointee.gr_name else { return nil }
        return String(cString: name)
    }

    private static func userName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}

extension ControlClientError {
    var isPermissionDenied: Bool {
        if case .permissionDenied = self { return true }
        return false
    }
}
