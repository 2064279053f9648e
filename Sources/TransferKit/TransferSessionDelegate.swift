public import Foundation

/// What a ``TransferSession`` tells its delegate, on the session's delegate queue: the
/// counterpart of `URLSessionDownloadDelegate` and `URLSessionTaskDelegate`. Every method has a
/// default that does nothing.
///
/// A session created without a delegate takes only the ends of the tasks it awaits itself (the
/// async API, ``TransferOperation``); the others stay with the daemon until a session with a
/// delegate and the same identifier comes.
public protocol TransferSessionDelegate: AnyObject, Sendable {
    /// A download finished and its file is at `location`. For a task created without a
    /// destination, move or open the file before returning: it is deleted afterwards, as on iOS.
    func transferSession(_ session: TransferSession, downloadTask: TransferDownloadTask, didFinishDownloadingTo location: URL)
    /// A task ended: `error` is `nil` when it completed, else a ``TransferError``. Its end is
    /// acknowledged to the daemon once this method returns; a process that dies first gets it
    /// again from its next session with the same identifier.
    func transferSession(_ session: TransferSession, task: TransferTask, didCompleteWithError error: (any Error)?)
    /// Bytes of a download arrived (at most about once a second per task).
    func transferSession(
        _ session: TransferSession, downloadTask: TransferDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64)
    /// Bytes of an upload went out (at most about once a second per task).
    func transferSession(
        _ session: TransferSession, task: TransferTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64)
    /// Every end that happened while no process listened has been delivered.
    func transferSessionDidFinishEvents(forBackgroundSession session: TransferSession)
}

extension TransferSessionDelegate {
    public func transferSession(_ session: TransferSession, downloadTask: TransferDownloadTask, didFinishDownloadingTo location: URL) {}
    public func transferSession(_ session: TransferSession, task: TransferTask, didCompleteWithError error: (any Error)?) {}
    public func transferSession(
        _ session: TransferSession, downloadTask: TransferDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {}
    public func transferSession(
        _ session: TransferSession, task: TransferTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {}
    public func transferSessionDidFinishEvents(forBackgroundSession session: TransferSession) {}
}

/// The delegate of one task of the async API (`download(from:delegate:)`): its progress only.
public protocol TransferSessionTaskDelegate: AnyObject, Sendable {
    /// Bytes of the download arrived.
    func transferSession(
        _ session: TransferSession, downloadTask: TransferDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64)
    /// Bytes of the upload went out.
    func transferSession(
        _ session: TransferSession, task: TransferTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64)
}

extension TransferSessionTaskDelegate {
    public func transferSession(
        _ session: TransferSession, downloadTask: TransferDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {}
    public func transferSession(
        _ session: TransferSession, task: TransferTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {}
}
