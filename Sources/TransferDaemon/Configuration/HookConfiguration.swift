import Foundation
import TransferProtocol

/// A command the administrator wants run when a job of a session ends: one entry of `hooks` in
/// the configuration file, keyed by a name of its own.
package struct HookConfiguration: Sendable, Equatable, CustomStringConvertible {
    var name: String
    /// The session whose jobs trigger the hook.
    var session: String
    /// The program and its arguments; run directly, not through a shell.
    var command: [String]
    /// The end states that trigger it.
    var on: Set<JobState> = [.completed, .failed]
    /// Only jobs of this user, when set.
    var uid: UInt32?
    /// A run that takes longer is killed and counts as failed.
    var timeoutSeconds: Double = 600
    /// The wait after the first failed run; each further failure doubles it, up to the maximum.
    var retryInitialDelaySeconds: Double = 1
    var retryMaxDelaySeconds: Double = 3600

    static let fields: Set<String> = ["session", "command", "on", "uid", "timeout_seconds", "retry_initial_delay_seconds", "retry_max_delay_seconds"]

    package var description: String { "\(name): \(session) \(command) \(on.map(\.rawValue).sorted()) \(uid.map(String.init) ?? "any") \(timeoutSeconds) \(retryInitialDelaySeconds) \(retryMaxDelaySeconds)" }

    /// Whether the hook runs for a job that ended as `job` shows.
    func matches(_ job: Job) -> Bool {
        job.session == session && on.contains(job.state) && (uid.map { $0 == job.owner } ?? true)
    }

    /// Reads the `hooks` object of the configuration file (nil when absent).
    static func parse(_ value: Any?, file: String) throws -> [HookConfiguration] {
        guard let value else { return [] }
        let entries = try NamedEntry.parse(
            value, key: "hooks", file: file,
            shape: "an object of named hooks, e.g. "
                + #""hooks": {"backup-done": {"session": "backup.nightly", "command": ["/usr/local/bin/backup-done"]}}"#,
            entryShape: "must be an object with session and command", fields: fields)
        return try entries.map { item in
            let (name, entry, problem) = (item.name, item.fields, item.problem)
            guard let session = entry["session"] as? String, !session.isEmpty else {
                throw problem("session must be the name of a session, e.g. \"backup.nightly\"")
            }
            guard let command = entry["command"] as? [String], let program = command.first, program.hasPrefix("/") else {
                throw problem("command must be an array whose first element is the absolute path of a program, e.g. [\"/usr/local/bin/backup-done\", \"--quiet\"]")
            }
            var hook = HookConfiguration(name: name, session: session, command: command)
            guard FileManager.default.isExecutableFile(atPath: program) else {
                throw problem("\(program) is not an executable file: install it, or fix the path")
            }
            if let states = entry["on"] {
                guard let names = states as? [String], !names.isEmpty else { throw problem("on must be a non-empty array of completed, failed, cancelled") }
                hook.on = Set(try names.map { text in
                    guard let state = JobState(rawValue: text), state.isTerminal else {
                        throw problem("on holds '\(text)': use completed, failed or cancelled")
                    }
                    return state
                })
            }
            if let uid = entry["uid"] {
                guard let number = uid as? NSNumber, let value = UInt32(exactly: number.doubleValue) else {
                    throw problem("uid must be a user id (a non-negative integer)")
                }
                hook.uid = value
            }
            func seconds(_ field: String, _ fallback: Double) throws -> Double {
                guard let raw = entry[field] else { return fallback }
                guard let number = raw as? NSNumber, number.doubleValue > 0, number.doubleValue.isFinite else {
                    throw problem("\(field) must be a positive number of seconds")
                }
                return number.doubleValue
            }
            hook.timeoutSeconds = try seconds("timeout_seconds", hook.timeoutSeconds)
            hook.retryInitialDelaySeconds = try seconds("retry_initial_delay_seconds", hook.retryInitialDelaySeconds)
            hook.retryMaxDelaySeconds = max(hook.retryInitialDelaySeconds, try seconds("retry_max_delay_seconds", hook.retryMaxDelaySeconds))
            return hook
        }
    }
}
