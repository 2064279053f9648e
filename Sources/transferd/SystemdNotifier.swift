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

    /// Tells systemd's watchdog that the daemon is healthy.
    static func watchdog() {
        notify("WATCHDOG=1")
    }

    /// systemd's watchdog interval (`WATCHDOG_USEC`) when it expects pings from this process
    /// (`WATCHDOG_PID` unset or ours), else nil.
    static func watchdogInterval() -> Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(clamping: usec))
    }

    private static func notify(_ message: String) {
        _ = sd_notify(0, message)
    }
}
