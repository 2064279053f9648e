import ArgumentParser
import TransferProtocol

/// Shell completion of job ids: the ids of the caller's own jobs, as the daemon lists them.
///
/// The shell runs `transferctl ---completion COMMAND -- ARGUMENT …` on every Tab, so this asks the
/// daemon (at the `--socket` on the command line being completed, else where every command looks)
/// and answers at once; when no daemon answers, or it refuses, it offers nothing and says nothing.
enum JobIDCompletion {
    /// Which of the caller's jobs a command's ids may name.
    enum Jobs: Sendable {
        /// Every job (`status`).
        case any
        /// Jobs that have not ended (`cancel`, `pause`, `priority`, `move`, `wait`).
        case unfinished
        /// Paused jobs (`resume`).
        case paused
        /// Failed and cancelled jobs (`retry`).
        case failedOrCancelled
        /// Ended jobs (`remove`).
        case finished

        var query: TransferProtocol.Status.Params {
            switch self {
            case .any: return .init()
            case .unfinished: return .init(states: JobState.allCases.filter { !$0.isTerminal })
            case .paused: return .init(paused: true)
            case .failedOrCancelled: return .init(states: [.failed, .cancelled])
            case .finished: return .init(states: JobState.allCases.filter(\.isTerminal))
            }
        }
    }

    /// Ids offered at most: the newest jobs, so that a Tab stays instant with many jobs kept.
    static let limit = 500

    /// How long a Tab waits for the daemon.
    static let timeout: Duration = .seconds(2)

    /// The completion of an id argument naming `jobs`.
    static func kind(_ jobs: Jobs) -> CompletionKind {
        .custom { words, _, prefix in ids(jobs, words: words, prefix: prefix) }
    }

    /// The completion of an id argument that commands share: `jobs(command)` says which jobs the
    /// command being completed may name.
    static func kind(_ jobs: @escaping @Sendable (String?) -> Jobs) -> CompletionKind {
        .custom { words, _, prefix in ids(jobs(command(in: words)), words: words, prefix: prefix) }
    }

    /// The command of the command line being completed: its first word after the program and
    /// a leading `--socket PATH`.
    static func command(in words: [String]) -> String? {
        var rest = words.dropFirst()
        while let word = rest.first {
            if word == "--socket" {
                rest = rest.dropFirst(2)
            } else if word.hasPrefix("--socket=") {
                rest = rest.dropFirst()
            } else {
                return word
            }
        }
        return nil
    }

    /// The ids of the caller's `jobs` that start with `prefix`, newest first; none when no daemon
    /// answers.
    static func ids(_ jobs: Jobs, words: [String], prefix: String) -> [String] {
        var options = ClientOptions()
        options.socket = socket(in: words)
        for candidate in options.candidates() {
            guard (try? ClientOptions.ensureTrusted(candidate)) != nil,
                let client = try? ControlClient(socketPath: candidate.path, timeout: timeout)
            else { continue }
            defer { client.shutdown() }
            var query = jobs.query
            query.newestFirst = true
            query.limit = min(limit, TransferProtocol.Status.maxLimit)
            guard let answer = try? client.call(TransferProtocol.Status.self, query) else { return [] }
            return answer.jobs.map(\.id).filter { $0.hasPrefix(prefix) }
        }
        return []
    }

    /// The value of `--socket` in the command line being completed, if it has one.
    static func socket(in words: [String]) -> String? {
        var found: String?
        for (index, word) in words.enumerated() {
            if word == "--socket", index + 1 < words.count {
                found = words[index + 1]
            } else if word.hasPrefix("--socket=") {
                found = String(word.dropFirst("--socket=".count))
            }
        }
        return found.flatMap { $0.isEmpty ? nil : $0 }
    }
}
