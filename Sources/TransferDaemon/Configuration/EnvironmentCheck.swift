import TransferProtocol

/// The `TRANSFERD_*` environment variables the daemon reads. Any other is refused at start, so
/// that a misspelt setting (`TRANSFERD_MAX_CONCURENT_TRANSFERS`) is not silently ignored.
package enum EnvironmentCheck {
    /// Paths and test knobs, besides one variable per configuration key.
    static let otherVariables = [
        "TRANSFERD_SOCKET", "TRANSFERD_STATE_DIR", "TRANSFERD_CONFIG",
        "TRANSFERD_TEST_WRITE_DELAY_USEC", "TRANSFERD_TEST_JOURNAL_STALL_FILE", "TRANSFERD_TEST_COMPACTION_BYTES",
    ]

    /// Every variable the daemon reads; `hooks` comes from the file only.
    package static var knownVariables: [String] {
        otherVariables + DaemonConfiguration.keys.filter { $0 != "hooks" }.map { "TRANSFERD_" + $0.uppercased() }
    }

    /// Throws for the first unknown `TRANSFERD_*` variable, naming it, the closest known one when
    /// it looks like a typo of it, and the known ones.
    package static func check(_ environment: [String: String]) throws(ConfigurationError) {
        let known = knownVariables
        guard let unknown = environment.keys.filter({ $0.hasPrefix("TRANSFERD_") && !known.contains($0) }).sorted().first else { return }
        var message = "unknown environment variable \(unknown)"
        if let suggestion = closest(to: unknown, in: known) {
            message += ": did you mean \(suggestion)?"
        }
        message += " Unset it, or use one of: \(known.joined(separator: ", ")) (config/README.md says what each sets)"
        throw ConfigurationError(description: message)
    }

    /// The known name within a few edits of `name`, if one is.
    static func closest(to name: String, in candidates: [String]) -> String? {
        let limit = max(2, name.count / 6)
        return candidates.map { ($0, distance(name, $0)) }.filter { $0.1 <= limit }.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance.
    static func distance(_ a: String, _ b: String) -> Int {
        ParameterSuggestion.editDistance(Array(a.utf8), Array(b.utf8))
    }
}
