import CSystemd
import Foundation

/// Tells systemd about the daemon's state through `sd_notify`; does nothing outside systemd.
enum SystemdNotifier {
    static func ready(status: String) {
        notify("READY=1\nSTATUS=\(status)")
    }

    static func status(_ status: String) {
        notify("STATUS=\(status)")
    }

    static func stopping() {
        notify("STOPPING=1\nSTATUS=stopping: checkpointing running transfers")
    }

    private static func notify(_ message: String) {
        _ = sd_notify(0, message)
    }
}
