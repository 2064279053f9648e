/// Why the core refused a request, or could not complete it: the kind of problem, and a message
/// that names the cause and the fix. The daemon's request layer turns it into the wire's error
/// (`RPCError`); the core knows nothing of JSON-RPC codes.
public struct CoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of problem a client may need to tell apart. New kinds may be added.
    public enum Kind: Hashable, Sendable {
        /// A request parameter is malformed or out of its range; the associated value is its name
        /// in the request (`id`, `session`, `sha256`, `size`, `retry.max_attempts`, …).
        case invalidParameter(String)
        /// The URL is malformed, has no usable host, or its scheme is not http or https.
        case unsupportedURL
        /// A header name or value is not acceptable, or there are too many or too long headers.
        case invalidHeader
        /// The destination is not an absolute path to a file the caller may create inside an
        /// allowed root.
        case invalidDestination
        /// The destination exists and the request did not ask to overwrite it.
        case destinationExists
        /// Another unfinished job already writes to that destination.
        case destinationBusy
        /// The expected size does not fit in the destination filesystem's free space.
        case insufficientSpace
        /// The host rules refuse the URL's host or an address it resolves to.
        case hostNotAllowed
        /// No job with that id is visible to the caller.
        case noSuchJob
        /// The job has already finished (or is landing) and cannot be changed.
        case jobFinished
        /// A job with that client-chosen id exists with a different request.
        case idConflict
        /// The job has not ended, so it cannot be removed or retried.
        case jobNotFinished
        /// A job with that client-chosen id has ended; the submit did not ask to replace it.
        case jobExists
        /// The core is stopping and accepts no new work.
        case shuttingDown
        /// A configured limit was reached; the associated value is its configuration key
        /// (`max_jobs_per_user`).
        case limitReached(String)
        /// The request needs a privilege the caller does not have.
        case notPermitted
        /// The core could not complete the request (its journal failed, a record could not be
        /// encoded); nothing was acknowledged, and the request may be sent again.
        case internalFailure
    }

    public var kind: Kind
    /// The message, with the request parameters it names kept apart so that another layer can
    /// name them its own way (the daemon adds the command-line flag that sets one).
    public var explanation: CoreMessage

    /// The message, naming request parameters as the wire does.
    public var message: String { explanation.description }
    public var description: String { message }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.explanation = CoreMessage(message)
    }

    /// A message that names request parameters: `"… submit with \(parameter: .submitOverwrite) to replace it"`.
    public init(_ kind: Kind, _ explanation: CoreMessage) {
        self.kind = kind
        self.explanation = explanation
    }
}
