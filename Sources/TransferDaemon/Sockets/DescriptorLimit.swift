import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's open-file limit. systemd starts services with a soft `RLIMIT_NOFILE` of 1,024 and
/// a hard one of 524,288, and expects a program that needs more to raise the soft limit itself.
/// transferd does, at start: its connections, transfers and journal all hold descriptors, and
/// running out is not survivable (libdispatch stops the process when its pool monitor cannot open
/// `/proc`, and a failed accept turns clients away).
enum DescriptorLimit {
    /// Raises the soft limit to the hard one; logs at debug what it did, and why not when it could
    /// not (a seccomp filter without `setrlimit`: the unit's `LimitNOFILE=` applies then).
    /// Returns the soft limit in force afterwards.
    @discardableResult
    static func raise(logger: Logger) -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return UInt64.max }
        guard limit.rlim_cur < limit.rlim_max else {
            logger.debug("open-file limit", metadata: ["soft": "\(limit.rlim_cur)", "hard": "\(limit.rlim_max)"])
            return UInt64(limit.rlim_cur)
        }
        let before = limit.rlim_cur
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 {
            logger.debug("raised the open-file limit to the hard limit", metadata: ["from": "\(before)", "to": "\(raised.rlim_cur)"])
            return UInt64(raised.rlim_cur)
        }
        logger.debug(
            "cannot raise the open-file limit", metadata: ["soft": "\(before)", "hard": "\(limit.rlim_max)", "error": "\(String(cString: strerror(errno)))"])
        return UInt64(before)
    }

    /// Descriptors the daemon may need beyond its listeners' connections: the journal, the
    /// listening sockets, transfers (each a connection and a file, more with segments), hooks.
    static let headroom = 256

    /// Warns when the listeners' limits together come near the open-file limit `soft`: then a
    /// flood of connections could still exhaust the descriptors the daemon needs for its work.
    static func check(_ soft: UInt64, configuration: DaemonConfiguration, logger: Logger) {
        let needed = configuration.maxConnections + configuration.metricsMaxConnections + UploadHandoffServer.maxOpenHandoffs
            + configuration.maxConcurrentTransfers * 2 * 16 + headroom
        guard soft < UInt64(needed) else { return }
        logger.warning(
            "the open-file limit is low for the configured connection limits: raise LimitNOFILE= in the unit (or ulimit -n), or lower max_connections",
            metadata: ["open_files_limit": "\(soft)", "needed": "\(needed)"])
    }
}
