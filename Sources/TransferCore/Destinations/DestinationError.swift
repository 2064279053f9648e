/// Why a destination may not be used: the rule it breaks and the fix, in one message.
struct DestinationError: Error, Sendable, CustomStringConvertible {
    /// The rule broken, for tests and for choosing an error code.
    enum Rule: Sendable, Equatable {
        /// Not absolute, a NUL byte, too long, `.` or `..`, or no file name.
        case form
        case outsideRoots
        /// A symbolic link between the root and the destination, or at the destination.
        case symbolicLink
        /// A directory on the way does not exist.
        case missing
        /// A component on the way is not a directory, or the destination is not a regular file.
        case notDirectory
        /// The submitting user may not enter or write the directory, or replace the file.
        case userPermission
        /// A partial file at the partial file's name that transferd did not create.
        case foreignFile
        /// A system call failed for another reason (the daemon's own permissions, I/O).
        case system(errno: Int32)
    }

    var rule: Rule
    var message: String

    init(_ rule: Rule, _ message: String) {
        self.rule = rule
        self.message = message
    }

    var description: String { message }
}
