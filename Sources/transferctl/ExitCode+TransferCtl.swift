import ArgumentParser

/// transferctl's exit codes, the contract scripts rely on.
extension ExitCode {
    /// The waited-for job failed or was cancelled.
    static let jobUnsuccessful = ExitCode(1)
    /// The command line is wrong.
    static let usageError = ExitCode(2)
    /// transferd cannot be reached, or the connection to it broke.
    static let daemonUnreachable = ExitCode(3)
    /// transferd answered the request with a JSON-RPC error.
    static let requestRefused = ExitCode(4)
}
