import Foundation

/// Waits for a condition to hold, checking often, and fails after `seconds`.
struct DeadlineExceeded: Error, CustomStringConvertible {
    var description: String
}

func waitUntil(
    _ what: String, seconds: Double = 60, interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while true {
        if try await condition() { return }
        if ContinuousClock.now > deadline { throw DeadlineExceeded(description: "timed out after \(seconds)s waiting for \(what)") }
        try await Task.sleep(for: interval)
    }
}
