public import Foundation
public import TransferProtocol

/// Why a task did not complete: the daemon's error for its job, or why the library could not
/// hand the task over.
public struct TransferError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What kind of failure.
    public enum Code: Sendable, Hashable {
        /// The job failed; ``TransferError/jobCode`` holds the daemon's code (`http_status`,
        /// `tls`, `dns`, `timeout`, …).
        case failed
        /// The task was cancelled (as `NSURLErrorCancelled`).
        case cancelled
        /// The daemon refused the task when it was handed over (a destination outside its
        /// allowed roots, a bad URL, a limit).
        case refused
        /// The daemon could not be reached.
        case daemonUnavailable
    }

    public var code: Code
    /// The daemon's job error code, for ``Code/failed``.
    public var jobCode: JobErrorCode?
    /// The HTTP status the server answered, when that was the failure.
    public var httpStatus: Int?
    /// What happened and what to do, as the daemon or the library says it.
    public var message: String

    public init(code: Code, jobCode: JobErrorCode? = nil, httpStatus: Int? = nil, message: String) {
        self.code = code
        self.jobCode = jobCode
        self.httpStatus = httpStatus
        self.message = message
    }

    /// The error of a job that ended without completing.
    init(ending job: Job) {
        if job.state == .cancelled {
            self.init(code: .cancelled, message: "the task was cancelled")
        } else {
            self.init(
                code: .failed, jobCode: job.error?.code, httpStatus: job.error?.httpStatus,
                message: job.error?.message ?? "the transfer failed")
        }
    }

    init(_ error: ControlClientError) {
        switch error {
        case .rpc(let rpc): self.init(code: .refused, message: rpc.message)
        case .cannotConnect, .permissionDenied, .protocolViolation:
            self.init(code: .daemonUnavailable, message: "transferd cannot be reached: \(error); start it (transferd, or systemctl start transferd)")
        }
    }

    public var description: String { message }
    public var errorDescription: String? { message }
}
