import ArgumentParser
import TransferProtocol

/// Checks a session name before it is sent, with the daemon's rule.
enum SessionName {
    static func validate(_ name: String) throws(ValidationError) {
        let allowed = name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || ".-_".unicodeScalars.contains(scalar))
        }
        guard allowed, (1...Limits.maxJobIDLength).contains(name.utf8.count), name != ".", name != ".." else {
            throw ValidationError("--session must be 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -, e.g. backup.nightly")
        }
    }
}
