import CSystemd
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd about the daemon's state through `sd_notify`; does nothing outside systemd (no
/// `NOTIFY_SOCKET`). Each function sends one datagram.
enum SystemdNotifier {
    /// The journal is replayed and the control socket accepts connections, or a reload is over.
    static func ready(status: String) {
        notify("READY=1\nSTATUS=\(status)")
    }

    static func status(_ status: String) {
        notify("STATUS=\(status)")
    }

    /// A reload begins. systemd needs the monotonic time in the same message to tell this reload's
    /// READY=1 from an earlier one.
    static func reloading() {
        notify("RELOADING=1\nMONOTONIC_USEC=\(monotonicMicroseconds())\nSTATUS=reloading the configuration")
    }

    /// The stop begins and takes at most `bound`. The timeout is extended to that bound (plus a margin
    /// to flush the journal and exit): `EXTEND_TIMEOUT_USEC` never shortens the unit's
    /// `TimeoutStopSec=`, it only keeps systemd from killing a stop that was configured to take longer.
    static func stopping(within bound: Duration) {
        let extended = bound + .seconds(10)
        notify("STOPPING=1\nEXTEND_TIMEOUT_USEC=\(microseconds(extended))\nSTATUS=stopping: checkpointing running transfers")
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

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    private static func notify(_ message: String) {
        _ = sd_notify(0, message)
    }
}
