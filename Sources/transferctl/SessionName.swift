import ArgumentParser
import TransferProtocol

/// Checks a session name before it is sent, with the daemon's rule.
enum SessionName {
    static func validate(_ name: String) throws(ValidationError) {
        guard Limits.isValidName(name) else {
            throw ValidationError("--session must be 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -, e.g. backup.nightly")
        }
    }
}
